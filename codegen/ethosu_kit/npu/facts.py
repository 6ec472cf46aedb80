"""What the Arm Ethos-U products are: one place for the NPU facts every stage reads.

The planner (which modes a kind runs, how buffers align), the board loader (which MAC
configurations and modes a board may declare), the pack import (the default register
values), the templates (upstream's values, for the "differs from upstream" notes) and
the ELF check (alignment) all read these, so a fact is written once.
Sources: /work/shared/reference/ethos-u-facts.md, the Ethos-U core driver, Vela.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Final


class MemoryMode(StrEnum):
    """Vela memory modes, named as in Vela's Arm/vela.ini."""

    SRAM_ONLY = "Sram_Only"
    SHARED_SRAM = "Shared_Sram"
    DEDICATED_SRAM = "Dedicated_Sram"

    @classmethod
    def parse(cls, text: str) -> MemoryMode:
        """Accept the vela.ini spellings, including `Dedicated_Sram_384KB`."""
        for mode in cls:
            if text == mode.value or text.startswith(mode.value + "_"):
                return mode
        raise ValueError(text)


def mode_names(last: str = "or") -> str:
    """The memory modes for a help text or hint: "Sram_Only, Shared_Sram or Dedicated_Sram"."""
    *first, final = (m.value for m in MemoryMode)
    return f"{', '.join(first)} {last} {final}"


# Every address the NPU is given (command stream, weights, scratch, IO) is 16-byte
# aligned: the driver refuses base pointers that are not.
NPU_ALIGN: Final = 16

# Vela's region indices (the base pointers a command stream addresses): weights and
# constants, the scratch arena (the delegate's IO lives there), the fast scratch.
VELA_REGION_WEIGHTS: Final = 0
VELA_REGION_SCRATCH: Final = 1
VELA_REGION_FAST_SCRATCH: Final = 2


class NpuKind(StrEnum):
    """The Ethos-U products, named as Vela's --accelerator-config prefixes them."""

    U55 = "ethos-u55"
    U65 = "ethos-u65"
    U85 = "ethos-u85"


U55: Final = NpuKind.U55
U65: Final = NpuKind.U65
U85: Final = NpuKind.U85

# MAC configurations each product exists in. Keyed by NpuKind; typed by str so the board
# file's kinds (plain strings, checked against these keys) index it too.
NPU_MACS: Final[dict[str, tuple[int, ...]]] = {
    U55: (32, 64, 128, 256),
    U65: (256, 512),
    U85: (128, 256, 512, 1024, 2048),
}
# Memory modes each product can run. The U55 has one AXI port pair shared by SRAM and
# external memory: no dedicated SRAM port, so no Dedicated_Sram.
NPU_MODES: Final[dict[str, frozenset[MemoryMode]]] = {
    U55: frozenset({MemoryMode.SRAM_ONLY, MemoryMode.SHARED_SRAM}),
    U65: frozenset(MemoryMode),
    U85: frozenset(MemoryMode),
}
# The NPU register values (QCONFIG, REGIONCFG_0..7) per mode that upstream's
# corstone_utils.cmake sets for every kind; the pack import drafts them, the board
# header notes where a board differs.
DEFAULT_REGISTERS: Final[dict[MemoryMode, tuple[int, tuple[int, ...]]]] = {
    MemoryMode.SRAM_ONLY: (1, (1, 0, 0, 0, 0, 0, 0, 0)),
    MemoryMode.SHARED_SRAM: (2, (3, 0, 1, 1, 1, 1, 1, 1)),
    MemoryMode.DEDICATED_SRAM: (3, (3, 3, 0, 0, 0, 0, 0, 0)),
}
# The MAC configuration the pack import drafts when the user names none.
DEFAULT_MACS: Final[dict[NpuKind, int]] = {U55: 128, U65: 256, U85: 256}
# CONFIG.product (bits 31:28 of the NPU CONFIG register a command stream was built for).
PRODUCT_IDS: Final[dict[int, NpuKind]] = {0: U55, 1: U65, 2: U85}


def runs_mode(kind: str, mode: MemoryMode) -> bool:
    """Can an NPU of this kind run `mode`? (False for unknown kinds.)"""
    return mode in NPU_MODES.get(kind, frozenset())


def mode_refusal(kind: str, mode: MemoryMode) -> str | None:
    """Why `kind` cannot run `mode`, in words for an error message; None when it can."""
    if runs_mode(kind, mode):
        return None
    if kind == U55 and mode == MemoryMode.DEDICATED_SRAM:
        return (
            f"{kind} cannot run {mode.value}: {mode.value} needs an NPU with a dedicated "
            "SRAM port (Ethos-U65/U85)"
        )
    return f"{kind} cannot run {mode.value}"


@dataclass(frozen=True)
class Accelerator:
    """An Ethos-U configuration as Vela names it: "ethos-u55-128" = kind + MACs/cycle."""

    kind: NpuKind
    macs: int

    def __str__(self) -> str:
        return f"{self.kind.value}-{self.macs}"

    @classmethod
    def parse(cls, text: str) -> Accelerator:
        """`ethos-u55-128` -> Accelerator; ValueError for anything not of that shape."""
        kind, _, macs = text.rpartition("-")
        if kind not in NPU_MACS or not macs.isdigit() or macs != str(int(macs)):
            raise ValueError(text)
        return cls(NpuKind(kind), int(macs))

    @classmethod
    def parse_optional(cls, text: str) -> Accelerator | None:
        """The plan's spelling: "none" for a CPU-only program, else an accelerator."""
        return None if text == NO_ACCELERATOR else cls.parse(text)


# memory_plan.json's "accelerator" of a CPU-only program (no Ethos-U delegate).
NO_ACCELERATOR: Final = "none"


def accelerator_text(accelerator: Accelerator | None) -> str:
    """The plan's spelling of an optional accelerator (inverse of `parse_optional`)."""
    return NO_ACCELERATOR if accelerator is None else str(accelerator)
