"""A drafted board: the board model's facts plus where each came from (provenance).

`new-board` collects the facts of board.toml from an existing board, a CMSIS pack, an
SVD, the command line and the kit's defaults (board/defaults.py), each source later
than the one before. `Draft.sources` says which source gave each fact (by schema key,
e.g. "npu.base"); `Draft.todo` says which facts are still checked defaults, and why.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from ethosu_kit.board import defaults
from ethosu_kit.board.model import BootFrom, ConsoleKind, MemoryRegion, TimerKind


class Source(StrEnum):
    """Where a drafted fact came from."""

    BOARD = "board"  # copied from an existing board (new-board --from): to check
    PACK = "pack"  # the CMSIS pack's <device>
    SVD = "svd"  # the SVD's peripherals and <cpu>
    USER = "user"  # the command line
    DEFAULT = "default"  # the kit's safe default (a checked default or a blocking TODO)


@dataclass
class RegionFacts:
    """A drafted region: the model's region and the notes board.toml writes beside it."""

    region: MemoryRegion
    todo: str = ""  # checked-default note for its npu_port (and npu flag)
    copied: str = ""  # checked-default note for its base and size (new-board --from)


@dataclass
class Draft:
    """Everything board.toml says, each fact with where it came from."""

    name: str
    origin: list[str] = field(default_factory=list)  # header comment lines: the sources
    aliases: list[str] = field(default_factory=list)
    description: str = ""
    # [cpu]
    core: str = ""
    fpu: str = "none"
    mve: str = ""
    dsp: bool = True
    dcache: bool = False
    icache: bool = False
    dcache_line: int = defaults.DCACHE_LINE
    trustzone: bool = False
    irqs: int | None = None
    timer: TimerKind = TimerKind.SYSTICK
    clock_hz: int = defaults.CLOCK_HZ
    flags: dict[str, list[str]] = field(default_factory=dict)
    cpu_extra: dict[str, Any] = field(default_factory=dict)  # [cpu] keys this module does not know
    # [npu]
    npu_kinds: list[str] = field(default_factory=list)
    npu_macs: dict[str, list[int]] = field(default_factory=dict)
    npu_base: int | None = None
    npu_base_ns: int | None = None
    npu_irq: int | None = None
    npu_secure: bool = defaults.NPU_SECURE
    npu_privileged: bool = defaults.NPU_PRIVILEGED
    npu_registers: dict[str, dict[str, tuple[int, tuple[int, ...]]]] = field(default_factory=dict)
    npu_axi: dict[str, Any] = field(default_factory=dict)
    # [console]
    console_kind: ConsoleKind = ConsoleKind.NONE
    console_base: int | None = None
    console_base_ns: int | None = None
    console_clock_hz: int = defaults.CLOCK_HZ
    console_baud: int = defaults.BAUD
    console_peripheral: str = ""  # the SVD's name, for comments and the stub
    console_source: str = ""  # where the console came from; "" = nowhere (a TODO)
    # [boot]
    vector_region: str | None = None
    vector_address: int | None = None
    vector_hint: str = ""  # what the sources suggest for a blocking vector_region, if anything
    # a port boots cold from its non-volatile memory unless it boots from a RAM a boot ROM
    # or debugger fills
    boot_from: BootFrom = BootFrom.NV
    # [qemu]
    qemu_machine: str | None = None
    qemu_cpu: str | None = None
    qemu_stand_in: str = ""
    # [port]: the files come with it (relative path -> bytes)
    port_sources: list[str] = field(default_factory=list)
    port_include_dirs: list[str] = field(default_factory=list)
    port_cmake: str | None = None
    port_hooks: list[str] = field(default_factory=list)
    port_files: dict[str, bytes] = field(default_factory=dict)
    regions: list[RegionFacts] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # pack memories left out, and why
    glue: dict[str, Any] = field(default_factory=dict)
    todo: dict[str, str] = field(default_factory=dict)  # key -> why (checked defaults)
    # tables of a copied board this module does not draft itself ([fvp], [qemu.layout], any
    # later one), as the board file has them: dotted table name -> its keys
    passthrough: dict[str, dict[str, Any]] = field(default_factory=dict)
    sources: dict[str, Source] = field(default_factory=dict)  # schema key -> its source

    def given(self, source: Source, *keys: str) -> None:
        """Record that `source` gave the facts of `keys`: from a source that knows this
        SoC (not a copied board, not a default), a fact is no longer one to check."""
        for key in keys:
            self.sources[key] = source
            if source not in (Source.BOARD, Source.DEFAULT):
                self.todo.pop(key, None)

    def defaulted(self, key: str, why: str) -> None:
        """`key` is the kit's safe default: a checked default, `why` on its line."""
        self.sources[key] = Source.DEFAULT
        self.todo[key] = why
