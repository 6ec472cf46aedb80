"""The Ethos-U delegate payload: Vela's block stream and the COP1 driver-action header.

Written by executorch `backends/arm/arm_vela.py`, read on the device by
`backends/arm/runtime/VelaBinStream.cpp`. Each block is a 32-byte header
(`char name[16]`, `u32 size`, `u8 external`, 11 reserved bytes) and `size` bytes of
data padded to 16. The stream runs from `vela_bin_stream` to `vela_end_stream`; the
kit needs `cmd_data`, `weight_data`, `scratch_size` (u32), `inputs` and `outputs`
(`i32 count`, then per tensor `i32 shape[6], elem_size, offset, region`). With
`external` set the data is a 64-character sha256 key into the program's named data.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property

from ethosu_kit.core.named import by_name
from ethosu_kit.pte._flatbuffer import Malformed
from ethosu_kit.pte.model import CopHeader, VelaStream, VelaTensor, vela_io_problems

STREAM_HEADER = "vela_bin_stream"
STREAM_FOOTER = "vela_end_stream"
REQUIRED_BLOCKS = ("cmd_data", "weight_data", "scratch_size", "inputs", "outputs")
_BLOCK = struct.Struct("<16sIB11s")
_NAME = re.compile(rb"[\x21-\x7e]{1,16}")  # printable ASCII, as arm_vela.py writes
_ALIGN = 16
_IO_RECORD = struct.Struct("<9i")
_COP1 = 0x31504F43  # "COP1" as a little-endian word
_DA_OPTIMIZER_CONFIG, _DA_COMMAND_STREAM, _DA_NOP = 1, 2, 5


@dataclass(frozen=True)
class VelaBlock:
    """One block of the stream; `data` is the payload (resolved if it was external)."""

    name: str
    size: int  # the size field as written (for an external block: the key's length)
    external: bool
    data: bytes
    # where `data` starts in the .pte file (-1: not known); not part of the block's identity:
    # the same payload may sit elsewhere in another layout of the same program
    offset: int = field(default=-1, compare=False)
    # an external block resolved from a .ptd: that file's tag, and `offset` is in it
    ptd: str = field(default="", compare=False)
    key: str = field(default="", compare=False)  # an external block's named-data key


@dataclass(frozen=True)
class VelaBlocks:
    """Raw access to one Ethos-U delegate's compiled payload (for the virtual NPU)."""

    method: str
    delegate_index: int  # index in the method's delegate table
    blocks: tuple[VelaBlock, ...]  # every block in stream order, header and footer included
    cmd_data: bytes  # COP1 header + register command stream
    weight_data: bytes  # region 0: weights, scales, LUTs
    scratch_size: int  # region 1 bytes
    inputs: tuple[VelaTensor, ...]
    outputs: tuple[VelaTensor, ...]
    cop: CopHeader
    # rank of each input/output as the program's tensor has it (the delegate call's
    # arguments); the Vela records are 6-D, padded with leading 1s. Empty: not known.
    input_ranks: tuple[int, ...] = field(default=(), compare=False)
    output_ranks: tuple[int, ...] = field(default=(), compare=False)

    @property
    def external(self) -> bool:
        return any(b.external for b in self.blocks)

    @property
    def command_stream(self) -> bytes:
        """The register command stream alone (after the driver actions)."""
        start = self.cop.command_offset
        return self.cmd_data[start : start + 4 * self.cop.command_words]

    def block(self, name: str) -> VelaBlock:
        """The first block called `name` (the required ones are always there)."""
        return by_name(self.blocks, name)

    @cached_property
    def io_problems(self) -> tuple[str, ...]:
        """`model_info.vela_io_problems` of this delegate's IO records (computed once:
        run_delegate checks them on every inference)."""
        return vela_io_problems(self.inputs, self.outputs, self.scratch_size)

    def to_stream(self) -> VelaStream:
        return VelaStream(
            cmd_bytes=len(self.cmd_data),
            weight_bytes=len(self.weight_data),
            scratch_size=self.scratch_size,
            inputs=self.inputs,
            outputs=self.outputs,
            cop=self.cop,
            external=self.external,
        )


def split_blocks(blob: bytes, what: str) -> list[tuple[str, int, bool, bytes, int]]:
    """(name, size, external, raw data, its offset in `blob`) per block, header to footer."""
    out: list[tuple[str, int, bool, bytes, int]] = []
    pos = 0
    while True:
        if pos + _BLOCK.size > len(blob):
            if not out:
                raise Malformed(f"{what}: {len(blob)} bytes, too short for a Vela block stream")
            raise Malformed(f"{what}: Vela block stream ends without '{STREAM_FOOTER}'")
        raw_name, size, external, _ = _BLOCK.unpack_from(blob, pos)
        name_bytes = raw_name.split(b"\0", 1)[0]
        if not _NAME.fullmatch(name_bytes):
            raise Malformed(f"{what}: Vela block at byte {pos} has a corrupt name {raw_name!r}")
        name = name_bytes.decode("ascii")
        if not out and name != STREAM_HEADER:
            raise Malformed(f"{what}: not a Vela block stream (first block '{name}')")
        if external > 1:
            raise Malformed(f"{what}: Vela block '{name}' has external flag {external}")
        start = pos + _BLOCK.size
        if start + size > len(blob):
            raise Malformed(
                f"{what}: Vela block '{name}' of {size} bytes runs past the "
                f"{len(blob)}-byte payload"
            )
        out.append((name, size, bool(external), blob[start : start + size], start))
        if name == STREAM_FOOTER:
            return out
        pos = start + (size + _ALIGN - 1) // _ALIGN * _ALIGN


def parse_cop_header(cmd: bytes, what: str) -> CopHeader:
    """Walk the driver actions the way the Ethos-U driver does, up to COMMAND_STREAM."""
    if len(cmd) < 8 or len(cmd) % 4:
        raise Malformed(f"{what}: cmd_data of {len(cmd)} bytes is not a COP1 stream")
    words = struct.unpack_from(f"<{len(cmd) // 4}I", cmd)
    if words[0] != _COP1:
        raise Malformed(f"{what}: cmd_data does not start with 'COP1' ({cmd[:4]!r})")
    config = ident = 0
    i = 1
    while i < len(words):
        tag = words[i]
        action = tag & 0xFF
        if action == _DA_OPTIMIZER_CONFIG:
            if i + 2 >= len(words):
                raise Malformed(f"{what}: cmd_data ends inside the OPTIMIZER_CONFIG action")
            config, ident = words[i + 1], words[i + 2]
            i += 3
        elif action == _DA_NOP:
            i += 1
        elif action == _DA_COMMAND_STREAM:
            length = (((tag >> 8) & 0xFF) << 16) | (tag >> 16)
            offset = 4 * (i + 1)
            if offset + 4 * length > len(cmd):
                raise Malformed(
                    f"{what}: the command stream of {length} words runs past the "
                    f"{len(cmd)}-byte cmd_data"
                )
            return CopHeader(config=config, id=ident, command_words=length, command_offset=offset)
        else:
            raise Malformed(f"{what}: cmd_data has unknown driver action {action} at word {i}")
    raise Malformed(f"{what}: cmd_data has no COMMAND_STREAM driver action")


def _io(data: bytes, what: str) -> tuple[VelaTensor, ...]:
    if len(data) < 4:
        raise Malformed(f"{what}: {len(data)} bytes, too short for a tensor count")
    (count,) = struct.unpack_from("<i", data)
    if count < 0 or len(data) != 4 + count * _IO_RECORD.size:
        raise Malformed(f"{what}: {len(data)} bytes do not hold {count} tensor records")
    out = []
    for i in range(count):
        *shape, elem_size, offset, region = _IO_RECORD.unpack_from(data, 4 + i * _IO_RECORD.size)
        out.append(VelaTensor(tuple(shape), elem_size, offset, region))
    return tuple(out)


# external key -> (offset of its data in the file holding it, the data, that file's .ptd
# tag or "" for the .pte itself), or None when no file given holds it
Resolver = Callable[[str], tuple[int, bytes, str] | None]


def parse_vela_blocks(
    blob: bytes, what: str, method: str, delegate_index: int, resolve: Resolver, *, base: int = 0
) -> VelaBlocks:
    """Parse one Ethos-U delegate payload found at byte `base` of the .pte file;
    `resolve` maps an external key to its data."""
    blocks: list[VelaBlock] = []
    for name, size, external, raw, start in split_blocks(blob, what):
        data, offset, ptd, key = raw, base + start, "", ""
        if external:
            try:
                key = raw.decode("ascii")
            except UnicodeDecodeError:
                raise Malformed(f"{what}: external Vela block '{name}' has a corrupt key") from None
            found = resolve(key)
            if found is None:
                raise Malformed(
                    f"{what}: Vela block '{name}' is external (key {key}) and not in "
                    "this .pte's named data (it lives in a separate .ptd file)"
                )
            offset, data, ptd = found
        blocks.append(VelaBlock(name, size, external, data, offset, ptd, key))
    by_name: dict[str, bytes] = {}
    for b in blocks:
        by_name.setdefault(b.name, b.data)
    missing = [n for n in REQUIRED_BLOCKS if n not in by_name]
    if missing:
        raise Malformed(f"{what}: Vela block stream has no {', '.join(missing)} block")
    scratch = by_name["scratch_size"]
    if len(scratch) != 4:
        raise Malformed(f"{what}: scratch_size block is {len(scratch)} bytes, expected 4")
    return VelaBlocks(
        method=method,
        delegate_index=delegate_index,
        blocks=tuple(blocks),
        cmd_data=by_name["cmd_data"],
        weight_data=by_name["weight_data"],
        scratch_size=struct.unpack("<I", scratch)[0],
        inputs=_io(by_name["inputs"], f"{what}: inputs block"),
        outputs=_io(by_name["outputs"], f"{what}: outputs block"),
        cop=parse_cop_header(by_name["cmd_data"], what),
    )
