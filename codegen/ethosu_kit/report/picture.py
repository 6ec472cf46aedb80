"""The memory picture: one typed value built once from a plan (and a linked ELF), that the
views (SVG, terminal, HTML, JSON) render without computing anything of their own.

Plan blocks sit at the planner's own offsets (plan.fill.replay: buffers, code/data
reserves, load-image copies, at their alignment), and a region's planned "used" is
plan.fill's figure; ELF blocks are the allocated sections (firmware.elf.read_elf) and a
region's linked used/free are check-elf's row (firmware.elf_check.check_elf), so the
page, memory_report.txt and check-elf never disagree.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from elftools.common.exceptions import ELFError

from ethosu_kit.board.model import MemoryRegion
from ethosu_kit.core.errors import KitError
from ethosu_kit.core.files import MAX_ELF, open_regular
from ethosu_kit.core.named import by_name
from ethosu_kit.core.typed_json import encode
from ethosu_kit.firmware.elf import ELF_ERRORS, Elf, read_elf
from ethosu_kit.firmware.elf_check import check_elf
from ethosu_kit.plan.fill import region_fill, replay, reserves
from ethosu_kit.plan.types import Buffer, MemoryPlan, Role
from ethosu_kit.report.picture_npu import NpuPicture, npu_picture

PICTURE_FORMAT_VERSION = 1
# the largest symbols listed per region (what bloaty or puncover would show first)
TOP_SYMBOLS = 8


class Kind(StrEnum):
    """What a block is, for its colour and legend."""

    NETWORK = "network"
    SCRATCH = "scratch"
    FAST_SCRATCH = "fast_scratch"
    POOL = "pool"  # method pool, planned buffers, IO, the virtual NPU's workspace
    STACK = "stack"
    HEAP = "heap"
    CODE = "code"
    DATA = "data"
    VECTORS = "vectors"  # the self-test's inputs and expected outputs
    INPUT_DATA = "input_data"  # a method input compiled into the image
    LOAD_IMAGE = "load_image"  # the stored copy of something copied at reset
    OTHER = "other"


# One colour per kind, shared by the SVG, the page's legend and the terminal view.
KIND_COLOUR: dict[Kind, str] = {
    Kind.NETWORK: "#1f77b4",
    Kind.SCRATCH: "#d62728",
    Kind.FAST_SCRATCH: "#ff7f0e",
    Kind.POOL: "#2ca02c",
    Kind.STACK: "#9467bd",
    Kind.HEAP: "#8c564b",
    Kind.CODE: "#7f7f7f",
    Kind.DATA: "#bcbd22",
    Kind.VECTORS: "#17becf",
    Kind.INPUT_DATA: "#e377c2",
    Kind.LOAD_IMAGE: "#aec7e8",
    Kind.OTHER: "#c7c7c7",
}

ROLE_KIND: dict[Role, Kind] = {
    Role.NETWORK: Kind.NETWORK,
    Role.SCRATCH: Kind.SCRATCH,
    Role.FAST_SCRATCH: Kind.FAST_SCRATCH,
    Role.METHOD_POOL: Kind.POOL,
    Role.PLANNED: Kind.POOL,
    Role.INPUT: Kind.POOL,
    Role.OUTPUT: Kind.POOL,
    Role.VNPU_WORKSPACE: Kind.POOL,
    Role.STACK: Kind.STACK,
    Role.HEAP: Kind.HEAP,
    Role.CODE: Kind.CODE,
    Role.DATA: Kind.DATA,
    Role.VECTORS: Kind.VECTORS,
    Role.INPUT_DATA: Kind.INPUT_DATA,
    Role.EXTERNAL_DATA: Kind.NETWORK,  # a .ptd: the network's command streams and weights
}

# Output sections the linker fills with code or data (the kit's scripts name these).
_CODE_PREFIXES = (".text", ".rodata", ".vectors", ".ARM", ".init", ".fini", ".ctors", ".dtors")
_DATA_PREFIXES = (".data", ".bss", ".noinit", ".tdata", ".tbss")


class Source(StrEnum):
    PLAN = "plan"
    ELF = "elf"


@dataclass(frozen=True)
class Block:
    """One thing in a region: a plan buffer/reserve/copy, or a linked section."""

    name: str
    kind: Kind
    offset: int  # from the region's base
    size: int
    source: Source
    npu: bool = False  # the NPU reads or writes it
    detail: str = ""  # the plan's why, or "no bytes in the file" for a NOBITS section

    @property
    def colour(self) -> str:
        return KIND_COLOUR[self.kind]


@dataclass(frozen=True)
class Symbol:
    """One of the linked image's largest symbols in a region."""

    name: str
    address: int  # in an executable region without the Thumb bit: where the code starts
    size: int


@dataclass(frozen=True)
class RegionPicture:
    name: str
    kind: str
    base: int
    size: int
    on_chip: bool
    volatile: bool
    npu: bool  # the NPU's AXI masters reach it
    cpu: bool
    gap_before: int  # bytes from the previous region's end (address order); 0 for the first
    plan_blocks: tuple[Block, ...]
    plan_used: int  # plan.fill: what the planner counted as taken
    elf_blocks: tuple[Block, ...] = ()
    npu_port: str = "none"  # the NPU's AXI port that reaches it: sram, ext, both, none
    elf_used: int | None = None  # check-elf's row: sections inside; None without an ELF
    elf_free: int | None = None
    symbols: tuple[Symbol, ...] = ()  # the largest, for an ELF

    @property
    def end(self) -> int:
        return self.base + self.size

    @property
    def plan_free(self) -> int:
        return self.size - self.plan_used


@dataclass(frozen=True)
class Copy:
    """Something copied at reset: stored at load, used at run."""

    name: str
    size: int
    load_region: str
    load_address: int
    run_region: str
    run_address: int
    source: Source


@dataclass(frozen=True)
class MemoryPicture:
    board: str
    mode: str
    accelerator: str
    model: str
    plan: str  # the memory_plan.json (or "" for a plan in memory)
    elf: str  # "" without an ELF
    regions: tuple[RegionPicture, ...]  # address order
    npu: NpuPicture | None  # None: a CPU-only program
    copies: tuple[Copy, ...]
    violations: tuple[str, ...]  # check-elf's, for an ELF
    notes: tuple[str, ...]

    def region(self, name: str) -> RegionPicture:
        return by_name(self.regions, name)

    def kinds(self) -> tuple[Kind, ...]:
        """The kinds present, in legend order."""
        seen = {b.kind for r in self.regions for b in (*r.plan_blocks, *r.elf_blocks)}
        return tuple(k for k in Kind if k in seen)


def _plan_blocks(plan: MemoryPlan) -> dict[str, list[Block]]:
    """Every region's blocks at the offsets plan.fill's replay gives them."""
    buffers = {b.name: b for b in plan.buffers}
    reserves = {"code (reserve)": Kind.CODE, "data (reserve)": Kind.DATA}
    out: dict[str, list[Block]] = {}
    for region, placed in replay(plan).placed.items():
        for what, offset, size in placed:
            b = buffers.get(what)
            if b is not None:
                block = Block(what, ROLE_KIND[b.role], offset, size, Source.PLAN, b.npu, b.why)
            elif what in reserves:
                block = Block(what, reserves[what], offset, size, Source.PLAN, False, "")
            else:  # "<buffer> (load image)"
                block = Block(what, Kind.LOAD_IMAGE, offset, size, Source.PLAN, False, "")
            out.setdefault(region, []).append(block)
    return out


def _section_kind(name: str, by_section: dict[str, Buffer]) -> tuple[Kind, bool]:
    b = by_section.get(name)
    if b is not None:
        return ROLE_KIND[b.role], b.npu
    if name.startswith(_CODE_PREFIXES):
        return Kind.CODE, False
    if name.startswith(_DATA_PREFIXES):
        return Kind.DATA, False
    return Kind.OTHER, False


def _read(elf_path: Path) -> Elf:
    try:
        with open_regular(elf_path, MAX_ELF) as (f, _):
            return read_elf(f)
    except OSError as exc:
        raise KitError(f"{elf_path}: cannot read the ELF ({exc.strerror})") from exc
    except (ELFError, *ELF_ERRORS) as exc:
        raise KitError(f"{elf_path}: not an ELF file ({exc})") from exc


def build_picture(
    plan: MemoryPlan, plan_path: Path | None = None, elf_path: Path | None = None
) -> MemoryPicture:
    """The picture of `plan` and, given `elf_path` (with the plan file it was built from),
    of the linked image."""
    plan_blocks = _plan_blocks(plan)
    # the one region accounting, as memory_report and check-elf show it
    use = {u.region.name: u.used for u in region_fill(plan)}
    elf: Elf | None = None
    rows: dict[str, tuple[int, int]] = {}
    violations: tuple[str, ...] = ()
    if elf_path is not None:
        if plan_path is None:
            raise KitError("an ELF's picture needs the memory_plan.json it was built from")
        elf = _read(elf_path)
        result = check_elf(elf_path, plan_path)
        rows = {row.region.name: (row.used, row.free) for row in result.rows}
        violations = tuple(v.message for v in result.violations)
    by_section: dict[str, Buffer] = {}
    for b in plan.buffers:
        for name in b.section.split():
            by_section.setdefault(name, b)
    ordered = sorted(plan.board.regions, key=lambda r: r.base)
    regions = []
    previous: MemoryRegion | None = None
    for r in ordered:
        gap = max(0, r.base - previous.end) if previous else 0
        previous = r
        elf_blocks: list[Block] = []
        symbols: list[Symbol] = []
        if elf is not None:
            for s in elf.sections:
                if r.contains(s.addr, max(s.size, 1)):
                    kind, npu = _section_kind(s.name, by_section)
                    detail = "no bytes in the file" if s.nobits else ""
                    elf_blocks.append(
                        Block(s.name, kind, s.addr - r.base, s.size, Source.ELF, npu, detail)
                    )
            for name, (value, size) in elf.symbols.items():
                address = value & ~1 if r.executable else value  # Thumb bit
                if size > 0 and r.contains(address, size):
                    symbols.append(Symbol(name, address, size))
            symbols.sort(key=lambda s: (-s.size, s.name))
        used, free = rows.get(r.name, (None, None)) if elf is not None else (None, None)
        regions.append(
            RegionPicture(
                name=r.name,
                kind=r.kind.value,
                base=r.base,
                size=r.size,
                on_chip=r.on_chip,
                volatile=r.volatile,
                npu=r.npu,
                cpu=r.cpu,
                npu_port=r.port.value,
                gap_before=gap,
                plan_blocks=tuple(plan_blocks.get(r.name, ())),
                plan_used=use[r.name],
                elf_blocks=tuple(sorted(elf_blocks, key=lambda b: b.offset)),
                elf_used=used,
                elf_free=free,
                symbols=tuple(symbols[:TOP_SYMBOLS]),
            )
        )
    return MemoryPicture(
        board=plan.board.name,
        mode=plan.mode.value,
        accelerator=plan.accelerator_name,
        model=plan.model_path,
        plan=str(plan_path) if plan_path else "",
        elf=str(elf_path) if elf_path else "",
        regions=tuple(regions),
        npu=npu_picture(plan),
        copies=_copies(plan, plan_blocks, elf),
        violations=violations,
        notes=plan.notes,
    )


def _copies(
    plan: MemoryPlan, plan_blocks: dict[str, list[Block]], elf: Elf | None
) -> tuple[Copy, ...]:
    """Load vs run address of what is copied at reset: from the ELF's segments when there
    is one (a section whose segment's LMA differs from its VMA), else the plan's load images."""
    board = plan.board
    out: list[Copy] = []
    if elf is not None:
        for s in elf.sections:
            if s.nobits:
                continue
            for seg in elf.segments:
                inside = seg.vaddr <= s.addr < seg.vaddr + max(seg.memsz, 1)
                if inside and seg.paddr != seg.vaddr and seg.filesz > 0:
                    load = seg.paddr + (s.addr - seg.vaddr)
                    lr, rr = board.region_at(load), board.region_at(s.addr)
                    out.append(
                        Copy(
                            s.name, s.size, lr.name if lr else "none", load,
                            rr.name if rr else "none", s.addr, Source.ELF,
                        )
                    )  # fmt: skip
                    break
        return tuple(out)
    for b in plan.buffers:
        if b.load_region is None or b.load_region == b.region:
            continue
        load = _offset_of(plan_blocks, b.load_region, f"{b.name} (load image)")
        # the code a board copies into RAM ([boot] code = "copy"): the plan knows its
        # reserve, the linker its size
        code = b.role == Role.CODE
        run = _offset_of(plan_blocks, b.region, f"{b.name} (reserve)" if code else b.name)
        size = reserves(plan.options)[0] if code else b.size
        lr, rr = board.region(b.load_region), board.region(b.region)
        out.append(Copy(b.name, size, lr.name, lr.base + load, rr.name, rr.base + run, Source.PLAN))
    return tuple(out)


def _offset_of(blocks: dict[str, list[Block]], region: str, name: str) -> int:
    for b in blocks.get(region, ()):
        if b.name == name:
            return b.offset
    return 0


def to_json(picture: MemoryPicture) -> dict[str, Any]:
    """The picture's facts for tools (`report --json`)."""
    data = encode(picture)
    assert isinstance(data, dict)
    return {"format": PICTURE_FORMAT_VERSION, **data}
