"""Edit the Vela block stream inside a real .pte: the IO records, scratch_size, block sizes.

Each Vela block is a 32-byte header (`char name[16]`, `u32 size`, `u8 external`, ...)
followed by its data; `inputs` / `outputs` hold `i32 count` then per tensor
`i32 shape[6], elem_size, offset, region` (see ethosu_kit.pte.vela).
"""

from __future__ import annotations

import struct

FIELDS = {f"shape{i}": i for i in range(6)} | {"elem_size": 6, "offset": 7, "region": 8}


def block_at(data: bytes, name: str) -> int:
    """Byte offset of the header of the (only) block `name`."""
    key = name.encode().ljust(16, b"\0")
    at = data.find(key)
    assert at >= 0 and data.count(key) == 1, f"block {name!r} not found once"
    return at


def set_io(data: bytes, block: str, index: int, field: str, value: int) -> bytes:
    """`block` ("inputs"/"outputs") record `index` with `field` set to `value` (i32)."""
    at = block_at(data, block) + 32 + 4 + 36 * index + 4 * FIELDS[field]
    out = bytearray(data)
    struct.pack_into("<i", out, at, value)
    return bytes(out)


def get_io(data: bytes, block: str, index: int) -> dict[str, int]:
    at = block_at(data, block) + 32 + 4 + 36 * index
    values = struct.unpack_from("<9i", data, at)
    return {name: values[i] for name, i in FIELDS.items()}


def set_scratch(data: bytes, size: int) -> bytes:
    out = bytearray(data)
    struct.pack_into("<I", out, block_at(data, "scratch_size") + 32, size)
    return bytes(out)


def set_block_size(data: bytes, name: str, size: int) -> bytes:
    out = bytearray(data)
    struct.pack_into("<I", out, block_at(data, name) + 16, size)
    return bytes(out)
