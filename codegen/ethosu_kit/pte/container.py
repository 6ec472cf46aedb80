"""The .pte container: flatbuffer header, extended header ("eh00") and data segments.

Layout (executorch `exir/_serialize/_program.py`, runtime `schema/extended_header.h`):

    0   u32   offset of the root table
    4   char  file identifier "ET12"
    8   "eh00" extended header, optional:
        u32 header length (>= 24), u64 program size (flatbuffer bytes, header included),
        u64 segment base offset (0 = no segments), u64 segment data size (if length >= 32)
    ... flatbuffer up to program size, padding, then the segments from the segment base:
        Program.segments[i] = (offset from the segment base, size)
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass

from ethosu_kit.pte._flatbuffer import Malformed
from ethosu_kit.pte.program import RawProgram, parse_program

FILE_IDENTIFIER = b"ET12"
_EH_MAGIC = b"eh00"
_EH_MIN_LENGTH = 24  # magic, length, program size, segment base
_EH_FULL_LENGTH = 32  # + segment data size
_EH = struct.Struct("<4sIQQ")
_U64 = struct.Struct("<Q")


@dataclass(frozen=True)
class PteFile:
    """A checked .pte: its bytes, where the flatbuffer ends and the segments begin."""

    data: bytes
    program_size: int
    segment_base: int
    segment_data_size: int  # 0 when the header has no such field or there are no segments
    extended_header: bool
    program: RawProgram

    def segment_span(self, index: int, what: str) -> tuple[int, int]:
        """(absolute offset, size) of Program.segments[index], checked against the file."""
        segs = self.program.segments
        if not 0 <= index < len(segs):
            raise Malformed(f"{what} refers to segment {index}, the program has {len(segs)}")
        offset, size = segs[index]
        if size and not self.segment_base:
            # executorch writes an empty constant segment even without an extended header
            raise Malformed(f"{what} is in segment {index}, but the file has no segment base")
        start = self.segment_base + offset
        if start + size > len(self.data):
            raise Malformed(
                f"truncated: segment {index} ({what}) ends at byte {start + size}, "
                f"the file has {len(self.data)}"
            )
        return start, size

    def segment(self, index: int, what: str) -> bytes:
        start, size = self.segment_span(index, what)
        return self.data[start : start + size]


def _identify(data: bytes) -> None:
    if len(data) < 8:
        raise Malformed(
            f"is {len(data)} bytes, too short for an ExecuTorch program "
            "(a .pte starts with an 8-byte flatbuffer header)"
        )
    ident = data[4:8]
    if ident == FILE_IDENTIFIER:
        return
    if re.fullmatch(rb"ET\d\d", ident):
        raise Malformed(
            f"is ExecuTorch program schema {ident.decode()}, this kit reads "
            f"{FILE_IDENTIFIER.decode()} (executorch 1.x)"
        )
    raise Malformed(
        f"is not an ExecuTorch .pte: file identifier {ident!r} at byte 4, "
        f"expected {FILE_IDENTIFIER!r}"
    )


def open_pte(data: bytes) -> PteFile:
    """Check the container and parse the program flatbuffer; raises Malformed."""
    _identify(data)
    size = len(data)
    program_size, segment_base, segment_data_size, extended = size, 0, 0, False
    if data[8:12] == _EH_MAGIC:
        if size < 8 + _EH_MIN_LENGTH:
            raise Malformed(f"truncated: the extended header needs {8 + _EH_MIN_LENGTH} bytes")
        _, length, program_size, segment_base = _EH.unpack_from(data, 8)
        if length < _EH_MIN_LENGTH or 8 + length > size:
            raise Malformed(f"extended header length {length} is invalid")
        if length >= _EH_FULL_LENGTH:
            segment_data_size = _U64.unpack_from(data, 8 + _EH_MIN_LENGTH)[0]
        extended = True
        if program_size < 8 + length:
            raise Malformed(f"extended header program size {program_size} is invalid")
        if program_size > size:
            raise Malformed(
                f"truncated: the program flatbuffer is {program_size} bytes, the file has {size}"
            )
        if segment_base and segment_base < program_size:
            raise Malformed(
                f"segment base offset {segment_base} lies inside the {program_size}-byte program"
            )
        if segment_base + segment_data_size > size:
            raise Malformed(
                f"truncated: the segments end at byte {segment_base + segment_data_size}, "
                f"the file has {size}"
            )
    program = parse_program(data[:program_size])
    return PteFile(data, program_size, segment_base, segment_data_size, extended, program)
