"""Bounds-checked reads of a FlatBuffers table, over the `flatbuffers` runtime.

The `flatbuffers` Python runtime trusts its input: a bad offset raises struct.error,
or worse, a negative one silently reads from the end of the buffer. A .pte is user
input, so every position is checked against the buffer before the runtime reads it;
anything out of bounds raises `Malformed` with what was being read. The callers
(`program.py`) turn the schema's field ids into these calls.

Slot of field id n in the vtable = 4 + 2 * n (flatc's layout).
"""

from __future__ import annotations

import struct
from collections.abc import Callable

from flatbuffers.table import Table


class Malformed(Exception):
    """The bytes are not a well-formed flatbuffer (the reader adds the file name)."""


_U16 = struct.Struct("<H")
_U32 = struct.Struct("<I")
_I32 = struct.Struct("<i")
_F64 = struct.Struct("<d")

# the most elements a vector may claim; larger is a corrupt length, not a model
_MAX_VECTOR = 1 << 28


def slot(field_id: int) -> int:
    return 4 + 2 * field_id


def _int_field(code: str) -> Callable[[FbTable, int], int]:
    """FbTable's reader of an integer field of struct `code`."""
    fmt = struct.Struct(f"<{code}")

    def read(table: FbTable, field_id: int) -> int:
        return table._int(field_id, fmt)

    return read


def _int_vector(code: str) -> Callable[[FbTable, int], tuple[int, ...]]:
    """FbTable's reader of a vector of integers of struct `code`."""

    def read(table: FbTable, field_id: int) -> tuple[int, ...]:
        return table._scalars(field_id, code)

    return read


class FbTable:
    """A verified table: its vtable and inline object lie inside the buffer."""

    __slots__ = ("_buf", "_end", "_t", "_vt_len", "what")

    def __init__(self, buf: bytes, pos: int, what: str) -> None:
        end = len(buf)
        if pos < 0 or pos + 4 > end:
            raise Malformed(f"{what} table at {pos} is outside the {end}-byte flatbuffer")
        vtable = pos - _I32.unpack_from(buf, pos)[0]
        if vtable < 0 or vtable + 4 > end:
            raise Malformed(f"{what} table at {pos} has its vtable outside the flatbuffer")
        vt_len = _U16.unpack_from(buf, vtable)[0]
        if vt_len < 4 or vt_len % 2 or vtable + vt_len > end:
            raise Malformed(f"{what} table at {pos} has a corrupt vtable")
        self._buf = buf
        self._end = end
        self._t = Table(buf, pos)
        self._vt_len = vt_len
        self.what = what

    def _field(self, field_id: int, width: int) -> int:
        """Absolute position of a present field (0 when absent: the schema default)."""
        s = slot(field_id)
        if s + 2 > self._vt_len:
            return 0
        off = self._t.Offset(s)
        if off == 0:
            return 0
        # Like flatbuffers' own verifier, check against the buffer, not the table's
        # recorded object size: executorch's DataSegment tables record 8 bytes while
        # holding a u64 at offset 4.
        at = int(self._t.Pos) + int(off)
        if off < 4 or at + width > self._end:
            raise Malformed(f"{self.what}: field {field_id} lies outside the flatbuffer")
        return at

    def _target(self, field_id: int) -> int:
        """Follow a field's uoffset to the object it points at (0 when absent)."""
        at = self._field(field_id, 4)
        if not at:
            return 0
        target = int(self._t.Indirect(at))
        if target >= self._end:
            raise Malformed(f"{self.what}: field {field_id} points outside the flatbuffer")
        return target

    # -- scalars ------------------------------------------------------------------------

    def _int(self, field_id: int, fmt: struct.Struct) -> int:
        """An integer field of format `fmt` (little-endian, as flatbuffers stores it), 0
        (the schema's default) when absent."""
        at = self._field(field_id, fmt.size)
        return int(fmt.unpack_from(self._buf, at)[0]) if at else 0

    # one reader per integer width the schema uses, in struct's codes as the vectors below
    u8 = _int_field("B")
    i8 = _int_field("b")
    u32 = _int_field("I")
    i32 = _int_field("i")
    u64 = _int_field("Q")
    i64 = _int_field("q")

    def f64(self, field_id: int) -> float:
        at = self._field(field_id, _F64.size)
        return float(_F64.unpack_from(self._buf, at)[0]) if at else 0.0

    # -- references ---------------------------------------------------------------------

    def table(self, field_id: int, what: str) -> FbTable | None:
        target = self._target(field_id)
        return FbTable(self._buf, target, what) if target else None

    def _vector(self, field_id: int, elem_width: int) -> tuple[int, int]:
        """(start of the elements, count); (0, 0) when the field is absent."""
        target = self._target(field_id)
        if not target:
            return 0, 0
        if target + 4 > self._end:
            raise Malformed(f"{self.what}: vector {field_id} length lies outside the flatbuffer")
        count = int(_U32.unpack_from(self._buf, target)[0])
        start = target + 4
        if count > _MAX_VECTOR or start + count * elem_width > self._end:
            raise Malformed(
                f"{self.what}: vector {field_id} of {count} elements runs past the flatbuffer end"
            )
        return start, count

    def tables(self, field_id: int, what: str) -> list[FbTable]:
        start, count = self._vector(field_id, 4)
        out = []
        for i in range(count):
            at = start + 4 * i
            out.append(FbTable(self._buf, at + _U32.unpack_from(self._buf, at)[0], f"{what}[{i}]"))
        return out

    def bytes_(self, field_id: int) -> bytes:
        start, count = self._vector(field_id, 1)
        return self._buf[start : start + count] if count else b""

    def bytes_span(self, field_id: int) -> tuple[int, int]:
        """(offset, length) of a [ubyte] vector inside the buffer, without copying it."""
        return self._vector(field_id, 1)

    def string(self, field_id: int) -> str:
        raw = self.bytes_(field_id)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise Malformed(f"{self.what}: string field {field_id} is not UTF-8") from None

    def _scalars(self, field_id: int, code: str) -> tuple[int, ...]:
        """A vector of integers of struct `code` (little-endian); () when absent."""
        start, count = self._vector(field_id, struct.calcsize(f"<{code}"))
        return struct.unpack_from(f"<{count}{code}", self._buf, start) if count else ()

    i32s = _int_vector("i")
    i64s = _int_vector("q")
    u64s = _int_vector("Q")

    def union(self, type_field_id: int, what: str) -> tuple[int, FbTable | None]:
        """A union field: (type tag, table); the value's field id follows the tag's."""
        tag = self.u8(type_field_id)
        if tag == 0:
            return 0, None
        return tag, self.table(type_field_id + 1, what)


def root(buf: bytes) -> FbTable:
    """The root table of a size-prefix-free flatbuffer."""
    if len(buf) < 8:
        raise Malformed(f"flatbuffer of {len(buf)} bytes is too short")
    return FbTable(buf, int(_U32.unpack_from(buf, 0)[0]), "Program")


__all__ = ["FbTable", "Malformed", "root", "slot"]
