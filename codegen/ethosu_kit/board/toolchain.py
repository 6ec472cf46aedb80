"""The toolchains a generated project builds with: one place for their names and facts.

The board's per-toolchain compiler flags (`cores`), the generated CMakePresets.json and
kit_board.cmake (`render`), `build --toolchain` and what `--stack auto` measures with
(`firmware`) all read these, so a toolchain is added here once. Each member is the
toolchain id as the presets, the board file's `[cpu.flags]` and the CLI spell it.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Final


class Toolchain(StrEnum):
    GCC = "gcc"
    CLANG = "clang"
    ARMCLANG = "armclang"

    @property
    def compiler(self) -> str:
        """The compiler executable the toolchain file runs (what `build` looks for)."""
        return _FACTS[self][0]

    @property
    def cmake_file(self) -> str:
        """The toolchain file under the kit's cmake/toolchain/."""
        return _FACTS[self][1]

    @property
    def description(self) -> str:
        """The preset's description in CMakePresets.json."""
        return _FACTS[self][2]

    @property
    def target_flags(self) -> tuple[str, ...]:
        """The compile flags that select the bare-metal Arm target (before the CPU's)."""
        return _FACTS[self][3]


_FACTS: Final[dict[Toolchain, tuple[str, str, str, tuple[str, ...]]]] = {
    Toolchain.GCC: (
        "arm-none-eabi-gcc",
        "arm-none-eabi-gcc.cmake",
        "GNU Arm Embedded GCC (arm-none-eabi)",
        (),
    ),
    Toolchain.CLANG: (
        "clang-19",
        "clang.cmake",
        "LLVM clang + lld, arm-none-eabi newlib",
        ("--target=arm-none-eabi",),
    ),
    Toolchain.ARMCLANG: (
        "armclang",
        "armclang.cmake",
        "Arm Compiler 6 (armclang + armlink, scatter file)",
        ("--target=arm-arm-none-eabi",),
    ),
}

# The ids as plain strings, in preset order (board file keys, messages, `choices=`).
TOOLCHAINS: Final[tuple[str, ...]] = tuple(t.value for t in Toolchain)
# What --stack/--heap/--method-pool auto can build and run in QEMU with (no Arm
# Compiler licence on the measuring host).
MEASURE_TOOLCHAINS: Final[tuple[str, ...]] = (Toolchain.GCC.value, Toolchain.CLANG.value)
