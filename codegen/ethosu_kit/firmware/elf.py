"""The one ELF reader: what identify (firmware.image) and check-elf (firmware.elf_check)
need of a linked firmware image, read once with pyelftools: the allocated sections, the
defined symbols, the loadable segments and the bytes of a few named sections; and the
header check that says, in one line, what a file is when it is no 32-bit little-endian
Arm executable.

Callers open the file (core.files.open_regular: a regular file, bounded) and word the
failures themselves; `read_elf` lets pyelftools' errors through (ELF_ERRORS).
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from dataclasses import dataclass
from typing import BinaryIO

from elftools.common.exceptions import ELFError

from ethosu_kit.core.errors import KitError

EM_ARM = 40
ET_EXEC = 2
SHF_ALLOC = 0x2
HEADER_BYTES = 52  # an ELF32 header
# what a damaged file can raise while it is read
ELF_ERRORS = (ELFError, OSError, ValueError, struct.error)
# e_machine values a user is likely to hand us by mistake, for the message
_MACHINES = {3: "x86", 8: "MIPS", 62: "x86-64", 183: "AArch64", 243: "RISC-V"}
_ET = {0: "no file type", 1: "a relocatable object (.o)", 3: "a shared object", 4: "a core dump"}


@dataclass(frozen=True)
class Section:
    name: str
    addr: int
    size: int
    nobits: bool  # .bss-like: takes memory, no bytes in the file


@dataclass(frozen=True)
class Segment:
    vaddr: int  # where it runs
    paddr: int  # where its bytes are stored (the LMA)
    filesz: int
    memsz: int
    offset: int = 0  # of its bytes in the file


@dataclass(frozen=True)
class Headers:
    """Where the ELF header and the program headers are in the file: a load segment whose
    file bytes include them would put them in the target's memory."""

    end: int  # one past the last program header's byte


@dataclass(frozen=True)
class Elf:
    sections: tuple[Section, ...]  # allocated (SHF_ALLOC), non-empty
    symbols: dict[str, tuple[int, int]]  # defined symbols: name -> (value, size)
    segments: tuple[Segment, ...]  # PT_LOAD
    data: dict[str, bytes]  # the bytes of the sections asked for that are present
    headers: Headers = Headers(HEADER_BYTES)

    def loads_headers(self, seg: Segment) -> bool:
        """The segment's file bytes include the ELF or program headers."""
        return seg.filesz > 0 and seg.offset < self.headers.end


@dataclass(frozen=True)
class Vectors:
    """An image's vector table: where it is, its initial SP and reset handler (as stored:
    the Thumb bit set)."""

    address: int
    sp: int
    reset: int

    @classmethod
    def decode(cls, address: int, table: bytes) -> Vectors:
        """The vector table at `address` whose bytes start `table` (at least 8): word 0 is
        the initial SP, word 1 the reset handler."""
        sp, reset = struct.unpack_from("<2I", table)
        return cls(address, sp, reset)

    @property
    def start(self) -> int:
        """Where the core starts at reset: the reset handler, its Thumb bit cleared."""
        return self.reset & ~1


def segment_bytes(f: BinaryIO, seg: Segment) -> bytes:
    """The bytes a load segment stores (its file contents, `filesz` of them)."""
    f.seek(seg.offset)
    data = f.read(seg.filesz)
    if len(data) != seg.filesz:
        raise KitError(f"load segment at {seg.paddr:#010x} runs past the end of the file")
    return data


def bytes_at(f: BinaryIO, elf: Elf, address: int, size: int) -> bytes | None:
    """`size` bytes the image stores at run address `address`, or None when no load segment
    holds them all."""
    for seg in elf.segments:
        if seg.vaddr <= address and address + size <= seg.vaddr + seg.filesz:
            f.seek(seg.offset + address - seg.vaddr)
            data = f.read(size)
            return data if len(data) == size else None
    return None


def check_header(path: object, head: bytes, hint: str) -> None:
    """A KitError saying what `path` is when it is not a 32-bit little-endian Arm executable."""
    if len(head) < HEADER_BYTES or head[:4] != b"\x7fELF":
        raise KitError(f"{path}: not an ELF file (it starts with {head[:4]!r})", hint=hint)
    ei_class, ei_data = head[4], head[5]
    if ei_class != 1:
        raise KitError(
            f"{path}: a {'64-bit' if ei_class == 2 else 'non-32-bit'} ELF; "
            "Cortex-M firmware is a 32-bit Arm ELF",
            hint=hint,
        )
    if ei_data != 1:
        raise KitError(
            f"{path}: a big-endian ELF; the kit's Cortex-M images are little-endian", hint=hint
        )
    e_type, e_machine = struct.unpack_from("<HH", head, 16)
    if e_machine != EM_ARM:
        name = _MACHINES.get(e_machine, f"e_machine {e_machine}")
        raise KitError(f"{path}: an ELF for {name}, not for Arm", hint=hint)
    if e_type != ET_EXEC:
        raise KitError(
            f"{path}: {_ET.get(e_type, f'ELF type {e_type}')}, not a linked executable", hint=hint
        )


def read_elf(f: BinaryIO, data_of: Iterable[str] = (), *, symbols: bool = True) -> Elf:
    """Everything the kit reads of an ELF from the open file `f`; `data_of`: the sections
    whose bytes are wanted (.kit.info); `symbols=False` skips the symbol tables."""
    # pyelftools' reader pulls in its DWARF and construct modules (~60 ms): every command
    # that may run QEMU imports this module (gen, for --stack auto), few read an ELF
    from elftools.elf.elffile import ELFFile  # noqa: PLC0415
    from elftools.elf.sections import SymbolTableSection  # noqa: PLC0415

    reader = ELFFile(f)
    sections = []
    table: dict[str, tuple[int, int]] = {}
    for sec in reader.iter_sections():
        if sec["sh_flags"] & SHF_ALLOC and sec["sh_size"] > 0:
            sections.append(
                Section(sec.name, sec["sh_addr"], sec["sh_size"], sec["sh_type"] == "SHT_NOBITS")
            )
        if symbols and isinstance(sec, SymbolTableSection):
            for sym in sec.iter_symbols():
                if sym.name and sym["st_shndx"] != "SHN_UNDEF":
                    table[sym.name] = (sym["st_value"], sym["st_size"])
    data = {}
    for name in data_of:
        found = reader.get_section_by_name(name)
        if found is not None:
            data[name] = found.data()
    segments = tuple(
        Segment(
            int(seg["p_vaddr"]),
            int(seg["p_paddr"]),
            int(seg["p_filesz"]),
            int(seg["p_memsz"]),
            int(seg["p_offset"]),
        )
        for seg in reader.iter_segments()
        if seg["p_type"] == "PT_LOAD"
    )
    head = reader.header
    headers = Headers(max(HEADER_BYTES, head["e_phoff"] + head["e_phnum"] * head["e_phentsize"]))
    return Elf(tuple(sections), table, segments, data, headers)
