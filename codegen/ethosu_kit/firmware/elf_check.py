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

This module owns the check's run, its result and its table; the per-buffer proofs are
firmware.elf_placement's, the cold-boot and copy-table proof firmware.elf_boot's.
"""

from __future__ import annotations

import hashlib
import itertools
import sys
from dataclasses import dataclass, field
from pathlib import Path

from elftools.common.exceptions import ELFError
from rich.console import Console
from rich.table import Table

from ethosu_kit.board.model import MemoryRegion as Region
from ethosu_kit.core.errors import ElfCheckError, KitError
from ethosu_kit.core.files import MAX_ELF, open_regular
from ethosu_kit.core.names import PLAN_JSON
from ethosu_kit.firmware.elf import Section, read_elf
from ethosu_kit.firmware.elf_boot import (
    check_before_copy,
    check_cold_boot,
    copy_entries,
    copy_rows,
    reset_vector,
)
from ethosu_kit.firmware.elf_placement import check_buffer, check_ports, region_at, region_name_of
from ethosu_kit.layout.link_layout import UNUSED_END, UNUSED_START
from ethosu_kit.plan.fill import region_fill
from ethosu_kit.plan.types import MemoryPlan, Role


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


def check_elf(elf_path: Path, plan_path: Path) -> CheckResult:
    plan = load_plan(plan_path)
    regions = list(plan.board.regions)
    by_name = {r.name: r for r in regions}
    mode = plan.mode.value
    result = CheckResult(str(elf_path), str(plan_path), mode, plan.board.name)

    try:
        with open_regular(elf_path, MAX_ELF) as (f, _):
            elf = read_elf(f, [b.section for b in plan.by_role(Role.EXTERNAL_DATA)])
            copies = copy_entries(f, elf)
            reset = reset_vector(f, elf, plan)
    except OSError as exc:
        raise KitError(f"{elf_path}: cannot read the ELF ({exc.strerror})") from exc
    except ELFError as exc:
        raise KitError(f"{elf_path}: not an ELF file ({exc})") from exc
    symbols = elf.symbols
    sections = elf.sections
    # (vaddr, paddr, filesz) of what the image loads
    loads = [(s.vaddr, s.paddr, s.filesz) for s in elf.segments if s.filesz > 0]

    def violate(what: str, address: int, expected: str, message: str, hint: str) -> None:
        actual = region_name_of(regions, address)
        result.violations.append(Violation(what, address, actual, expected, message, hint))

    # 1. every logical buffer where its mode requires it
    for b in plan.buffers:
        if b.symbol and b.role not in (Role.CODE, Role.DATA):
            check_buffer(
                b, symbols=symbols, regions=regions, by_name=by_name, loads=loads, mode=mode,
                violate=violate,
            )  # fmt: skip
            result.checked.append(b.name)
    check_ports(plan, symbols, by_name, violate, result.ports)

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
        region = region_at(regions, s.addr, s.size)
        if region is None:
            start = region_name_of(regions, s.addr)
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
        check_cold_boot(elf, regions, copies, plan, violate)
        check_before_copy(elf, regions, reset, violate)
        stores = {
            r.name
            for s in elf.segments
            if s.filesz and (r := region_at(regions, s.paddr, s.filesz))
        }
        result.cold_boot = tuple(r.name for r in regions if r.name in stores)
        result.copies_read = copies is not None
        result.copied = copy_rows(elf, regions, copies or [])
    for vaddr, paddr, filesz in loads:
        region = region_at(regions, paddr, filesz)
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
