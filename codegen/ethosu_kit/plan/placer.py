"""Placing buffers in regions: the first candidate region where a buffer fits, a
load-image copy for initial contents in a region nothing loads, linker reserves, and a
`FitError` naming what fills the region when nothing fits.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NoReturn

from ethosu_kit.board.model import Board, MemoryRegion
from ethosu_kit.core.errors import FitError, PlanError
from ethosu_kit.core.sizes import size_text
from ethosu_kit.npu.facts import NPU_ALIGN, MemoryMode
from ethosu_kit.plan.fill import RESERVE_ALIGN, Fill
from ethosu_kit.plan.regions import code_rank, select
from ethosu_kit.plan.types import Buffer, Role


@dataclass(frozen=True, kw_only=True)
class Want:
    """One buffer to place: where it may go (best first) and how to explain a refusal."""

    name: str
    role: Role
    size: int
    candidates: Sequence[MemoryRegion]
    why: str
    hint: str
    # Most buffers are CPU-only runner memory with no initial contents, NPU_ALIGN-aligned
    # (the NPU's and the runner's alignment); the others say how they differ.
    align: int = NPU_ALIGN
    npu: bool = False
    initialized: bool = False
    symbol: str | None = None
    section: str | None = None
    # with no candidate at all: what the board lacks (the NPU's port, the regions that
    # are not on it), in place of the generic "has no region"
    lacking: str = ""


MIN_POOL = NPU_ALIGN  # no zero-length arrays in the generated C
_CPU_HINT = (
    "the CPU-only buffers do not fit the board's RAM: pass a smaller --stack/--heap, "
    "or use a board with more RAM"
)


class Placer:
    """The buffers placed so far on `board` in `mode`, and what fills each region."""

    def __init__(self, board: Board, mode: MemoryMode) -> None:
        self.board = board
        self.mode = mode
        self.fill = Fill(board)
        self.buffers: list[Buffer] = []

    def place(self, want: Want, *, load_region: str | None = None) -> Buffer:
        if not want.candidates:
            if want.lacking:
                raise PlanError(
                    f"{self.board.source}: board {self.board.name} has no region for "
                    f"{want.name}: {want.lacking}",
                    hint='set npu_port ("sram", "ext" or "both") on the [[region]] the '
                    "NPU's port reaches (docs/boards.md: which master reaches which memory), "
                    "or change the board's [npu.registers] for the mode",
                )
            raise PlanError(
                f"{self.board.source}: board {self.board.name} has no region that can hold "
                f"{want.name} ({want.why})",
                hint="add such a region to the board file",
            )
        for region in want.candidates:
            if self.fill.fits(region, want.size, want.align):
                return self._commit(want, region, load_region)
        self._overflow(want)

    def _commit(self, want: Want, region: MemoryRegion, load_region: str | None) -> Buffer:
        self.fill.put(region, want.name, want.size, want.align)
        if want.initialized and load_region is None and not region.loadable:
            load_region = self._load_region_for(want, region)
        buf = Buffer(
            name=want.name,
            role=want.role,
            symbol=want.symbol or f"kit_{want.name}",
            section=want.section or f".kit.{want.name}",
            region=region.name,
            size=want.size,
            align=want.align,
            npu=want.npu,
            initialized=want.initialized,
            load_region=load_region,
            allowed_regions=tuple(r.name for r in want.candidates),
            why=want.why,
        )
        self.buffers.append(buf)
        return buf

    def _load_region_for(self, want: Want, region: MemoryRegion) -> str:
        """Initial contents of a buffer in a region nothing can load: a non-volatile copy."""
        for r in select(self.board, lambda r: r.loadable and not r.volatile, code_rank):
            if self.fill.fits(r, want.size, want.align):
                self.fill.put(r, f"{want.name} (load image)", want.size, want.align)
                return r.name
        raise PlanError(
            f"{self.board.source}: {want.name} needs initial contents in {region.name}, "
            "which is not loadable, and no non-volatile region has room for a copy",
            hint="mark the region loadable = true if a loader fills it, or add flash",
        )

    def _overflow(self, want: Want) -> NoReturn:
        region = max(want.candidates, key=lambda r: r.size)
        held = self.fill.contents.get(region.name, [])
        needed = self.fill.offset_after(region, want.size, want.align)
        filled = " + ".join(f"{what} {size:,}" for what, size in [*held, (want.name, want.size)])
        others = (
            f" (also full: {', '.join(r.name for r in want.candidates if r is not region)})"
            if len(want.candidates) > 1
            else ""
        )
        raise FitError(
            f"region {region.name} of {self.board.name} (0x{region.base:08x}, "
            f"{size_text(region.size)}) overflows in {self.mode.value}: "
            f"needs {needed:,} bytes, has {region.size:,} (short by {needed - region.size:,}); "
            f"filled by {filled}{others}",
            hint=want.hint,
            region=region.name,
            needed=needed,
            available=region.size,
        )

    def reserve(self, regions: Sequence[MemoryRegion], what: str, size: int) -> MemoryRegion:
        """Keep room for something the linker sizes (code, .data/.bss); best region that fits."""
        for region in regions:
            if self.fill.fits(region, size, RESERVE_ALIGN):
                self.fill.put(region, what, size, RESERVE_ALIGN)
                return region
        if not regions:
            raise PlanError(
                f"{self.board.source}: board {self.board.name} has no region for {what}"
            )
        self._overflow(
            Want(
                name=what,
                role=Role.CODE,
                size=size,
                align=RESERVE_ALIGN,
                initialized=True,
                candidates=regions,
                why=what,
                hint="reduce the reserve (PlanOptions code_reserve/data_reserve) or use a "
                "bigger board",
            )
        )

    def place_cpu(
        self,
        name: str,
        role: Role,
        size: int,
        cpu_ram: list[MemoryRegion],
        why: str,
        *,
        hint: str = _CPU_HINT,
    ) -> None:
        """A CPU-only buffer with no initial contents, NPU_ALIGN-aligned, fastest RAM first."""
        want = Want(name=name, role=role, size=size, candidates=cpu_ram, why=why, hint=hint)
        self.place(want)
