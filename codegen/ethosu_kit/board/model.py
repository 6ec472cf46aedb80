"""The board model: a board's CPU, NPU, console, memory map and own code, from its board.toml.

Stage 0 of the data flow: everything downstream (plan, linker script, scatter file,
board header, ELF check) reads the memory map from here and nowhere else.
`load_board()` validates a board file and names the file, the key and the problem
on any error.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from enum import StrEnum
from pathlib import Path
from typing import Any

from ethosu_kit.board import defaults
from ethosu_kit.core.named import by_name


class RegionKind(StrEnum):
    ITCM = "itcm"
    DTCM = "dtcm"
    SRAM = "sram"  # on-chip SRAM the NPU can reach (Ethos-U "SRAM")
    BRAM = "bram"  # on-chip code/data RAM (FPGA block RAM on the MPS3)
    ROM = "rom"
    FLASH = "flash"  # external non-volatile (QSPI/OSPI)
    DRAM = "dram"  # external volatile (DDR)


class NpuPort(StrEnum):
    """Which of the NPU's AXI master ports reaches a region (its `npu_port`).

    The Ethos-U55/U65 have two, M0 (AXI0) and M1 (AXI1); the Ethos-U85 an SRAM and an
    EXT port. QCONFIG (the command stream) and REGIONCFG_n (Vela region n) pick a memory
    type per buffer: 0 and 1 go out on the SRAM port (M0), 2 and 3 on the external one
    (M1; on a U85 with the driver's default MEM_ATTR). "sram" is the NPU's view, not the
    memory's: whatever that port is wired to, on-chip or not."""

    SRAM = "sram"  # M0 / AXI0 / the U85's SRAM port: memory types 0, 1
    EXT = "ext"  # M1 / AXI1 / the U85's EXT port: memory types 2, 3
    BOTH = "both"  # either port reaches it (a shared interconnect)
    NONE = "none"  # the NPU does not reach it (a TCM, memory only the CPU or a DMA reaches)

    @classmethod
    def of_value(cls, value: int) -> NpuPort:
        """The port a QCONFIG/REGIONCFG memory type (0..3) sends its transactions to."""
        return cls.SRAM if value < 2 else cls.EXT

    def reaches(self, port: NpuPort) -> bool:
        """Does a region with this `npu_port` answer transactions on `port`?"""
        return self == port or (self == NpuPort.BOTH and port != NpuPort.NONE)


NPU_PORTS: tuple[str, ...] = tuple(p.value for p in NpuPort)


def default_npu_port(kind: RegionKind, npu: bool) -> NpuPort:
    """A region's port when the board does not say: none where the NPU does not reach,
    the SRAM port for an "sram" (the Ethos-U SRAM), the external port for the rest."""
    if not npu:
        return NpuPort.NONE
    return NpuPort.SRAM if kind == RegionKind.SRAM else NpuPort.EXT


@dataclass(frozen=True)
class RegionAttrs:
    """What a region allows; a kind implies a set (KIND_ATTRS), each key of board.toml
    may change one."""

    on_chip: bool
    volatile: bool  # RAM (contents lost at reset) vs non-volatile (flash/ROM)
    cpu: bool  # the CPU can read/write it
    npu: bool  # the NPU's AXI masters can reach it (never the TCMs)
    executable: bool
    writable: bool  # at run time, by the CPU
    loadable: bool  # an ELF loader / debugger / emulator can place initial contents here


REGION_ATTRS: tuple[str, ...] = tuple(f.name for f in fields(RegionAttrs))


def _implied(*true: str) -> RegionAttrs:
    """The attributes named true, the others false."""
    return RegionAttrs(**{attr: attr in true for attr in REGION_ATTRS})


_RAM = ("volatile", "cpu", "writable", "loadable")
KIND_ATTRS: dict[RegionKind, RegionAttrs] = {
    RegionKind.ITCM: _implied("on_chip", *_RAM, "executable"),
    RegionKind.DTCM: _implied("on_chip", *_RAM),
    RegionKind.SRAM: _implied("on_chip", *_RAM, "npu"),
    RegionKind.BRAM: _implied("on_chip", *_RAM, "executable"),
    RegionKind.ROM: _implied("on_chip", "cpu", "executable", "loadable"),
    RegionKind.FLASH: _implied("cpu", "npu", "executable", "loadable"),
    RegionKind.DRAM: _implied(*_RAM, "npu", "executable"),
}


def implied_attrs(kind: RegionKind, cold_boot: bool, volatile: bool | None = None) -> RegionAttrs:
    """A kind's attributes on a board that boots cold ([boot] from = "nv"): nothing fills
    volatile memory before reset, so a RAM is not loadable unless its [[region]] says so.
    `volatile` is what the [[region]] writes, when it does: a block RAM a board controller
    fills before reset (`volatile = false`) holds an image like flash, so it stays
    loadable; a memory written volatile is not, whatever its kind."""
    attrs = KIND_ATTRS[kind]
    if volatile is not None:
        attrs = replace(attrs, volatile=volatile)
    if cold_boot and attrs.volatile:
        return replace(attrs, loadable=False)
    return attrs


class ConsoleKind(StrEnum):
    """Where kit_putc writes (the strings are board.toml's and kit_board_config.h's)."""

    CMSDK_APB = "cmsdk-apb"  # Arm's CMSDK APB UART
    PL011 = "pl011"  # Arm's PrimeCell UART
    SEMIHOSTING = "semihosting"
    CUSTOM = "custom"  # the board's own C ([port] hooks = ["console"])
    NONE = "none"

    @property
    def mmio(self) -> bool:
        """A UART the kit drives at a register base."""
        return self in (ConsoleKind.CMSDK_APB, ConsoleKind.PL011)


class TimerKind(StrEnum):
    """The cycle counter ([cpu].timer)."""

    SYSTICK = "systick"
    DWT = "dwt"  # where SysTick stops (e.g. sleeping cores)
    CUSTOM = "custom"  # the board's own C ([port] hooks = ["timer"])


@dataclass(frozen=True)
class _Extent:
    """Where a region is: its name and address range (MemoryRegion's first fields)."""

    name: str  # identifier used in linker scripts and the plan, e.g. "SRAM"
    kind: RegionKind
    base: int
    size: int


# A region is where it is plus what it allows. Dataclass fields come from the bases in
# reverse MRO order, so the fields stay name, kind, base, size, then RegionAttrs' (the
# order memory_plan.json writes them in), then the region's own.
@dataclass(frozen=True)
class MemoryRegion(RegionAttrs, _Extent):
    description: str = ""
    # the NPU's AXI port that reaches it; None: default_npu_port(kind, npu)
    npu_port: NpuPort | None = None

    def __post_init__(self) -> None:
        port = default_npu_port(self.kind, self.npu) if self.npu_port is None else self.npu_port
        object.__setattr__(self, "npu_port", NpuPort(port))

    @property
    def port(self) -> NpuPort:
        """`npu_port`, typed (never None after construction)."""
        return NpuPort(self.npu_port or NpuPort.NONE)

    def npu_reaches(self, port: NpuPort) -> bool:
        """Can the NPU address this region over `port`?"""
        return self.npu and self.port.reaches(port)

    @property
    def end(self) -> int:
        """One past the last byte."""
        return self.base + self.size

    @property
    def runs_copied_code(self) -> bool:
        """RAM a start-up can copy code into and the CPU execute from ([boot] code = "copy")."""
        return self.cpu and self.volatile and self.writable and self.executable

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
    core: str  # "cortex-m55" (a key of ethosu_kit.board.cores.CORES)
    arch: str  # "armv8.1-m.main", from the core
    fpu: str  # "dp", "sp" or "none"
    mve: str  # "", "int" or "fp"
    dcache: bool
    icache: bool
    # compiler flags per toolchain id ("gcc", "clang", "armclang"): derived from core, fpu
    # and mve (ethosu_kit.board.cores.cpu_flags), each replaced by the board's [cpu.flags] entry
    flags: dict[str, tuple[str, ...]] = field(default_factory=dict)
    clock_hz: int = defaults.CLOCK_HZ
    dcache_line: int = defaults.DCACHE_LINE  # bytes
    trustzone: bool = False  # the Armv8-M Security Extension is present
    irqs: int = defaults.IRQS  # external interrupts the NVIC has: the vector table's size
    timer: TimerKind = TimerKind.SYSTICK  # the cycle counter
    dsp: bool = True  # the DSP extension (optional on the Cortex-M33 only)

    @property
    def has_fpu(self) -> bool:
        return self.fpu != "none"

    @property
    def armv8m(self) -> bool:
        """Armv8-M mainline (MSPLIM, SecureFault), as opposed to Armv7-M."""
        return self.arch.startswith("armv8")

    @property
    def vector_table_bytes(self) -> int:
        """16 system exception vectors and one per external interrupt."""
        return (16 + self.irqs) * 4

    @property
    def vector_table_align(self) -> int:
        """VTOR needs the table aligned to its size rounded up to a power of two, >= 128."""
        return max(128, 1 << (self.vector_table_bytes - 1).bit_length())


@dataclass(frozen=True)
class Console:
    """Where kit_putc writes: a UART driver the kit has, semihosting, the board's C, or nowhere."""

    kind: ConsoleKind
    base: int = 0  # MMIO kinds only
    clock_hz: int = defaults.CLOCK_HZ
    baud: int = defaults.BAUD
    base_ns: int | None = None  # non-secure alias of `base`, when the board has one

    @property
    def mmio(self) -> bool:
        return ConsoleKind(self.kind).mmio


MMIO_CONSOLES: tuple[str, ...] = tuple(k.value for k in ConsoleKind if k.mmio)
CONSOLE_KINDS: tuple[str, ...] = tuple(k.value for k in ConsoleKind)
TIMER_KINDS: tuple[str, ...] = tuple(k.value for k in TimerKind)


class BootFrom(StrEnum):
    """How an image reaches the part at reset ([boot] from)."""

    # Cold boot from non-volatile memory (flash, MRAM, ROM): every initial byte of the image
    # is stored there; what runs from RAM is copied by the start-up. A real part's way.
    NV = "nv"
    # A debugger, an emulator or a boot loader puts the ELF's load segments wherever they
    # point before the core starts (QEMU -kernel, an FVP, a debugger's load).
    LOADER = "loader"


class BootCode(StrEnum):
    """Where a cold-boot image's code runs ([boot] code)."""

    # Executed in place from the non-volatile region that stores it.
    XIP = "xip"
    # Stored there, copied into a fast executable RAM (an ITCM, an SRAM) by the start-up
    # at reset and run from it; the reset code, the vectors and the copy tables stay.
    COPY = "copy"


@dataclass(frozen=True)
class Boot:
    """Where the core finds its vector table at reset (VTOR's reset value), and how the
    image got there."""

    vector_region: str  # the region holding it
    vector_address: int  # its address (the region's start unless the board says otherwise)
    image_from: BootFrom = BootFrom.LOADER  # [boot] from
    # [boot] code and code_region: written to memory_plan.json only when set, so that a
    # plan of a board without them reads (and hashes) as before
    code: BootCode = field(default=BootCode.XIP, metadata={"omit_default": True})
    code_region: str | None = field(default=None, metadata={"omit_default": True})


@dataclass(frozen=True)
class RegionPlace:
    """Where a stand-in machine has one of the board's regions: `name` at `base`, `size`."""

    name: str
    base: int
    size: int


@dataclass(frozen=True)
class QemuLayout:
    """The board's memory map laid onto a stand-in machine ([qemu.layout]): the regions it
    has elsewhere (or smaller) and where that machine boots. `gen --qemu-stand-in` plans
    and links an image with it; `ethosu-kit run` checks an image against it."""

    regions: tuple[RegionPlace, ...] = ()
    vector_region: str | None = None  # [boot] vector_region on the stand-in


@dataclass(frozen=True)
class Fvp:
    """The Arm Fixed Virtual Platform that runs this board's images ([fvp]): the executable
    per NPU kind and the instance names its parameters start with (`<npu>.num_macs`,
    `<board>.<uart>.out_file`, `<cpu>.semihosting-enable`, …)."""

    models: dict[str, str]  # NPU kind -> FVP executable, e.g. "FVP_Corstone_SSE-300_Ethos-U55"
    board: str  # "mps3_board"
    cpu: str  # "cpu0"
    npu: str = ""  # "ethosu"; "" when the model has no NPU to configure
    uart: str = defaults.FVP_UART  # the console UART of the board's [console]
    params: tuple[str, ...] = ()  # further "instance.parameter=value"


@dataclass(frozen=True)
class Qemu:
    """The QEMU machine that runs this board's images (`ethosu-kit run`)."""

    machine: str  # "mps2-an500"
    cpu: str  # "-cpu"
    stand_in: str = ""  # non-empty: QEMU models a different machine; said on every run
    layout: QemuLayout | None = None  # the stand-in's memory map, where it differs


@dataclass(frozen=True)
class Port:
    """The board's own code: C sources, include folders, an optional CMake file, its hooks."""

    dir: str  # absolute folder the paths below are relative to (the board.toml's folder)
    sources: tuple[str, ...] = ()
    include_dirs: tuple[str, ...] = ()
    cmake: str | None = None
    hooks: tuple[str, ...] = ()  # HAL hooks (board.hooks.HOOKS) the sources implement

    def path(self, relative: str) -> str:
        return str(Path(self.dir) / relative)


@dataclass(frozen=True)
class Board:
    name: str  # "corstone-300"
    aliases: tuple[str, ...]
    description: str
    source: str  # path of the board.toml it came from (for error messages and headers)
    cpu: Cpu
    npu: Npu
    console: Console
    regions: tuple[MemoryRegion, ...]
    port: Port
    boot: Boot | None = None  # None: the vector table starts the code region (schema 1)
    qemu: Qemu | None = None  # None: no QEMU machine runs this board's images
    # True: this is the board laid onto its QEMU stand-in ([qemu.layout] applied)
    qemu_layout: bool = False
    fvp: Fvp | None = None  # None: no FVP is named for this board
    schema: int = 2  # the schema the file was written in (schema1.py reads the first)
    # free-form facts only the board's C reads (the [glue] table of board.toml)
    glue: dict[str, Any] = field(default_factory=dict)
    # keys a drafted board still leaves "TODO" (board.todo.TODO_KEYS): facts the kit
    # cannot guess; what needs one refuses with an error naming it (board.todo.require)
    todo: tuple[str, ...] = ()
    # named external data ([external_data]): the region each .ptd placement tag goes to
    external_data: dict[str, str] = field(default_factory=dict)

    @property
    def cold_boot(self) -> bool:
        """The image boots from non-volatile memory: nothing loads RAM before reset."""
        return self.boot is not None and self.boot.image_from == BootFrom.NV

    @property
    def code_copied(self) -> bool:
        """A cold-boot image whose code the start-up copies into RAM ([boot] code = "copy")."""
        return self.cold_boot and self.boot is not None and self.boot.code == BootCode.COPY

    def region(self, name: str) -> MemoryRegion:
        return by_name(self.regions, name)

    def region_at(self, address: int, size: int = 1) -> MemoryRegion | None:
        for r in self.regions:
            if r.contains(address, size):
                return r
        return None
