"""The memory picture's NPU part: the registers that pick an AXI port (QCONFIG,
REGIONCFG_n), what each addresses, the buffer there and whether the port reaches its
region (`NpuRow`, `NpuPicture`), built from the plan by `npu_picture`.
"""

from __future__ import annotations

from dataclasses import dataclass

from ethosu_kit.board.model import NpuPort
from ethosu_kit.npu.facts import (
    DEFAULT_REGISTERS,
    VELA_REGION_FAST_SCRATCH,
    VELA_REGION_SCRATCH,
    VELA_REGION_WEIGHTS,
    NpuKind,
)
from ethosu_kit.plan.types import MemoryPlan, Role


@dataclass(frozen=True)
class NpuRow:
    """One NPU register that picks an AXI port: what it addresses and where that lies."""

    register: str  # "QCONFIG", "REGIONCFG_1"
    value: int
    port: str  # "M0 (SRAM)" / "M1 (external)" on a U55/U65, "SRAM AXI" / "EXT AXI" on a U85
    addresses: str  # "command stream", "Vela region 1: scratch"
    buffer: str  # the plan's buffer there, "" when none
    region: str  # where that buffer is placed, "" when none
    region_port: str = ""  # that region's npu_port ("" when none)

    @property
    def reached(self) -> bool:
        """Does the register's port reach the region its buffer is in?"""
        if not self.region_port:
            return True
        return NpuPort(self.region_port).reaches(NpuPort.of_value(self.value))


@dataclass(frozen=True)
class NpuPicture:
    accelerator: str
    mode: str
    registers_from: str  # "board" ([npu.registers]) or "upstream default"
    qconfig: int
    regioncfg: tuple[int, ...]
    rows: tuple[NpuRow, ...]
    reachable: tuple[str, ...]  # the regions the NPU reaches, each "NAME (port)"
    axi_limits: dict[str, tuple[int, int]]
    ports: tuple[str, str]  # this NPU's names of its SRAM and its external AXI port


# What each product's TRM calls its two AXI ports: the U55 and U65 have masters M0 (the
# SRAM port) and M1 (the external port); the U85 names its ports by what they reach.
_AXI_PORTS: dict[NpuKind, tuple[str, str]] = {
    NpuKind.U55: ("M0 (SRAM)", "M1 (external)"),
    NpuKind.U65: ("M0 (SRAM)", "M1 (external)"),
    NpuKind.U85: ("SRAM AXI", "EXT AXI"),
}


def _port(value: int, ports: tuple[str, str]) -> str:
    # REGIONCFG/QCONFIG name a memory type: 0 and 1 go out on the SRAM port, 2 and 3 on
    # the external port; each type has its own AXI_LIMIT.
    return ports[0] if value < 2 else ports[1]


def npu_picture(plan: MemoryPlan) -> NpuPicture | None:
    accel = plan.accelerator
    if accel is None:
        return None
    board_regs = plan.board.npu.registers.get((accel.kind, plan.mode.value))
    if board_regs is not None:
        qconfig, regioncfg, source = board_regs.qconfig, board_regs.regioncfg, "board"
    else:
        qconfig, regioncfg = DEFAULT_REGISTERS[plan.mode]
        source = "upstream default"

    def where(role: Role, value: int) -> tuple[str, str, str]:
        """The buffers of `role` (an image of several programs has one network per
        program, a temp pool per lane), their regions, and the port of one the register's
        port does not reach (else of the first)."""
        bs = [b for b in plan.buffers if b.role == role]
        if not bs:
            return ("", "", "")
        regions = [plan.board.region(r) for r in dict.fromkeys(b.region for b in bs)]
        port = NpuPort.of_value(value)
        worst = next((r for r in regions if not r.port.reaches(port)), regions[0])
        names = ", ".join(b.name for b in bs)
        return (names, ", ".join(r.name for r in regions), worst.port.value)

    meaning = {
        VELA_REGION_WEIGHTS: ("region 0: weights", Role.NETWORK),
        VELA_REGION_SCRATCH: ("region 1: scratch, IO", Role.SCRATCH),
        VELA_REGION_FAST_SCRATCH: ("region 2: fast scratch", Role.FAST_SCRATCH),
    }
    ports = _AXI_PORTS[accel.kind]
    rows = [
        NpuRow(
            "QCONFIG",
            qconfig,
            _port(qconfig, ports),
            "command stream",
            *where(Role.NETWORK, qconfig),
        )
    ]
    for i, value in enumerate(regioncfg):
        what, role = meaning.get(i, (f"region {i}: unused", None))
        buffer, region, port = where(role, value) if role else ("", "", "")
        rows.append(
            NpuRow(f"REGIONCFG_{i}", value, _port(value, ports), what, buffer, region, port)
        )
    return NpuPicture(
        accelerator=str(accel),
        mode=plan.mode.value,
        registers_from=source,
        qconfig=qconfig,
        regioncfg=tuple(regioncfg),
        rows=tuple(rows),
        reachable=tuple(f"{r.name} ({r.port.value})" for r in plan.board.regions if r.npu),
        axi_limits=dict(plan.board.npu.axi_limits),
        ports=ports,
    )
