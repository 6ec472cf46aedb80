"""What the plan has put in each region: buffers, linker reserves and load-image copies,
at their alignment. One accounting: the planner decides with it what fits, and
`region_fill(plan)` replays it from a finished plan (or one read back from
memory_plan.json) for the memory report and the QEMU stand-in check, so the report's
"free" is the space the planner had left, not more.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ethosu_kit.board.model import Board, MemoryRegion
from ethosu_kit.core.sizes import align_up
from ethosu_kit.plan.types import MemoryPlan, PlanOptions, RegionUse, Role

# What the linker sizes (code, .data/.bss) is kept free at this alignment.
RESERVE_ALIGN = 8


@dataclass
class Fill:
    """What the plan has put in each region so far (buffers and linker reserves)."""

    board: Board
    used: dict[str, int] = field(default_factory=dict)
    contents: dict[str, list[tuple[str, int]]] = field(default_factory=dict)
    # where each thing starts in its region (what, offset, size): the memory picture
    # (ethosu_kit.report) draws the plan at the planner's own offsets
    placed: dict[str, list[tuple[str, int, int]]] = field(default_factory=dict)

    def offset_after(self, region: MemoryRegion, size: int, align: int) -> int:
        return align_up(self.used.get(region.name, 0), align) + size

    def fits(self, region: MemoryRegion, size: int, align: int) -> bool:
        return self.offset_after(region, size, align) <= region.size

    def put(self, region: MemoryRegion, what: str, size: int, align: int) -> None:
        start = align_up(self.used.get(region.name, 0), align)
        self.placed.setdefault(region.name, []).append((what, start, size))
        self.used[region.name] = self.offset_after(region, size, align)
        self.contents.setdefault(region.name, []).append((what, size))

    def free(self, region: MemoryRegion, align: int = 1) -> int:
        return max(0, region.size - align_up(self.used.get(region.name, 0), align))


def reserves(options: PlanOptions) -> tuple[int, int]:
    """The bytes kept free for code and for .data/.bss: the option, else the app's estimate."""
    code = options.code_reserve
    if code is None:
        code = options.app.code_estimate
    data = options.data_reserve
    if data is None:
        data = options.app.data_estimate
    return code, data


def replay(plan: MemoryPlan) -> Fill:
    """The planner's Fill, rebuilt from the plan in the planner's order: each buffer, then
    its load-image copy; the code and data reserves right after the stack (the planner
    keeps them before the heap and the runner's pools)."""
    board = plan.board
    fill = Fill(board)
    code_size, data_size = reserves(plan.options)
    linker_sized = {b.role: b for b in plan.buffers if b.role in (Role.CODE, Role.DATA)}
    for b in plan.buffers:
        if b.role in (Role.CODE, Role.DATA):
            continue
        fill.put(board.region(b.region), b.name, b.size, b.align)
        if b.load_region is not None and b.load_region != b.region:
            fill.put(board.region(b.load_region), f"{b.name} (load image)", b.size, b.align)
        if b.role == Role.STACK:
            for role, what, size in (
                (Role.CODE, "code (reserve)", code_size),
                (Role.DATA, "data (reserve)", data_size),
            ):
                if role in linker_sized:
                    # code copied at reset ([boot] code = "copy"): its image in
                    # non-volatile memory first, as the planner keeps it
                    load = linker_sized[role].load_region
                    if load is not None:
                        fill.put(board.region(load), "code (load image)", size, RESERVE_ALIGN)
                    region = board.region(linker_sized[role].region)
                    fill.put(region, what, size, RESERVE_ALIGN)
    return fill


def region_fill(plan: MemoryPlan) -> tuple[RegionUse, ...]:
    """Every region of the board: its buffers (placement order) and the bytes the planner
    counted as taken (buffers, code/data reserves, load-image copies, alignment)."""
    fill = replay(plan)
    return tuple(
        RegionUse(
            region,
            tuple(b.name for b in plan.buffers if b.region == region.name),
            fill.used.get(region.name, 0),
        )
        for region in plan.board.regions
    )
