"""check-elf's cold-boot proof: what the core runs and reads before the reset copy has
filled RAM (the reset handler, the copy table) lies in non-volatile memory where it
runs, and every copy the start-up's copy table makes (.data, the kit's copied buffers,
the code with [boot] code = "copy") takes its bytes from non-volatile memory to where
the plan put them.
"""

from __future__ import annotations

import struct
from typing import BinaryIO

from ethosu_kit.board.model import MemoryRegion as Region
from ethosu_kit.firmware.elf import Elf, Section, Segment, Vectors, bytes_at
from ethosu_kit.firmware.elf_placement import Violate, region_at, region_name_of
from ethosu_kit.plan.types import MemoryPlan

# a reset copy: (run address, load address, bytes)
Copy = tuple[int, int, int]
COPY_TABLE = ("__copy_table_start__", "__copy_table_end__")  # sdk/src/startup.c's
_COPY_ENTRY = 12  # three words: load, run, size


def copy_entries(f: BinaryIO, elf: Elf) -> list[Copy] | None:
    """The start-up's copy table as the image stores it (GNU ld images: .data and the kit's
    copied buffers), None when the image has none (armlink's scatter-loading, a team's
    own start-up). kit_sections_init's copies do not count: not every app calls it."""
    start, end = (elf.symbols.get(name) for name in COPY_TABLE)
    if start is None or end is None or not 0 <= end[0] - start[0] <= 64 * _COPY_ENTRY:
        return None
    raw = bytes_at(f, elf, start[0], end[0] - start[0])
    if raw is None:
        return None
    words = struct.unpack(f"<{len(raw) // 4}I", raw[: len(raw) // 4 * 4])
    return [(words[i + 1], words[i], words[i + 2]) for i in range(0, len(words) - 2, 3)]


def reset_vector(f: BinaryIO, elf: Elf, plan: MemoryPlan) -> int | None:
    """Where the core starts at reset: the vector table's second word (the Thumb bit
    cleared), None when the board names no boot address or the image stores none there."""
    boot = plan.board.boot
    if boot is None:
        return None
    raw = bytes_at(f, elf, boot.vector_address, 8)
    return None if raw is None else Vectors.decode(boot.vector_address, raw).start


def check_before_copy(elf: Elf, regions: list[Region], reset: int | None, violate: Violate) -> None:
    """What the core runs and reads before the reset copy has filled RAM: the reset handler
    the vectors point at and the copy table it reads. Both must be in non-volatile memory
    and run where they are stored; with the code copied into RAM ([boot] code = "copy")
    the kit keeps them there (Reset_Handler in .text.boot)."""
    table = elf.symbols.get(COPY_TABLE[0])
    for what, address in (
        ("the reset handler (the reset vector)", reset),
        (f"the copy table ({COPY_TABLE[0]})", table[0] if table else None),
    ):
        if address is None:
            continue
        region = region_at(regions, address, 1)
        seg = next((s for s in elf.segments if s.vaddr <= address < s.vaddr + s.memsz), None)
        in_place = seg is not None and seg.vaddr == seg.paddr
        if region is not None and not region.volatile and in_place:
            continue
        where = region.name if region else "no region"
        violate(
            what, address, "",
            f"cold boot: {what} at {address:#010x} is in {where}"
            + ("" if in_place else ", stored elsewhere")
            + ": it runs before the reset copy, when that memory holds garbage",
            "keep the reset code and its tables in non-volatile memory, run in place "
            "(the kit's start-up puts Reset_Handler in .text.boot when the code is copied)",
        )  # fmt: skip


def copy_rows(
    elf: Elf, regions: list[Region], copies: list[Copy]
) -> tuple[tuple[str, int, str, int, str, int], ...]:
    """The copy table's entries with bytes, each named by the section it fills."""
    out = []
    for run, load, size in copies:
        if size == 0 or run == load:
            continue
        name = next((s.name for s in elf.sections if s.addr == run and s.size), f"{run:#010x}")
        out.append(
            (name, size, region_name_of(regions, load), load, region_name_of(regions, run), run)
        )
    return tuple(out)


def check_cold_boot(
    elf: Elf, regions: list[Region], copies: list[Copy] | None, plan: MemoryPlan, violate: Violate
) -> None:
    """A board that boots cold ([boot] from = "nv"): every byte a load segment stores lies
    in non-volatile memory, no ELF header is among them, and what runs from RAM is copied
    there at reset (the start-up's copy table)."""
    source = plan.board.source
    for i, seg in enumerate(elf.segments):
        if seg.filesz == 0:
            continue
        what = f"segment {i}"
        store = region_at(regions, seg.paddr, seg.filesz)
        if store is None or store.volatile:
            where = (
                f"{store.name}, volatile memory"
                if store
                else f"{region_name_of(regions, seg.paddr)} (not one region)"
            )
            violate(
                what, seg.paddr, "",
                f"cold boot: load segment {i} ({seg.filesz} bytes at LMA {seg.paddr:#010x}) "
                f"is stored in {where}: at power-up it holds garbage and nothing loads it",
                f"{source} says [boot] from = \"nv\": initial contents belong in non-volatile "
                "memory (AT> flash), copied at reset; a RAM marked loadable = true there "
                "is not filled by anything",
            )  # fmt: skip
        if elf.loads_headers(seg):
            violate(
                what, seg.paddr, "",
                f"cold boot: load segment {i} (LMA {seg.paddr:#010x}) stores the ELF and "
                f"program headers ({elf.headers.end} bytes) in the target's memory",
                "link with -Wl,-n (no page-aligned segments), as the kit's own link does",
            )  # fmt: skip
        if seg.vaddr != seg.paddr:
            _check_copied(i, seg, regions, copies, violate, sections=elf.sections)


def _check_copied(
    i: int,
    seg: Segment,
    regions: list[Region],
    copies: list[Copy] | None,
    violate: Violate,
    *,
    sections: tuple[Section, ...] | list[Section] = (),
) -> None:
    """Load segment `i` runs at one address and is stored at another: it must run in RAM
    the start-up fills from where it is stored. The fill between two sections (alignment
    padding, e.g. before .data after the copied code) holds nothing a copy must bring."""
    vaddr, paddr, size = seg.vaddr, seg.paddr, seg.filesz
    run = region_at(regions, vaddr, size)
    if run is None or not (run.volatile and run.writable):
        violate(
            f"segment {i}", vaddr, "",
            f"cold boot: load segment {i} runs at {vaddr:#010x} ({size} bytes), "
            f"in {run.name if run else region_name_of(regions, vaddr)}, not RAM the "
            "start-up can copy it into",
            "run copied sections from a writable RAM region",
        )  # fmt: skip
        return
    if copies is None:
        return  # armlink's scatter-loading or a team's start-up: not readable here
    end = vaddr + size
    at = vaddr
    while at < end:
        hit = next((c for c in copies if c[0] <= at < c[0] + c[2]), None)
        if hit is None:
            upto = min((c[0] for c in copies if at < c[0] < end), default=end)
            if not any(
                not x.nobits and x.size and x.addr < upto and at < x.addr + x.size for x in sections
            ):
                at = upto  # padding: no section's bytes
                continue
            violate(
                f"segment {i}", at, run.name,
                f"cold boot: {upto - at} bytes of load segment {i} at {at:#010x} "
                f"({run.name}) are copied by nothing at reset (stored at "
                f"{paddr + at - vaddr:#010x})",
                "give the section a copy-table entry (LONG(LOADADDR(x)) LONG(ADDR(x)) "
                "LONG(SIZEOF(x))), as the kit's linker.ld gives .data and its copied buffers",
            )  # fmt: skip
            return
        if hit[1] + (at - hit[0]) != paddr + (at - vaddr):
            violate(
                f"segment {i}", at, run.name,
                f"cold boot: the reset copy to {at:#010x} reads "
                f"{hit[1] + at - hit[0]:#010x}; the segment stores those bytes at "
                f"{paddr + at - vaddr:#010x}",
                "the copy table must use LOADADDR() of the section it copies",
            )  # fmt: skip
            return
        at = hit[0] + hit[2]
