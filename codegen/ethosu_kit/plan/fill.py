"""What the plan has put in each region so far: buffers, linker reserves and load-image
copies, at their alignment. The planner decides with it what fits.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ethosu_kit.board.model import Board, MemoryRegion
from ethosu_kit.core.sizes import align_up


@dataclass
class Fill:
    """What the plan has put in each region so far (buffers and linker reserves)."""

    board: Board
    used: dict[str, int] = field(default_factory=dict)
    contents: dict[str, list[tuple[str, int]]] = field(default_factory=dict)

    def offset_after(self, region: MemoryRegion, size: int, align: int) -> int:
        return align_up(self.used.get(region.name, 0), align) + size

    def fits(self, region: MemoryRegion, size: int, align: int) -> bool:
        return self.offset_after(region, size, align) <= region.size

    def put(self, region: MemoryRegion, what: str, size: int, align: int) -> None:
        self.used[region.name] = self.offset_after(region, size, align)
        self.contents.setdefault(region.name, []).append((what, size))

    def free(self, region: MemoryRegion, align: int = 1) -> int:
        return max(0, region.size - align_up(self.used.get(region.name, 0), align))
