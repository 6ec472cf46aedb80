"""Prove a linked firmware ELF against its memory plan (`memory_plan.json`).

For every logical buffer the plan names (scratch/temp pool, fast scratch, network,
pools, IO, stack, heap): its symbol lies wholly inside the region the mode requires,
is aligned (16 bytes for everything the NPU sees), and NPU buffers sit in
NPU-reachable memory, never a TCM. For the image as a whole: no allocated section
leaves its region (overflow), no two overlap, and everything with initial contents
has a load address (LMA) in memory that holds it at reset (non-volatile, or loadable
by the debugger/emulator). For a board that boots cold ([boot] from = "nv"): every byte
of every load segment lies in non-volatile memory, none is an ELF or program header, and
every segment that runs elsewhere than it is stored runs in RAM that the start-up's copy
table fills from exactly where it is stored. Reads the ELF with pyelftools; pure otherwise.
"""

from __future__ import annotations

import hashlib
import itertools
import struct
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from elftools.common.exceptions import ELFError
from rich.console import Console
from rich.table import Table

from ethosu_kit.board.model import MemoryRegion as Region
from ethosu_kit.board.model import RegionKind
from ethosu_kit.core.errors import ElfCheckError, KitError
from ethosu_kit.core.files import MAX_ELF, open_regular
from ethosu_kit.core.names import PLAN_JSON
from ethosu_kit.firmware.elf import Elf, Section, Segment, bytes_at, read_elf
from ethosu_kit.layout.link_layout import UNUSED_END, UNUSED_START
from ethosu_kit.npu.facts import NPU_ALIGN
from ethosu_kit.plan.fill import region_fill
from ethosu_kit.plan.regions import buffer_port, port_refusal
from ethosu_kit.plan.report import npu_view
from ethosu_kit.plan.types import Buffer, MemoryPlan, Role

TCM_KINDS = (RegionKind.ITCM, RegionKind.DTCM)


@dataclass(frozen=True)
class Violation:
    what: str  # symbol or section
    address: int
    actual: str  # region it is in ("none" outside every region)
    expected: str  # region it should be in ("" when not about placement)
    message: str
    hint: str


@dataclass(frozen=True)
class RegionRow:
    region: Region
    used: int
    free: int  # from the __kit_unused_<region>_start/_end symbols when present
    contents: tuple[str, ...]
    # what the planner counted as taken there (plan.fill.region_fill: buffers, code/data
    # reserves, load-image copies), the same figure as memory_report's "used"
    planned: int = 0


@dataclass
class CheckResult:
    elf: str
    plan: str
    mode: str
    board: str
    rows: list[RegionRow] = field(default_factory=list)
    violations: list[Violation] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)  # buffers proven
    # a cold-boot image: the non-volatile regions its load segments store bytes in
    cold_boot: tuple[str, ...] | None = None
    copies_read: bool = False  # ... and its copy table was read (GNU ld images)
    # ... what that table copies at reset: (section, bytes, load region, load, run region,
    # run) per entry with bytes, the code's too when the board copies it ([boot] code)
    copied: tuple[tuple[str, int, str, int, str, int], ...] = ()
    ports: list[str] = field(default_factory=list)  # each NPU buffer's region and AXI port

    @property
    def ok(self) -> bool:
        return not self.violations


PLAN_NAME = PLAN_JSON


def plan_candidates(elf: Path) -> list[Path]:
    """The memory_plan.json files that may be the plan of the project an ELF was built in,
    nearest first.

    A build lands in <project>/build/<toolchain>/, a few folders below the plan. CMake's
    ethosu_add_model/ethosu_add_firmware also copy it beside the ELF as
    `<elf name>.memory_plan.json`, which comes first: several executables with a model
    each can share one output folder (and its last-written memory_plan.json). Which of
    them is the image's own is firmware.image.find_plan's decision (.kit.info names the model).
    """
    found = []
    own = elf.resolve().with_name(f"{elf.stem}.{PLAN_NAME}")
    if own.is_file():
        found.append(own)
    for folder in elf.resolve().parents[:4]:
        if (folder / PLAN_NAME).is_file():
            found.append(folder / PLAN_NAME)
    return found


def plan_near(elf: Path) -> Path | None:
    """The nearest of plan_candidates, whatever model it is for."""
    found = plan_candidates(elf)
    return found[0] if found else None


def load_plan(plan_path: Path) -> MemoryPlan:
    """memory_plan.json as the typed plan; a one-line KitError naming the file and key."""
    return MemoryPlan.from_json(plan_path)


def _region_at(regions: list[Region], address: int, size: int) -> Region | None:
    for r in regions:
        if r.contains(address, max(size, 1)):
            return r
    return None


def _region_name_of(regions: list[Region], address: int) -> str:
    for r in regions:
        if r.base <= address < r.end:
            return r.name
    return "none"


def check_elf(elf_path: Path, plan_path: Path) -> CheckResult:
    plan = load_plan(plan_path)
    regions = list(plan.board.regions)
    by_name = {r.name: r for r in regions}
    mode = plan.mode.value
    result = CheckResult(str(elf_path), str(plan_path), mode, plan.board.name)

    try:
        with open_regular(elf_path, MAX_ELF) as (f, _):
            elf = read_elf(f, [b.section for b in plan.by_role(Role.EXTERNAL_DATA)])
            copies = _copy_entries(f, elf)
            reset = _reset_vector(f, elf, plan)
    except OSError as exc:
        raise KitError(f"{elf_path}: cannot read the ELF ({exc.strerror})") from exc
    except ELFError as exc:
        raise KitError(f"{elf_path}: not an ELF file ({exc})") from exc
    symbols = elf.symbols
    sections = elf.sections
    # (vaddr, paddr, filesz) of what the image loads
    loads = [(s.vaddr, s.paddr, s.filesz) for s in elf.segments if s.filesz > 0]

    def violate(what: str, address: int, expected: str, message: str, hint: str) -> None:
        actual = _region_name_of(regions, address)
        result.violations.append(Violation(what, address, actual, expected, message, hint))

    # 1. every logical buffer where its mode requires it
    for b in plan.buffers:
        if b.symbol and b.role not in (Role.CODE, Role.DATA):
            _check_buffer(
                b, symbols=symbols, regions=regions, by_name=by_name, loads=loads, mode=mode,
                violate=violate,
            )  # fmt: skip
            result.checked.append(b.name)
    _check_ports(plan, symbols, by_name, violate, result)

    # 1b. each .ptd's bytes are the file the plan was made with (named external data)
    for p in plan.options.external_data:
        b = plan.buffer(p.buffer)
        at = symbols.get(b.symbol, (0, 0))[0]
        if p.slot_address is not None and at != p.slot_address:
            violate(
                b.symbol, at, b.region,
                f"{b.name}: {b.symbol} at {at:#010x}, its fixed slot is {p.slot_address:#010x}",
                f"the linker script must give section {b.section} the address of the slot",
            )  # fmt: skip
        data = elf.data.get(b.section, b"")[: p.nbytes]
        if hashlib.sha256(data).hexdigest() != p.sha256:
            violate(
                b.symbol, symbols.get(b.symbol, (0, 0))[0], b.region,
                f"{b.name}: the {len(data)} bytes of section {b.section} are not {p.tag}.ptd "
                f"({p.nbytes} B, sha256 {p.sha256[:12]}…) the plan was made with",
                "rebuild from the generated project (its generated/*.ptd), or regenerate it",
            )  # fmt: skip

    # 2. no allocated section leaves its region; nothing overlaps
    placed: list[tuple[Section, Region | None]] = []
    for s in sections:
        region = _region_at(regions, s.addr, s.size)
        if region is None:
            start = _region_name_of(regions, s.addr)
            if start != "none":
                over = s.addr + s.size - by_name[start].end
                violate(
                    s.name, s.addr, start,
                    f"section {s.name} ({s.size} bytes at {s.addr:#010x}) overflows {start} "
                    f"by {over} bytes (ends {s.addr + s.size:#010x}, {start} ends "
                    f"{by_name[start].end:#010x})",
                    "shrink what is in it (see memory_report.txt), or use another memory mode",
                )  # fmt: skip
            else:
                violate(
                    s.name, s.addr, "",
                    f"section {s.name} ({s.size} bytes at {s.addr:#010x}) is outside every "
                    "region of the board",
                    "the linker script's MEMORY must match the board (regenerate it)",
                )  # fmt: skip
        placed.append((s, region))
    ordered = sorted(sections, key=lambda s: s.addr)
    for a, b2 in itertools.pairwise(ordered):
        if b2.addr < a.addr + a.size:
            violate(
                b2.name, b2.addr, "",
                f"section {b2.name} at {b2.addr:#010x} overlaps {a.name} "
                f"({a.addr:#010x}..{a.addr + a.size:#010x})",
                "two output sections share memory: fix the linker script's placement",
            )  # fmt: skip

    # 3. initial contents stored where they survive until reset (or the loader puts them)
    if plan.board.cold_boot:
        _check_cold_boot(elf, regions, copies, plan, violate)
        _check_before_copy(elf, regions, reset, violate)
        stores = {
            r.name
            for s in elf.segments
            if s.filesz and (r := _region_at(regions, s.paddr, s.filesz))
        }
        result.cold_boot = tuple(r.name for r in regions if r.name in stores)
        result.copies_read = copies is not None
        result.copied = _copied(elf, regions, copies or [])
    for vaddr, paddr, filesz in loads:
        region = _region_at(regions, paddr, filesz)
        if region is None:
            violate(
                f"segment@{vaddr:#010x}", paddr, "",
                f"load segment ({filesz} bytes, LMA {paddr:#010x}) is outside every region",
                "give initialised data a load address (AT>) in flash or a loadable region",
            )  # fmt: skip
        elif region.volatile and not region.loadable and not plan.board.cold_boot:
            violate(
                f"segment@{vaddr:#010x}", paddr, "",
                f"load segment ({filesz} bytes, LMA {paddr:#010x}) is in {region.name}, "
                "volatile memory nothing fills at reset",
                "store initial values in non-volatile memory (AT> flash) and copy at reset",
            )  # fmt: skip

    # the per-region table
    planned = {u.region.name: u.used for u in region_fill(plan)}
    for r in regions:
        inside = [s for s, reg in placed if reg is r]
        used = sum(s.size for s in inside)
        unused_from = symbols.get(UNUSED_START.format(region=r.name))
        unused_to = symbols.get(UNUSED_END.format(region=r.name))
        free = unused_to[0] - unused_from[0] if unused_from and unused_to else r.size - used
        contents = tuple(s.name for s in inside)
        result.rows.append(RegionRow(r, used, free, contents, planned.get(r.name, 0)))
    return result


Violate = Callable[[str, int, str, str, str], None]
# a reset copy: (run address, load address, bytes)
Copy = tuple[int, int, int]
COPY_TABLE = ("__copy_table_start__", "__copy_table_end__")  # sdk/src/startup.c's
_COPY_ENTRY = 12  # three words: load, run, size


def _copy_entries(f: BinaryIO, elf: Elf) -> list[Copy] | None:
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


def _reset_vector(f: BinaryIO, elf: Elf, plan: MemoryPlan) -> int | None:
    """Where the core starts at reset: the vector table's second word (the Thumb bit
    cleared), None when the board names no boot address or the image stores none there."""
    boot = plan.board.boot
    raw = bytes_at(f, elf, boot.vector_address, 8) if boot else None
    return None if raw is None else struct.unpack("<2I", raw)[1] & ~1


def _check_before_copy(
    elf: Elf, regions: list[Region], reset: int | None, violate: Violate
) -> None:
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
        region = _region_at(regions, address, 1)
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


def _copied(
    elf: Elf, regions: list[Region], copies: list[Copy]
) -> tuple[tuple[str, int, str, int, str, int], ...]:
    """The copy table's entries with bytes, each named by the section it fills."""
    out = []
    for run, load, size in copies:
        if size == 0 or run == load:
            continue
        name = next((s.name for s in elf.sections if s.addr == run and s.size), f"{run:#010x}")
        out.append(
            (name, size, _region_name_of(regions, load), load, _region_name_of(regions, run), run)
        )
    return tuple(out)


def _check_cold_boot(
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
        store = _region_at(regions, seg.paddr, seg.filesz)
        if store is None or store.volatile:
            where = (
                f"{store.name}, volatile memory"
                if store
                else f"{_region_name_of(regions, seg.paddr)} (not one region)"
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
    run = _region_at(regions, vaddr, size)
    if run is None or not (run.volatile and run.writable):
        violate(
            f"segment {i}", vaddr, "",
            f"cold boot: load segment {i} runs at {vaddr:#010x} ({size} bytes), "
            f"in {run.name if run else _region_name_of(regions, vaddr)}, not RAM the "
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


def _check_ports(
    plan: MemoryPlan,
    symbols: dict[str, tuple[int, int]],
    by_name: dict[str, Region],
    violate: Violate,
    result: CheckResult,
) -> None:
    """Each NPU buffer in a region the port its QCONFIG/REGIONCFG value picks reaches
    (the board's registers for the plan's NPU kind and mode); each is listed."""
    view = npu_view(plan)
    if view is None:
        return
    for b in plan.buffers:
        port = buffer_port(view, b.role) if b.npu else ""
        region = by_name.get(b.region)
        if not port or region is None or b.symbol not in symbols:
            continue
        result.ports.append(f"{b.name} in {region.name} ({region.port}): over {port}")
        problem = port_refusal(view, b.name, b.role, region)
        if problem:
            violate(
                b.symbol, symbols[b.symbol][0], b.region, f"{b.name}: {problem}",
                "set the region's npu_port as the SoC wires it, or the board's "
                "[npu.registers] for the mode, and regenerate",
            )  # fmt: skip


def _check_buffer(
    b: Buffer,
    *,
    symbols: dict[str, tuple[int, int]],
    regions: list[Region],
    by_name: dict[str, Region],
    loads: list[tuple[int, int, int]],
    mode: str,
    violate: Violate,
) -> None:
    name, symbol, size, want = b.name, b.symbol, b.size, b.region
    if symbol not in symbols:
        violate(
            symbol, 0, want,
            f"{name}: symbol {symbol} is not in the ELF (the plan puts {size} bytes in {want})",
            "link the generated kit_buffers.c / kit_network.S into the firmware",
        )  # fmt: skip
        return
    addr, sym_size = symbols[symbol]
    if 0 < sym_size < size:
        violate(
            symbol, addr, want,
            f"{name}: {symbol} is {sym_size} bytes, the plan needs {size}",
            "regenerate the project so kit_buffers.c matches memory_plan.json",
        )  # fmt: skip
    region = _region_at(regions, addr, size)
    actual = region.name if region else _region_name_of(regions, addr)
    if region is None and actual == want and want in by_name:
        over = addr + size - by_name[want].end
        violate(
            symbol, addr, want,
            f"{name}: {symbol} at {addr:#010x} ({size} bytes) runs {over} bytes past "
            f"the end of {want} ({by_name[want].end:#010x})",
            "the region overflows: shrink what is in it, or use another memory mode",
        )  # fmt: skip
    elif actual != want:
        allowed = b.allowed_regions or (want,)
        violate(
            symbol, addr, want,
            f"{name}: {symbol} at {addr:#010x} ({size} bytes) is in {actual}, "
            f"the {mode} plan requires {want}"
            + (f" (allowed: {', '.join(allowed)})" if len(allowed) > 1 else ""),
            f"the linker script must place section {b.section} in {want}: "
            f"regenerate linker.ld with gen-firmware, or fix its '> {want}'",
        )  # fmt: skip
    align = max(b.align, NPU_ALIGN if b.npu else 1)
    if addr % align:
        violate(
            symbol, addr, want,
            f"{name}: {symbol} at {addr:#010x} is not {align}-byte aligned "
            f"(off by {addr % align})",
            f"align section {b.section} to {align} (ALIGN({align}) / aligned({align}))",
        )  # fmt: skip
    if b.npu and region is not None and (region.kind in TCM_KINDS or not region.npu):
        why = "a TCM the NPU cannot reach" if region.kind in TCM_KINDS else "not NPU-reachable"
        reachable = [r.name for r in regions if r.npu and r.kind not in TCM_KINDS]
        violate(
            symbol, addr, want,
            f"{name}: {symbol} at {addr:#010x} is in {region.name}, {why}; "
            "the NPU reads or writes it",
            f"place {b.section} in an NPU-reachable region ({', '.join(reachable)})",
        )  # fmt: skip
    if b.initialized and b.load_region:
        _check_load_region(b, addr, loads, by_name, violate)


def _check_load_region(
    b: Buffer,
    vaddr: int,
    loads: list[tuple[int, int, int]],
    by_name: dict[str, Region],
    violate: Violate,
) -> None:
    want = b.load_region or b.region
    for seg_vaddr, paddr, filesz in loads:
        if seg_vaddr <= vaddr < seg_vaddr + filesz:
            lma = paddr + (vaddr - seg_vaddr)
            region = by_name.get(want)
            if region is None or not region.contains(lma, 1):
                violate(
                    b.symbol, lma, want,
                    f"{b.name}: initial contents of {b.symbol} load from {lma:#010x}, "
                    f"the plan stores them in {want}",
                    f"the linker script must give {b.section} 'AT> {want}'",
                )  # fmt: skip
            return


def render(result: CheckResult) -> None:
    """Print the per-region table and the violations (rich)."""
    console = Console(highlight=False)
    table = Table(title=f"{Path(result.elf).name}: {result.board}, {result.mode}")
    for col in ("region", "base", "size", "used", "free", "what"):
        table.add_column(col, justify="right" if col in ("size", "used", "free") else "left")
    for row in result.rows:
        table.add_row(
            row.region.name,
            f"{row.region.base:#010x}",
            str(row.region.size),
            str(row.used),
            str(row.free),
            " ".join(row.contents) or "-",
        )
    console.print(table)
    reached = [f"{r.region.name} {r.region.port}" for r in result.rows if r.region.npu]
    if reached:
        console.print(f"NPU AXI ports: {', '.join(reached)}", markup=False)
    for line in result.ports:
        console.print(f"NPU: {line}", markup=False)
    for v in result.violations:
        console.print(f"[red]violation[/red]: {v.message}\n  hint: {v.hint}")
    if result.ok:
        console.print(f"ok: {len(result.checked)} buffers where the {result.mode} plan puts them")
        if result.cold_boot is not None:
            console.print(
                f"ok: cold boot: every byte of every load segment in non-volatile memory "
                f"({', '.join(result.cold_boot) or 'none'}), no ELF header loaded, "
                + (
                    "every segment run from RAM copied at reset from where it is stored"
                    if result.copies_read
                    else "the reset copies are the image's own (no kit copy table to read)"
                )
            )
        for name, size, load_region, load, run_region, run in result.copied:
            console.print(
                f"ok: copied at reset: {name} {size:,} B, {load_region} {load:#010x} -> "
                f"{run_region} {run:#010x}",
                markup=False,
            )


def check_or_raise(elf: Path, plan: Path, quiet: bool = False) -> CheckResult:
    result = check_elf(elf, plan)
    if not quiet:
        render(result)
    else:
        for v in result.violations:
            print(f"violation: {v.message}", file=sys.stderr)
    if not result.ok:
        first = result.violations[0]
        raise ElfCheckError(
            f"{elf}: {len(result.violations)} violation(s) of {plan}; first: {first.message}",
            hint=first.hint,
        )
    return result
