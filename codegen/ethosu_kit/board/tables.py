"""The readers of board.toml's [cpu], [npu], [console] and [glue].

Each reads its table's keys through the schema (reader.Table.value) and adds the rules
between keys the schema cannot say (an MVE the core lacks, an IRQ past the vector
table, a MAC configuration the NPU does not have). The loader calls them in order; each
raises one BoardError naming the file and the key. The memory map's readers ([[region]],
[boot], [external_data]) are memory_map.py's.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from ethosu_kit.board import defaults
from ethosu_kit.board.checks import IDENT_RE
from ethosu_kit.board.cores import CORES, FPU_KINDS, check_config, cpu_flags
from ethosu_kit.board.model import Console, ConsoleKind, Cpu, ModeRegisters, Npu, TimerKind
from ethosu_kit.board.reader import Table, one_of
from ethosu_kit.board.toolchain import TOOLCHAINS
from ethosu_kit.npu.facts import NPU_MACS, MemoryMode, mode_refusal

_FLAG_RE = re.compile(r"^-[A-Za-z0-9_=+.,:/-]+\Z")


def _flags(cpu_t: Table, cpu: Cpu) -> dict[str, tuple[str, ...]]:
    """Each toolchain's compiler flags: those `cpu`'s configuration implies
    (cores.cpu_flags), replaced by [cpu.flags]'s list where the board gives one (single
    flags: no spaces, no quoting)."""
    flags = {tc: cpu_flags(cpu, tc) for tc in TOOLCHAINS}
    t = cpu_t.table("flags", required=False, schema_table="cpu.flags")
    t.only(*TOOLCHAINS)
    for tc in TOOLCHAINS:
        if tc not in t.data:
            continue
        values = t.str_list(tc)
        for i, flag in enumerate(values):
            if not _FLAG_RE.match(flag):
                raise t.fail(
                    f"{tc}[{i}]",
                    f"{flag!r} is not one compiler flag (a '-' and letters, digits, _=+.,:/-)",
                )
        flags[tc] = tuple(values)
    return flags


def _fpu(t: Table, core: str) -> str:
    """fpu = "dp" | "sp" | "none"; schema 1's true/false mean the core's FPU / none."""
    value = t.data.get("fpu", "none")
    if isinstance(value, bool):
        return CORES[core].fpus[0] if value else "none"
    if not isinstance(value, str):
        raise t.fail("fpu", f'must be "dp", "sp" or "none", got {value!r}')
    return one_of(t, "fpu", value, FPU_KINDS)


def cpu_table(t: Table, npu_irq: int) -> Cpu:
    t.only_schema()
    core = t.value("core")
    info = CORES[core]
    arch = t.value("arch", info.arch)
    if arch != info.arch:
        raise t.fail("arch", f"a {core} is {info.arch}, not {arch!r} (or leave arch out)")
    # the configuration the core must allow; the facts below follow from it
    cpu = Cpu(
        core=core,
        arch=arch,
        fpu=_fpu(t, core),
        mve=t.value("mve"),
        dcache=t.value("dcache"),
        icache=t.value("icache"),
        trustzone=t.value("trustzone"),
        dsp=t.value("dsp"),
    )
    impossible = check_config(cpu)
    if impossible:
        key, problem = impossible
        raise t.fail(key, problem)
    line = t.value("dcache_line", info.dcache_line)
    if line not in (16, 32, 64, 128):
        raise t.fail("dcache_line", f"must be 16, 32, 64 or 128 bytes, got {line}")
    irqs = t.value("irqs", defaults.irqs_for(npu_irq))
    if irqs > info.max_irqs:
        raise t.fail("irqs", f"a {core} NVIC takes at most {info.max_irqs} interrupts, got {irqs}")
    if npu_irq >= irqs:
        raise t.fail("irqs", f"the vector table must reach the NPU's IRQ {npu_irq}, got {irqs}")
    return replace(
        cpu,
        flags=_flags(t, cpu),
        clock_hz=t.value("clock_hz"),
        dcache_line=line,
        irqs=irqs,
        timer=TimerKind(t.value("timer")),
    )


def npu_table(t: Table) -> Npu:
    t.only_schema()
    kinds = t.value("kinds")
    if not kinds:
        raise t.fail("kinds", 'must name at least one NPU (e.g. ["ethos-u55"])')
    for i, kind in enumerate(kinds):
        one_of(t, f"kinds[{i}]", kind, list(NPU_MACS))
    base = t.value("base")
    irq = t.value("irq")
    if irq >= 480:
        raise t.fail("irq", f"must be an external interrupt number below 480, got {irq}")

    macs_t = t.table("macs")
    macs_t.only(*kinds)
    macs: dict[str, tuple[int, ...]] = {}
    for kind in kinds:
        if kind not in macs_t.data:
            raise macs_t.fail(kind, "missing: list the MAC configurations this NPU may have")
        values = macs_t.int_list(kind, macs_t.data[kind])
        for v in values:
            if v not in NPU_MACS[kind]:
                raise macs_t.fail(
                    kind,
                    f"{kind} has no {v}-MAC configuration; it exists as {list(NPU_MACS[kind])}",
                )
        macs[kind] = tuple(values)

    axi_t = t.table("axi_limits", required=False)
    axi_t.only(*kinds)
    axi: dict[str, tuple[int, int]] = {}
    for kind, value in axi_t.data.items():
        if isinstance(value, dict):
            sub = Table(value, f"{axi_t.path}.{kind}", t.file)
            sub.only("sram", "ext")
            for port, pair in value.items():
                axi[f"{kind}:{port}"] = _pair(sub, port, pair)
        else:
            axi[kind] = _pair(axi_t, kind, value)

    reg_t = t.table("registers", required=False)
    reg_t.only(*kinds)
    registers: dict[tuple[str, str], ModeRegisters] = {}
    for kind in reg_t.data:
        per_kind = reg_t.table(kind)
        per_kind.only(*(m.value for m in MemoryMode))
        for mode in per_kind.data:
            refusal = mode_refusal(kind, MemoryMode(mode))
            if refusal:
                raise per_kind.fail(mode, refusal)
            mt = per_kind.table(mode, schema_table="npu.registers.<kind>.<mode>")
            mt.only_schema()
            qconfig = mt.value("qconfig")
            regioncfg = mt.int_list("regioncfg", mt.data.get("regioncfg"))
            if qconfig > 3:
                raise mt.fail("qconfig", f"must be 0..3, got {qconfig}")
            if len(regioncfg) != 8 or any(not 0 <= v <= 3 for v in regioncfg):
                raise mt.fail(
                    "regioncfg", f"must be 8 values 0..3 (REGIONCFG_0..7), got {regioncfg}"
                )
            registers[(kind, mode)] = ModeRegisters(qconfig=qconfig, regioncfg=tuple(regioncfg))

    return Npu(
        kinds=tuple(kinds),
        macs=macs,
        base=base,
        irq=irq,
        secure=t.value("secure"),
        privileged=t.value("privileged"),
        registers=registers,
        axi_limits=axi,
        base_ns=t.value("base_ns"),
    )


def _pair(t: Table, key: str, value: Any) -> tuple[int, int]:
    values = t.int_list(key, value)
    if len(values) != 2 or min(values) <= 0:
        raise t.fail(key, f"must be [reads, writes], two positive integers, got {values}")
    return values[0], values[1]


def console_table(t: Table, schema: int) -> Console:
    t.only_schema()
    kind = ConsoleKind(t.value("kind"))
    console = Console(
        kind=kind,
        base=t.number("base", None if kind.mmio else 0),
        clock_hz=t.value("clock_hz"),
        baud=t.value("baud"),
        base_ns=t.value("base_ns"),
    )
    if not console.mmio and schema >= 2:  # schema 1 needed a base whatever the kind
        for key in ("base", "base_ns"):
            if key in t.data:
                raise t.fail(key, f'a "{kind}" console has no address; leave {key} out')
    elif console.base == 0 and schema >= 2:
        raise t.fail("base", "a UART at address 0 is not plausible: give the UART's base")
    return console


def glue_table(t: Table) -> dict[str, Any]:
    """[glue]: scalar facts for the board's own C, each a KIT_GLUE_<KEY> macro."""
    seen: dict[str, str] = {}
    for key, value in t.data.items():
        if not IDENT_RE.fullmatch(key):
            raise t.fail(key, f"{key!r} is not a C identifier (it becomes KIT_GLUE_<KEY>)")
        if key.upper() in seen:
            raise t.fail(key, f"is KIT_GLUE_{key.upper()} as {seen[key.upper()]!r} is")
        seen[key.upper()] = key
        ok = isinstance(value, bool | int) or (isinstance(value, str) and value.isprintable())
        if not ok:
            raise t.fail(key, f"must be an integer, a boolean or one line of text, got {value!r}")
    return dict(t.data)
