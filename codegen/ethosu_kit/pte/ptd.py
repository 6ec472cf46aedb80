"""Named external data (.ptd, ExecuTorch's flat tensor format) without torch or executorch.

Written by `executorch/extension/flat_tensor/serialize/serialize.py`, read on the device
by `extension/flat_tensor/flat_tensor_data_map.cpp` (and by the kit's own
`sdk/src/ptd.c`). The file is a flatbuffer (identifier "FT01", schema
`flat_tensor.fbs`: FlatTensor {version, segments: [DataSegment {offset, size}],
named_data: [NamedData {key, segment_index, tensor_layout}]}) with an extended header
at byte 8 ("FH01", u32 length, u64 flatbuffer offset and size, u64 segment base offset
and data size); a segment's bytes are at segment base + segment offset.

A pte lowered with `VelaExternalBlockPlacements` names its external Vela blocks by key
(the SHA-256 of `tag + "\\0" + payload`, 64 hex characters); ExecuTorch writes the
payloads of one tag to `<tag>.ptd`. `ExternalData` is the set of .ptd files given for a
pte: which file holds each key, where, and the bytes.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ethosu_kit.core.errors import PteError
from ethosu_kit.core.files import MAX_PTE, parse_json, read_bytes
from ethosu_kit.pte._flatbuffer import FbTable, Malformed

if TYPE_CHECKING:
    from ethosu_kit.pte.vela import VelaBlocks

FILE_IDENTIFIER = b"FT01"
HEADER_MAGIC = b"FH01"
_HEADER = struct.Struct("<4sIQQQQ")  # magic, length, fb offset, fb size, seg base, seg size
HEADER_OFFSET = 8
# the fields of flat_tensor.fbs (field ids)
_FT_SEGMENTS, _FT_NAMED = 1, 2
_SEG_OFFSET, _SEG_SIZE = 0, 1
_ND_KEY, _ND_SEGMENT = 0, 1
KEY_LENGTH = 64  # arm_vela.py: a SHA-256 hexdigest


@dataclass(frozen=True)
class PtdEntry:
    key: str
    offset: int  # of the data in the .ptd file
    size: int


@dataclass(frozen=True)
class PtdFile:
    """One .ptd: its tag (the file name without .ptd), bytes and entries by key."""

    path: str
    tag: str
    data: bytes
    entries: dict[str, PtdEntry]

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

    def payload(self, key: str) -> bytes:
        e = self.entries[key]
        return self.data[e.offset : e.offset + e.size]


def parse_ptd(data: bytes, path: str) -> PtdFile:
    """The entries of .ptd bytes; PteError naming `path` for anything malformed."""
    try:
        return PtdFile(path, ptd_tag(path), data, _entries(data))
    except (Malformed, IndexError, ValueError, struct.error) as exc:
        raise PteError(
            f"{path}: not a .ptd this kit reads ({exc})",
            hint="give the .ptd files ExecuTorch's write_tensor_data_to_file() wrote",
        ) from None


def ptd_tag(path: str) -> str:
    name = Path(path).name
    return name[: -len(".ptd")] if name.endswith(".ptd") else name


def _entries(data: bytes) -> dict[str, PtdEntry]:
    if len(data) < HEADER_OFFSET + _HEADER.size:
        raise Malformed(f"{len(data)} bytes, too short for a flat tensor file")
    if data[4:8] != FILE_IDENTIFIER:
        raise Malformed(f"file identifier {data[4:8]!r}, expected {FILE_IDENTIFIER!r}")
    magic, length, _fb_off, _fb_size, seg_base, seg_size = _HEADER.unpack_from(data, HEADER_OFFSET)
    if magic != HEADER_MAGIC or length < _HEADER.size:
        raise Malformed(f"extended header {magic!r} of {length} bytes, expected {HEADER_MAGIC!r}")
    if seg_base + seg_size > len(data):
        raise Malformed(
            f"segments of {seg_size} bytes at {seg_base} run past the {len(data)}-byte file"
        )
    (root,) = struct.unpack_from("<I", data, 0)
    table = FbTable(data, root, "FlatTensor")
    segments = []
    for seg in table.tables(_FT_SEGMENTS, "segments"):
        offset, size = seg.u64(_SEG_OFFSET), seg.u64(_SEG_SIZE)
        if offset + size > seg_size:
            raise Malformed(f"segment of {size} bytes at {offset} runs past the segment data")
        segments.append((seg_base + offset, size))
    out: dict[str, PtdEntry] = {}
    for nd in table.tables(_FT_NAMED, "named_data"):
        key = nd.string(_ND_KEY)
        index = nd.u32(_ND_SEGMENT)
        if not 0 <= index < len(segments):
            raise Malformed(f"key {key[:16]!r} names segment {index} of {len(segments)}")
        if key in out:
            raise Malformed(f"key {key[:16]!r} appears twice")
        out[key] = PtdEntry(key, *segments[index])
    return out


# the .pte's limit (a .ptd holds what the .pte would have), named so that a FIFO or a
# device given to --ptd is "not a .ptd", not "not a .pte"
MAX_PTD = replace(MAX_PTE, what="a .ptd")


def read_ptd(path: Path | str) -> PtdFile:
    return parse_ptd(read_bytes(path, MAX_PTD, PteError), str(path))


@dataclass(frozen=True)
class ExternalData:
    """The .ptd files given for one pte (in the order given; a key in two: the first)."""

    files: tuple[PtdFile, ...] = ()

    def find(self, key: str) -> PtdFile | None:
        """The .ptd that holds `key` (the first given), if any."""
        return next((f for f in self.files if key in f.entries), None)

    @property
    def tags(self) -> set[str]:
        return {f.tag for f in self.files}

    @property
    def names(self) -> str:
        return ", ".join(f.path for f in self.files) or "no .ptd file"

    def by_tag(self, tag: str) -> PtdFile:
        for f in self.files:
            if f.tag == tag:
                return f
        raise KeyError(tag)


def beside(pte: Path | str) -> list[Path]:
    """The .ptd files in the pte's folder (where ExecuTorch writes them), by name."""
    return sorted(p for p in Path(pte).resolve().parent.glob("*.ptd") if p.is_file())


def load_external(pte: Path | str, given: list[str] | None) -> ExternalData:
    """The .ptd files `--ptd` named, else the ones beside the pte that read as .ptd
    files; two with one tag are refused (the tag decides where a .ptd is placed)."""
    paths = [Path(p) for p in given] if given else beside(pte)
    files: list[PtdFile] = []
    for p in paths:
        try:
            f = read_ptd(p)
        except PteError:
            if given:
                raise
            continue  # not asked for: a stray file beside the pte is not this program's
        for other in files:
            if other.tag == f.tag:
                raise PteError(
                    f"{p}: a second .ptd with tag '{f.tag}' (first: {other.path})",
                    hint="give one .ptd per placement tag",
                )
        files.append(f)
    return ExternalData(tuple(files))


@dataclass(frozen=True)
class ExternalBlock:
    """One external Vela block of a delegate: its key, size, and the .ptd holding it."""

    method: str
    delegate_index: int
    block: str  # "cmd_data", "weight_data", …
    key: str
    size: int
    tag: str  # the .ptd's tag ("" when the pte's own named data holds it)
    offset: int  # of the data in that file


def external_blocks(streams: Sequence[VelaBlocks]) -> list[ExternalBlock]:
    """Every external block of every Ethos-U delegate, in stream order."""
    return [
        ExternalBlock(s.method, s.delegate_index, b.name, b.key, len(b.data), b.ptd, b.offset)
        for s in streams
        for b in s.blocks
        if b.external
    ]


def placement_tags(compile_specs: Sequence[tuple[str, bytes]]) -> list[str]:
    """The placement tags an Ethos-U delegate was lowered with (its compile spec
    `external_block_placements`, JSON {block: tag}); [] when it has none or it is unreadable."""
    for key, value in compile_specs:
        if key == "external_block_placements":
            try:
                table = parse_json(value.decode("utf-8"))  # bounded: the .pte is the user's
            except (UnicodeDecodeError, ValueError):
                return []
            if isinstance(table, dict):
                return [t for t in table.values() if isinstance(t, str)]
    return []


def hash_tag(key: str, payload: bytes, candidates: Sequence[str]) -> str:
    """The tag `key` was made with (arm_vela.py: SHA-256 of tag, NUL, payload), among
    `candidates`; "" when none (the firmware then checks the key's presence only)."""
    for tag in dict.fromkeys(candidates):
        if hashlib.sha256(tag.encode() + b"\0" + payload).hexdigest() == key:
            return tag
    return ""


def external_lines(blocks: Sequence[ExternalBlock], external: ExternalData) -> list[str]:
    """inspect's section: each external block, its key, size and the .ptd that holds it."""
    if not blocks:
        return []
    lines = [f"external data (VelaExternalBlockPlacements): {len(blocks)} block(s)\n"]
    for b in blocks:
        where = external.by_tag(b.tag).path if b.tag else "the .pte's own named data"
        lines.append(
            f"  {b.method} delegate {b.delegate_index} {b.block}: key {b.key}, "
            f"{b.size} B at {b.offset} of {where}\n"
        )
    for f in external.files:
        used = sum(1 for b in blocks if b.tag == f.tag)
        lines.append(
            f"  {f.path}: tag '{f.tag}', {len(f.data)} B, {len(f.entries)} key(s), "
            f"{used} used by this program\n"
        )
    return lines
