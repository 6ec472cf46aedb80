"""Board regions by attribute, never by name: which regions may hold a kind of buffer,
best first. A custom board works the same way as a built-in one.

What decides is what a memory is, not where it sits: non-volatile or not (what keeps
the network and the constant data over reset), which of the NPU's AXI ports reaches it
(`npu_port`, matched against the port the board's QCONFIG/REGIONCFG send each NPU
buffer to), and its size. `on_chip` only orders CPU RAM by speed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ethosu_kit.board.model import Board, MemoryRegion, NpuPort, RegionKind
from ethosu_kit.npu.facts import (
    DEFAULT_REGISTERS,
    VELA_REGION_FAST_SCRATCH,
    VELA_REGION_SCRATCH,
    VELA_REGION_WEIGHTS,
    MemoryMode,
)
from ethosu_kit.plan.types import Role

_TCMS = (RegionKind.ITCM, RegionKind.DTCM)


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
    board: Board, ok: Callable[[MemoryRegion], bool], rank: Callable[[MemoryRegion], object]
) -> list[MemoryRegion]:
    """Regions passing `ok`, best first (stable: board order breaks ties)."""
    return sorted((r for r in board.regions if ok(r)), key=rank)  # type: ignore[arg-type]


def is_cpu_ram(r: MemoryRegion) -> bool:
    """Data RAM: the ITCM is left to code (data accesses to it are slow or impossible)."""
    return r.cpu and r.writable and r.volatile and r.kind != RegionKind.ITCM


# -- the NPU's view -----------------------------------------------------------------------


@dataclass(frozen=True)
class NpuView:
    """The AXI port the NPU sends each of its buffers to: the board's QCONFIG and
    REGIONCFG_0..2 for the NPU kind and memory mode (memory types 0-1: the SRAM port,
    2-3: the external one). A buffer goes only where its port reaches."""

    qconfig: int
    regioncfg: tuple[int, ...]

    @classmethod
    def of(cls, board: Board, kind: str, mode: MemoryMode) -> NpuView:
        regs = board.npu.registers.get((kind, mode.value))
        if regs is not None:
            return cls(regs.qconfig, tuple(regs.regioncfg))
        qconfig, regioncfg = DEFAULT_REGISTERS[mode]
        return cls(qconfig, regioncfg)

    @property
    def command(self) -> NpuPort:
        """QCONFIG: the command stream (inside the network)."""
        return NpuPort.of_value(self.qconfig)

    def region(self, index: int) -> NpuPort:
        """REGIONCFG_<index>: Vela region 0 weights, 1 scratch (and IO), 2 fast scratch."""
        return NpuPort.of_value(self.regioncfg[index])

    def register_text(self, index: int | None) -> str:
        """'QCONFIG = 2' or 'REGIONCFG_1 = 0', for messages."""
        if index is None:
            return f"QCONFIG = {self.qconfig}"
        return f"REGIONCFG_{index} = {self.regioncfg[index]}"


def _reaches_all(r: MemoryRegion, ports: tuple[NpuPort, ...]) -> bool:
    return all(r.npu_reaches(p) for p in ports)


def _exact(r: MemoryRegion, ports: tuple[NpuPort, ...]) -> int:
    """0 for a region on exactly the wanted port, 1 for one any port reaches ("both")."""
    return 0 if all(r.port == p for p in ports) else 1


def npu_sram(board: Board, port: NpuPort) -> list[MemoryRegion]:
    """What Vela's modes call SRAM: RAM of kind "sram" that `port` reaches (the scratch
    in Sram_Only/Shared_Sram, the fast scratch in Dedicated_Sram)."""

    def ok(r: MemoryRegion) -> bool:
        return r.kind == RegionKind.SRAM and r.npu_reaches(port) and r.writable and r.volatile

    return select(board, ok, lambda r: _exact(r, (port,)))


def npu_far_ram(board: Board, port: NpuPort) -> list[MemoryRegion]:
    """Dedicated_Sram's "DRAM" side: CPU RAM that `port` reaches (the temp pool), any
    memory but Vela's SRAM first, then SRAM (a large one serves when the board wires it
    to that port), then by size."""

    def ok(r: MemoryRegion) -> bool:
        return is_cpu_ram(r) and r.npu_reaches(port)

    return select(board, ok, lambda r: (_exact(r, (port,)), r.kind == RegionKind.SRAM, -r.size))


def _keeps(board: Board, r: MemoryRegion) -> int:
    """Constant data's preference: the non-volatile region the core boots from (read at
    reset with nothing set up: an on-chip MRAM or flash, not an external flash that
    needs its XIP set up first), other flash, a ROM (the boot code's), then RAM."""
    if r.volatile:
        return 3
    if r.kind == RegionKind.ROM:
        return 2
    boot = board.boot
    return 0 if boot is not None and boot.vector_region == r.name else 1


def network_regions(board: Board, ports: tuple[NpuPort, ...] | None) -> list[MemoryRegion]:
    """Where the .pte may go outside Vela's SRAM: memory the CPU reads and a loader
    fills, that every port in `ports` reaches (None: a CPU-only program, no NPU);
    non-volatile first (the boot region first), then RAM other than the NPU's SRAM,
    larger first."""

    def ok(r: MemoryRegion) -> bool:
        if not (r.cpu and r.loadable and r.kind not in _TCMS):
            return False
        return ports is None or _reaches_all(r, ports)

    def rank(r: MemoryRegion) -> tuple[int, int, bool, int]:
        exact = 0 if ports is None else _exact(r, ports)
        return (_keeps(board, r), exact, r.kind == RegionKind.SRAM, -r.size)

    return select(board, ok, rank)


def const_data_regions(board: Board, beside: MemoryRegion | None = None) -> list[MemoryRegion]:
    """Read-only data the CPU reads (self-test vectors, compiled-in inputs): beside the
    network (`beside`) when that is non-volatile, then as the network would go; never
    a TCM (the ITCM holds code, and a large input overflowed it when it was .rodata)."""

    def ok(r: MemoryRegion) -> bool:
        return r.cpu and r.loadable and r.kind not in _TCMS

    def rank(r: MemoryRegion) -> tuple[int, int, bool, int]:
        if beside is not None and r.name == beside.name and not r.volatile:
            return (-1, 0, False, 0)
        return (_keeps(board, r), 0, r.kind == RegionKind.SRAM, -r.size)

    return select(board, ok, rank)


def unreachable(board: Board, port: NpuPort, fits: Callable[[MemoryRegion], bool]) -> str:
    """Why no region serves an NPU buffer on `port`: the regions that would, but for
    the port, each with the port it has ("" when there are none)."""
    near = [r for r in board.regions if fits(r) and not r.npu_reaches(port)]
    if not near:
        return ""
    said = ", ".join(
        f'{r.name} (npu_port = "{r.port}"{": only the CPU reaches it" * (not r.npu)})' for r in near
    )
    return f"; not on that port: {said}"


# Which register picks the port of each NPU buffer: QCONFIG and REGIONCFG_0 the
# network's (command stream, weights), REGIONCFG_1 the temp pool's, REGIONCFG_2 the
# fast scratch's. Keyed by the buffer's role: an image of several programs has one
# network per program and a temp pool per lane (docs/multi-model.md).
NPU_REGISTERS: dict[Role, tuple[int | None, ...]] = {
    Role.NETWORK: (None, VELA_REGION_WEIGHTS),
    Role.SCRATCH: (VELA_REGION_SCRATCH,),
    Role.FAST_SCRATCH: (VELA_REGION_FAST_SCRATCH,),
}


def buffer_port(view: NpuView, role: Role) -> str:
    """'ext (QCONFIG = 2, REGIONCFG_0 = 3)': the port an NPU buffer is read over and the
    registers that pick it ("" for a buffer the NPU does not address)."""
    registers = NPU_REGISTERS.get(role)
    if registers is None:
        return ""
    ports = dict.fromkeys(view.command if i is None else view.region(i) for i in registers)
    said = ", ".join(view.register_text(i) for i in registers)
    return f"{'+'.join(p.value for p in ports)} ({said})"


def port_refusal(view: NpuView, name: str, role: Role, region: MemoryRegion) -> str:
    """Why NPU buffer `name` (of `role`) cannot be in `region`: a port its registers pick
    does not reach it ("" when every one does, or the buffer is none the NPU addresses)."""
    for i in NPU_REGISTERS.get(role, ()):
        port = view.command if i is None else view.region(i)
        if not region.npu_reaches(port):
            return (
                f'{region.name} (npu_port = "{region.port}") is not on the NPU\'s '
                f'"{port}" port, which {view.register_text(i)} picks for {name}'
            )
    return ""
