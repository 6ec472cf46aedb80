"""The Cortex-M cores the kit builds for, and the compiler flags each configuration needs.

The one place where a core's facts live: which FPUs it can have, whether it has MVE,
the Security Extension, L1 caches, how many external interrupts its NVIC takes, and how
GCC, clang and Arm Compiler 6 spell it. A board names `core`, `fpu` and `mve`; its
`[cpu.flags]` only overrides what `cpu_flags()` derives here.
"""

from __future__ import annotations

from dataclasses import dataclass

from ethosu_kit.board.model import Cpu
from ethosu_kit.board.toolchain import Toolchain

FPU_KINDS = ("none", "sp", "dp")  # no FPU, single precision, double precision
MVE_KINDS = ("", "int", "fp")  # Armv8.1-M M-profile Vector Extension


@dataclass(frozen=True)
class Core:
    name: str  # "cortex-m7", as -mcpu spells it
    arch: str  # "armv7e-m", as -march spells it
    fpus: tuple[str, ...]  # FPUs it can be built with besides "none"; [0] is "fpu = true"
    mve: bool  # Armv8.1-M MVE is an option
    trustzone: bool  # the Armv8-M Security Extension is an option
    caches: bool  # L1 instruction/data caches are an option
    dcache_line: int  # bytes, when it has a data cache
    max_irqs: int  # external interrupts the NVIC can have
    # -mfpu for each FPU, for cores whose -mcpu does not imply one ("" = implied)
    mfpu: tuple[tuple[str, str], ...] = ()
    # GCC 12.2 (Debian) has no -mcpu for it: -march with these extensions and this -mtune
    gcc_march_tune: str = ""
    dsp_optional: bool = False  # the DSP extension may be left out (Cortex-M33)

    @property
    def armv8m(self) -> bool:
        """Armv8-M mainline: MSPLIM/PSPLIM, SAU, SecureFault."""
        return self.arch.startswith("armv8")


CORES: dict[str, Core] = {
    c.name: c
    for c in (
        Core("cortex-m4", "armv7e-m", ("sp",), mve=False, trustzone=False, caches=False,
             dcache_line=32, max_irqs=240, mfpu=(("sp", "fpv4-sp-d16"),)),
        Core("cortex-m7", "armv7e-m", ("dp", "sp"), mve=False, trustzone=False, caches=True,
             dcache_line=32, max_irqs=240, mfpu=(("sp", "fpv5-sp-d16"), ("dp", "fpv5-d16"))),
        Core("cortex-m33", "armv8-m.main", ("sp",), mve=False, trustzone=True, caches=False,
             dcache_line=32, max_irqs=480, mfpu=(("sp", "fpv5-sp-d16"),), dsp_optional=True),
        Core("cortex-m55", "armv8.1-m.main", ("dp",), mve=True, trustzone=True, caches=True,
             dcache_line=32, max_irqs=480),
        Core("cortex-m85", "armv8.1-m.main", ("dp",), mve=True, trustzone=True, caches=True,
             dcache_line=32, max_irqs=480, gcc_march_tune="cortex-m55"),
    )
}  # fmt: skip

TARGETS = {t.value: t.target_flags for t in Toolchain}

# A C preprocessor test, per architecture, that the compiler builds for it (the ACLE's
# __ARM_ARCH_*__ names, as GCC, clang and Arm Compiler 6 define them). GCC 12 spells
# Armv8.1-M mainline as __ARM_ARCH_8M_MAIN__ too (only clang has __ARM_ARCH_8_1M_MAIN__),
# so with GCC the two mainlines are told apart by MVE and the FPU (arch_mismatch_tests).
ARCH_TESTS: dict[str, str] = {
    "armv6-m": "defined(__ARM_ARCH_6M__)",
    "armv7-m": "defined(__ARM_ARCH_7M__)",
    "armv7e-m": "defined(__ARM_ARCH_7EM__)",
    "armv8-m.base": "defined(__ARM_ARCH_8M_BASE__)",
    "armv8-m.main": "defined(__ARM_ARCH_8M_MAIN__) && !defined(__ARM_ARCH_8_1M_MAIN__)",
    "armv8.1-m.main": "defined(__ARM_ARCH_8_1M_MAIN__) || "
    "(defined(__ARM_ARCH_8M_MAIN__) && !defined(__clang__))",
}


def arch_mismatch_tests(arch: str, fpu: str, mve: str) -> list[tuple[str, str]]:
    """(C preprocessor condition, why) pairs, each true when the compiler builds for
    other than a core of `arch` with `fpu` and `mve`: the generated board header turns
    them into #error (docs/boards.md)."""
    tests = []
    if arch in ARCH_TESTS:
        tests.append((f"!({ARCH_TESTS[arch]})", f"not {arch}"))
    if not mve:
        tests.append(("defined(__ARM_FEATURE_MVE)", "with MVE, which the core does not have"))
    if fpu == "none":
        tests.append(("defined(__ARM_FP) && (__ARM_FP != 0)", "with an FPU the core lacks"))
    elif fpu == "sp":
        tests.append(("defined(__ARM_FP) && (__ARM_FP & 0x8)", "with a double-precision FPU"))
    return tests


def _mcpu_extensions(core: Core, fpu: str, mve: str, dsp: bool) -> str:
    """The +ext suffix of -mcpu that takes away what this configuration lacks."""
    ext = "" if dsp else "+nodsp"
    if core.mve:
        ext += {"fp": "", "int": "+nomve.fp", "": "+nomve"}[mve]
    if fpu == "none":
        ext += "+nofp"
    elif fpu == "sp" and "dp" in core.fpus:
        ext += "+nofp.dp"
    return ext


def _gcc_march(core: Core, fpu: str, mve: str) -> str:
    """-march for a core GCC does not know by name (the M85 on GCC 12.2)."""
    ext = {"fp": "+mve.fp", "int": "+mve", "": "+dsp"}[mve]
    if fpu != "none":
        ext += "+fp.dp" if fpu == "dp" else "+fp"
    return f"-march={core.arch}{ext}"


def cpu_flags(cpu: Cpu, toolchain: str) -> tuple[str, ...]:
    """Compile (and, except armlink, link) flags for `cpu`'s core configuration (core,
    fpu, mve, dsp).

    The caller has validated the configuration (`check_config`).
    """
    core, fpu, mve = CORES[cpu.core], cpu.fpu, cpu.mve
    flags: list[str] = list(TARGETS[toolchain])
    if toolchain == "gcc" and core.gcc_march_tune:
        flags += [_gcc_march(core, fpu, mve), f"-mtune={core.gcc_march_tune}"]
    else:
        flags.append(f"-mcpu={core.name}{_mcpu_extensions(core, fpu, mve, cpu.dsp)}")
    mfpu = dict(core.mfpu).get(fpu)
    if mfpu:
        flags.append(f"-mfpu={mfpu}")
    flags.append("-mfloat-abi=soft" if fpu == "none" else "-mfloat-abi=hard")
    flags.append("-mthumb")
    return tuple(flags)


def check_config(cpu: Cpu) -> tuple[str, str] | None:
    """What is impossible about `cpu`'s configuration (core, fpu, mve, dsp, trustzone,
    caches), as (key, problem), or None."""
    core, fpu, mve = CORES[cpu.core], cpu.fpu, cpu.mve
    if not cpu.dsp and not core.dsp_optional:
        return "dsp", f"a {core.name} always has the DSP extension"
    if fpu != "none" and fpu not in core.fpus:
        can = " or ".join(f'"{f}"' for f in (*core.fpus, "none"))
        return "fpu", f"a {core.name} FPU is {can}, not {fpu!r}"
    if mve and not core.mve:
        return "mve", f'a {core.name} has no MVE (Armv8.1-M only); use mve = ""'
    if mve == "fp" and fpu == "none":
        return "mve", 'MVE floating point needs the FPU; use mve = "int" or an fpu'
    if cpu.trustzone and not core.trustzone:
        return "trustzone", f"a {core.name} has no Security Extension (Armv8-M only)"
    if (cpu.dcache or cpu.icache) and not core.caches:
        return "dcache", f"a {core.name} has no L1 caches"
    return None
