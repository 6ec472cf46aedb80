"""Board regions by attribute, never by name: which regions may hold a kind of buffer,
best first. A custom board works the same way as a built-in one.
"""

from __future__ import annotations

from collections.abc import Callable

from ethosu_kit.board.model import Board, MemoryRegion, RegionKind


def cpu_ram_rank(r: MemoryRegion) -> int:
    """Fastest CPU data RAM first: DTCM, on-chip data RAM, code RAM, NPU SRAM, external."""
    if r.kind == RegionKind.DTCM:
        return 0
    if r.on_chip and not r.npu:
        return 1 if not r.executable else 2
    if r.on_chip:
        return 3
    return 4


def code_rank(r: MemoryRegion) -> int:
    """ITCM, on-chip RAM the NPU does not use, flash (keeps code over reset), NPU SRAM, DRAM."""
    if r.kind == RegionKind.ITCM:
        return 0
    if r.on_chip and r.volatile and not r.npu:
        return 1
    if not r.volatile:
        return 2
    return 3 if r.on_chip else 4


def select(
    board: Board, ok: Callable[[MemoryRegion], bool], rank: Callable[[MemoryRegion], int]
) -> list[MemoryRegion]:
    """Regions passing `ok`, best first (stable: board order breaks ties)."""
    return sorted((r for r in board.regions if ok(r)), key=rank)


def is_cpu_ram(r: MemoryRegion) -> bool:
    """Data RAM: the ITCM is left to code (data accesses to it are slow or impossible)."""
    return r.cpu and r.writable and r.volatile and r.kind != RegionKind.ITCM


def is_npu_sram(r: MemoryRegion) -> bool:
    return r.on_chip and r.npu and r.writable and r.volatile


def npu_sram_rank(r: MemoryRegion) -> int:
    return 0 if r.kind == RegionKind.SRAM else 1


def is_external(r: MemoryRegion) -> bool:
    return not r.on_chip


def const_data_regions(board: Board) -> list[MemoryRegion]:
    """Read-only data the CPU reads (self-test vectors, compiled-in inputs): flash
    first (like the network), then external RAM; never a TCM (the ITCM holds code,
    and a large input overflowed it when it was plain .rodata)."""

    def ok(r: MemoryRegion) -> bool:
        return r.cpu and r.loadable and r.kind not in (RegionKind.ITCM, RegionKind.DTCM)

    def rank(r: MemoryRegion) -> int:
        return (0 if not r.volatile else 1) + (0 if is_external(r) else 2)

    return select(board, ok, rank)
