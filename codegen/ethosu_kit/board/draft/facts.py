"""A drafted board: the board model's own parts plus where each fact came from (provenance).

`new-board` collects the facts of board.toml from an existing board, a CMSIS pack, an
SVD, the command line and the kit's defaults (board/defaults.py), each source later
than the one before. The facts live once, in the board model's frozen parts
(board/model.py: `Cpu`, `Npu`, `Console`, `Boot`, `Qemu`, `Port`, `MemoryRegion`),
replaced (`dataclasses.replace`) as a source gives one. `Draft.sources` says which
source gave each fact, by schema key ("npu.base"; board/schema.py names them);
`Draft.todo` says which facts are still checked defaults, and why. A fact a source has
not given reads as its part's placeholder: `known()` tells the two apart.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from ethosu_kit.board import defaults
from ethosu_kit.board.cores import CORES
from ethosu_kit.board.model import (
    Boot,
    Console,
    ConsoleKind,
    Cpu,
    MemoryRegion,
    ModeRegisters,
    Npu,
    Port,
    Qemu,
)


class Source(StrEnum):
    """Where a drafted fact came from."""

    BOARD = "board"  # copied from an existing board (new-board --from): to check
    PACK = "pack"  # the CMSIS pack's <device>
    SVD = "svd"  # the SVD's peripherals and <cpu>
    USER = "user"  # the command line
    DEFAULT = "default"  # the kit's safe default (a checked default)
    TODO = "todo"  # nobody knows it: a blocking "TODO" (board/todo.py's TODO_KEYS)


@dataclass
class RegionFacts:
    """A drafted region: the model's region and the notes board.toml writes beside it."""

    region: MemoryRegion
    todo: str = ""  # checked-default note for its npu_port (and npu flag)
    copied: str = ""  # checked-default note for its base and size (new-board --from)


def new_cpu(core: str) -> Cpu:
    """`core`'s [cpu] before any source says more: the schema's defaults. Its `flags` are
    board.toml's [cpu.flags] only (what replaces the flags the loader derives)."""
    arch = CORES[core].arch if core in CORES else ""
    return Cpu(core=core, arch=arch, fpu="none", mve="", dcache=False, icache=False)


def new_npu() -> Npu:
    """An NPU no source has described yet: no kinds, and placeholders for base and irq."""
    return Npu(kinds=(), macs={}, base=0, irq=0, secure=defaults.NPU_SECURE,
               privileged=defaults.NPU_PRIVILEGED)  # fmt: skip


@dataclass
class Draft:
    """Everything board.toml says, each fact with where it came from."""

    name: str
    cpu: Cpu
    npu: Npu = field(default_factory=new_npu)
    console: Console = field(default_factory=lambda: Console(kind=ConsoleKind.NONE))
    boot: Boot | None = None  # None: no [boot] table
    qemu: Qemu | None = None  # None: no [qemu] table
    # the board's own code; `dir` is unused (the folder is where the draft is written)
    port: Port = field(default_factory=lambda: Port(dir=""))
    regions: list[RegionFacts] = field(default_factory=list)
    origin: list[str] = field(default_factory=list)  # header comment lines: the sources
    aliases: list[str] = field(default_factory=list)
    description: str = ""
    console_peripheral: str = ""  # the SVD's name for the console UART, for comments and the stub
    vector_hint: str = ""  # what the sources suggest for a blocking boot.vector_region
    port_files: dict[str, bytes] = field(default_factory=dict)  # [port]'s files: path -> bytes
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

    def unknown(self, key: str) -> None:
        """`key` is a blocking TODO: its value stays the part's placeholder."""
        self.sources[key] = Source.TODO

    def known(self, key: str) -> bool:
        """Has a source (or a default) given `key`, so that its part's value is the fact?"""
        return self.sources.get(key, Source.TODO) is not Source.TODO

    # -- the [npu] tables board.toml writes per kind (the model keys them flat) --

    def npu_registers(self) -> dict[str, dict[str, ModeRegisters]]:
        """[npu.registers.<kind>]: per kind, per memory mode."""
        tables: dict[str, dict[str, ModeRegisters]] = {}
        for (kind, mode), regs in self.npu.registers.items():
            tables.setdefault(kind, {})[mode] = regs
        return tables

    def npu_axi_limits(self) -> dict[str, Any]:
        """[npu.axi_limits]: kind = [reads, writes], or kind = { sram = [..], ext = [..] }
        for a kind with separate ports (the model's "<kind>:<port>" entries)."""
        table: dict[str, Any] = {}
        for key, pair in self.npu.axi_limits.items():
            kind, _, port = key.partition(":")
            if port:
                table.setdefault(kind, {})[port] = list(pair)
            else:
                table[kind] = list(pair)
        return table
