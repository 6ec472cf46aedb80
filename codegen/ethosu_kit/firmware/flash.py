"""Flash artefacts: what a flasher writes for an image that boots cold from non-volatile
memory ([boot] from = "nv").

`write_flash_artefacts(elf, board)` reads the ELF's load segments (PT_LOAD with file
bytes, at their load addresses) and writes, per non-volatile region that holds any:
one raw binary from the first stored byte to the last (gaps between segments inside the
region are 0xFF, erased flash; a file never spans the address gap between two regions),
the same bytes as Intel HEX, and `<elf stem>.flash_manifest.json` listing region,
address, size, file names and SHA-256 of each. `ethosu-kit run --cold-boot` hands QEMU
these files alone (docs/running.md).

Segments stored in volatile memory are not flash contents: they are left out and named
(check-elf refuses such a cold-boot image, naming segment, address and region).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from elftools.common.exceptions import ELFError

from ethosu_kit.board.model import Board, MemoryRegion
from ethosu_kit.core.errors import KitError
from ethosu_kit.core.files import MAX_ELF, MAX_MANIFEST, open_regular, parse_json, read_text
from ethosu_kit.core.typed_json import ShapeError, decode, encode
from ethosu_kit.firmware.elf import ELF_ERRORS, read_elf, segment_bytes

MANIFEST_SUFFIX = ".flash_manifest.json"
MANIFEST_FORMAT = 1
ERASED = 0xFF  # what a flash reads between programmed bytes
HEX_RECORD = 16  # data bytes per Intel HEX record


@dataclass(frozen=True)
class FlashFile:
    """One region's contents: `size` bytes from `address`, as `bin` and as `hex`."""

    region: str
    address: int
    size: int
    bin: str  # file name, beside the manifest
    hex: str
    sha256: str  # of the .bin


@dataclass(frozen=True)
class FlashManifest:
    format: int
    elf: str  # the ELF's file name
    board: str
    files: tuple[FlashFile, ...]
    # load segments stored outside non-volatile memory, not in any file: "LMA in REGION"
    left_out: tuple[str, ...] = ()


def manifest_path(elf: Path) -> Path:
    """Where `build` writes the manifest of `elf`: beside it, named after it."""
    return elf.with_name(elf.stem + MANIFEST_SUFFIX)


def _stored(elf: Path) -> list[tuple[int, bytes]]:
    """(load address, bytes) of every load segment with file contents."""
    try:
        with open_regular(elf, MAX_ELF) as (f, _):
            image = read_elf(f, symbols=False)
            return [(s.paddr, segment_bytes(f, s)) for s in image.segments if s.filesz > 0]
    except OSError as exc:
        raise KitError(f"{elf}: cannot read the ELF ({exc.strerror})") from exc
    except (ELFError, *ELF_ERRORS) as exc:
        raise KitError(f"{elf}: not an ELF file ({exc})") from exc


def _region_of(board: Board, address: int, size: int) -> MemoryRegion | None:
    return next((r for r in board.regions if r.contains(address, max(size, 1))), None)


def intel_hex(address: int, data: bytes) -> str:
    """`data` at `address` as Intel HEX: extended linear address records (type 04) per
    64 KiB, 16-byte data records (00), the end-of-file record (01)."""

    def record(kind: int, offset: int, payload: bytes) -> str:
        body = bytes([len(payload), offset >> 8, offset & 0xFF, kind]) + payload
        return f":{body.hex().upper()}{(-sum(body)) & 0xFF:02X}\n"

    lines = []
    upper = None
    at = address
    end = address + len(data)
    while at < end:
        if at >> 16 != upper:
            upper = at >> 16
            lines.append(record(0x04, 0, upper.to_bytes(2, "big")))
        # a record never crosses a 64 KiB boundary (its offset is 16-bit)
        n = min(HEX_RECORD, end - at, 0x10000 - (at & 0xFFFF))
        lines.append(record(0x00, at & 0xFFFF, data[at - address : at - address + n]))
        at += n
    lines.append(record(0x01, 0, b""))
    return "".join(lines)


@dataclass(frozen=True)
class FlashImage:
    """One non-volatile region's contents: `data` from `address`."""

    region: str
    address: int
    data: bytes


def flash_images(elf: Path, board: Board) -> tuple[list[FlashImage], list[str]]:
    """What the image stores in each non-volatile region (board order) and, as text, the
    load segments it stores elsewhere (left out: no flasher writes RAM)."""
    per_region: dict[str, list[tuple[int, bytes]]] = {}
    left_out = []
    for address, data in _stored(elf):
        region = _region_of(board, address, len(data))
        if region is None or region.volatile:
            where = region.name if region else "no region"
            left_out.append(f"{len(data)} bytes at {address:#010x} in {where}")
            continue
        per_region.setdefault(region.name, []).append((address, data))
    images = []
    for name in (r.name for r in board.regions if r.name in per_region):
        pieces = sorted(per_region[name])
        start = pieces[0][0]
        end = max(a + len(d) for a, d in pieces)
        image = bytearray([ERASED]) * (end - start)
        for a, d in pieces:
            image[a - start : a - start + len(d)] = d
        images.append(FlashImage(name, start, bytes(image)))
    return images, left_out


def write_flash_artefacts(elf: Path, board: Board) -> FlashManifest:
    """The .bin and .hex per non-volatile region holding contents, and the manifest,
    beside `elf` (files of an earlier build of it removed first)."""
    images, left_out = flash_images(elf, board)
    old = manifest_path(elf)
    if old.is_file():
        try:
            stale = read_manifest(old).files
        except KitError:
            stale = ()  # not ours to read: overwritten below
        for f in stale:
            for name in (f.bin, f.hex):
                (elf.parent / name).unlink(missing_ok=True)
    files = []
    for image in images:
        stem = f"{elf.stem}.{image.region}"
        (elf.parent / f"{stem}.bin").write_bytes(image.data)
        (elf.parent / f"{stem}.hex").write_text(intel_hex(image.address, image.data))
        files.append(
            FlashFile(
                region=image.region,
                address=image.address,
                size=len(image.data),
                bin=f"{stem}.bin",
                hex=f"{stem}.hex",
                sha256=hashlib.sha256(image.data).hexdigest(),
            )
        )
    manifest = FlashManifest(MANIFEST_FORMAT, elf.name, board.name, tuple(files), tuple(left_out))
    old.write_text(json.dumps(encode(manifest), indent=2) + "\n")
    return manifest


def read_manifest(path: Path) -> FlashManifest:
    """A flash_manifest.json as written by `build`; a KitError naming the file and key."""
    text = read_text(path, MAX_MANIFEST)
    try:
        manifest = decode(FlashManifest, parse_json(text))
    except ValueError as exc:  # JSONDecodeError, ShapeError
        key = f"{exc.key}: {exc.problem}" if isinstance(exc, ShapeError) else str(exc)
        raise KitError(f"{path}: not a flash manifest of this kit ({key})") from exc
    if manifest.format != MANIFEST_FORMAT:
        raise KitError(f"{path}: format {manifest.format}, this kit reads {MANIFEST_FORMAT}")
    for f in manifest.files:
        for name in (f.bin, f.hex):
            if Path(name).name != name:
                raise KitError(f"{path}: {name!r} is not a file name beside the manifest")
    return manifest
