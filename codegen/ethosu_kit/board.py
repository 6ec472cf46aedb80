"""The board model: a board's CPU, NPU, UART and memory map, written once in its board.toml.

Stage 0 of the data flow: everything downstream (plan, linker script, scatter file,
board header, ELF check) reads the memory map from here and nowhere else.
`load_board()` validates a board file and names the file, the key and the problem
on any error.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class RegionKind(StrEnum):
    ITCM = "itcm"
    DTCM = "dtcm"
    SRAM = "sram"  # on-chip SRAM the NPU can reach (Ethos-U "SRAM")
    BRAM = "bram"  # on-chip code/data RAM (FPGA block RAM on the MPS3)
    ROM = "rom"
    FLASH = "flash"  # external non-volatile (QSPI/OSPI)
    DRAM = "dram"  # external volatile (DDR)


@dataclass(frozen=True)
class MemoryRegion:
    name: str  # identifier used in linker scripts and the plan, e.g. "SRAM"
    kind: RegionKind
    base: int
    size: int
    on_chip: bool
    volatile: bool  # RAM (contents lost at reset) vs non-volatile (flash/ROM)
    cpu: bool  # the CPU can read/write it
    npu: bool  # the NPU's AXI masters can reach it (never the TCMs)
    executable: bool
    writable: bool  # at run time, by the CPU
    loadable: bool  # an ELF loader / debugger / emulator can place initial contents here
    description: str = ""

    @property
    def end(self) -> int:
        """One past the last byte."""
        return self.base + self.size

    def contains(self, address: int, size: int = 1) -> bool:
        return self.base <= address and address + size <= self.end


@dataclass(frozen=True)
class ModeRegisters:
    """NPU register values for one memory mode (driver compile definitions)."""

    qconfig: int
    regioncfg: tuple[int, ...]  # REGIONCFG_0..7 (2 bits each)


@dataclass(frozen=True)
class Npu:
    kinds: tuple[str, ...]  # NPUs this board may carry: ("ethos-u55", "ethos-u65")
    macs: dict[str, tuple[int, ...]]  # per kind, the MAC configurations it may be built with
    base: int  # the address firmware uses (secure alias on Corstone)
    irq: int  # external interrupt number (IRQn, not the vector index)
    secure: bool
    privileged: bool
    # per (kind, mode): the registers; absent pairs are modes the kind cannot run
    registers: dict[tuple[str, str], ModeRegisters] = field(default_factory=dict)
    # AXI outstanding-transaction limits per kind, (reads, writes); informative. A kind
    # with separate ports has "<kind>:sram" and "<kind>:ext" entries instead.
    axi_limits: dict[str, tuple[int, int]] = field(default_factory=dict)
    base_ns: int | None = None  # non-secure alias of `base`, when the board has one

    def supports(self, kind: str, macs: int | None = None) -> bool:
        """Can this board's NPU be `kind` (with `macs` MACs/cycle)?"""
        if kind not in self.kinds:
            return False
        return macs is None or macs in self.macs.get(kind, ())


@dataclass(frozen=True)
class Cpu:
    core: str  # "cortex-m55"
    arch: str  # "armv8.1-m.main"
    fpu: bool
    mve: str  # "", "int" or "fp"
    dcache: bool
    icache: bool
    # compiler flags per toolchain id ("gcc", "clang", "armclang"), as the board needs them
    flags: dict[str, tuple[str, ...]] = field(default_factory=dict)
    clock_hz: int = 25_000_000


@dataclass(frozen=True)
class Uart:
    kind: str  # "cmsdk-apb"
    base: int
    clock_hz: int
    baud: int = 115200
    base_ns: int | None = None  # non-secure alias of `base`, when the board has one


@dataclass(frozen=True)
class Board:
    name: str  # "corstone-300"
    aliases: tuple[str, ...]
    description: str
    source: str  # path of the board.toml it came from (for error messages and headers)
    cpu: Cpu
    npu: Npu
    uart: Uart
    regions: tuple[MemoryRegion, ...]
    qemu_machine: str | None = None  # e.g. "mps3-an547" when QEMU can run this board's images
    # folder with the board's C glue (defaults to the board.toml's folder)
    glue_dir: str | None = None
    # free-form facts only the board's C glue reads (the [glue] table of board.toml)
    glue: dict[str, Any] = field(default_factory=dict)

    def region(self, name: str) -> MemoryRegion:
        for r in self.regions:
            if r.name == name:
                return r
        raise KeyError(name)

    def region_at(self, address: int, size: int = 1) -> MemoryRegion | None:
        for r in self.regions:
            if r.contains(address, size):
                return r
        return None
