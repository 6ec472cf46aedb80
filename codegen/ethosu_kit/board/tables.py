"""The readers of board.toml's [cpu], [npu], [console], [boot], [[region]] and [glue].

Each reads its table's keys through the schema (reader.Table.value) and adds the rules
between keys the schema cannot say (an MVE the core lacks, an IRQ past the vector
table, overlapping regions). The loader calls them in order; each raises one
BoardError naming the file and the key.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import replace
from typing import Any

from ethosu_kit.board import defaults
from ethosu_kit.board.cores import CORES, FPU_KINDS, check_config, cpu_flags
from ethosu_kit.board.model import (
    REGION_ATTRS,
    Boot,
    BootCode,
    BootFrom,
    Console,
    ConsoleKind,
    Cpu,
    MemoryRegion,
    ModeRegisters,
    Npu,
    NpuPort,
    RegionKind,
    TimerKind,
    default_npu_port,
    implied_attrs,
)
from ethosu_kit.board.reader import Table, one_of
from ethosu_kit.board.toolchain import TOOLCHAINS
from ethosu_kit.core.errors import BoardError
from ethosu_kit.npu.facts import NPU_MACS, MemoryMode, mode_refusal

ADDRESS_LIMIT = 1 << 32
IDENT_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\Z")

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
        if not IDENT_RE.match(key):
            raise t.fail(key, f"{key!r} is not a C identifier (it becomes KIT_GLUE_<KEY>)")
        if key.upper() in seen:
            raise t.fail(key, f"is KIT_GLUE_{key.upper()} as {seen[key.upper()]!r} is")
        seen[key.upper()] = key
        ok = isinstance(value, bool | int) or (isinstance(value, str) and value.isprintable())
        if not ok:
            raise t.fail(key, f"must be an integer, a boolean or one line of text, got {value!r}")
    return dict(t.data)


def boot_from(t: Table | None) -> BootFrom:
    """[boot] from (the regions' implied `loadable` depends on it); LOADER without [boot]."""
    return BootFrom.LOADER if t is None else BootFrom(t.value("from"))


def external_data_table(t: Table, regions: tuple[MemoryRegion, ...]) -> dict[str, str]:
    """[external_data]: TAG = "REGION", where gen places each .ptd by default
    (plan.external checks the NPU reaches it for the mode)."""
    names = [r.name for r in regions]
    for tag, region in t.data.items():
        if not re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", tag):
            raise t.fail(tag, f"{tag!r} is not a placement tag (letters, digits, _ . -)")
        if region not in names:
            raise t.fail(tag, f"{region!r} is not a region of this board ({', '.join(names)})")
    return dict(t.data)


def boot_table(t: Table, regions: tuple[MemoryRegion, ...], cpu: Cpu) -> Boot:
    t.only_schema()
    image_from = boot_from(t)
    name = t.value("vector_region")
    address = t.value("vector_address")
    if name is None and address is None:
        raise t.fail(None, "give vector_region or vector_address (where the core boots)")
    region = None
    if name is not None:
        region = next((r for r in regions if r.name == name), None)
        if region is None:
            known = ", ".join(r.name for r in regions)
            raise t.fail("vector_region", f"no region named {name!r} (regions: {known})")
        address = region.base if address is None else address
    assert address is not None
    key = "vector_address" if "vector_address" in t.data else "vector_region"
    size = cpu.vector_table_bytes
    holder = next((r for r in regions if r.contains(address, size)), None)
    if holder is None or (region is not None and holder is not region):
        where = f"region {region.name!r}" if region else "any region"
        raise t.fail(key, f"0x{address:08x} + {size} bytes of vectors is not inside {where}")
    # A cold-boot board's RAMs are not loadable by default, so a volatile vector region
    # on one is first of all the wrong memory: say that, not only "not loadable".
    if image_from == BootFrom.NV and holder.volatile:
        nv = ", ".join(r.name for r in regions if not r.volatile and r.executable) or "none"
        raise t.fail(
            key,
            f'from = "nv": the core boots from region {holder.name!r} at 0x{address:08x}, '
            f"which is volatile (its vectors are gone at power-up); non-volatile, "
            f'executable regions: {nv} (or from = "loader" if a debugger loads the image)',
            "boot from the on-chip flash/MRAM; a part whose boot ROM copies the image from "
            'external flash into this RAM boots as from = "loader" with loadable = true on '
            "the RAMs the ROM fills (docs/boards.md, Boot)",
        )
    if not (holder.loadable and holder.executable):
        missing = " and ".join(
            f"{flag} = true"
            for flag, ok in (("loadable", holder.loadable), ("executable", holder.executable))
            if not ok
        )
        raise t.fail(
            key,
            f"region {holder.name!r} at 0x{address:08x} must be loadable and executable",
            f"if something fills {holder.name!r} before the core starts (a flasher, a boot "
            f"ROM, a debugger) and the core runs code there, write {missing} on its "
            "[[region]]; else boot from the region the core's reset vector is in",
        )
    if address % cpu.vector_table_align:
        raise t.fail(
            key,
            f"0x{address:08x} is not {cpu.vector_table_align}-byte aligned, as VTOR needs for "
            f"{16 + cpu.irqs} vectors",
        )
    code, code_region = _boot_code(t, regions, image_from)
    return Boot(holder.name, address, image_from, code, code_region)


def _boot_code(
    t: Table, regions: tuple[MemoryRegion, ...], image_from: BootFrom
) -> tuple[BootCode, str | None]:
    """[boot] code and code_region: where a cold-boot image's code runs. The RAM named must
    be one the start-up can copy code into and the core execute from; which RAM when none
    is named, and whether the code fits, are the plan's (plan.planner)."""
    code = BootCode(t.value("code"))
    name = t.value("code_region", None)  # None: the plan picks the RAM
    if code == BootCode.XIP:
        if name is not None:
            raise t.fail("code_region", 'only with code = "copy" (the RAM the code is copied to)')
        return code, None
    if image_from != BootFrom.NV:
        raise t.fail(
            "code",
            '"copy" is for a cold boot (from = "nv"): with from = "loader" the loader '
            "puts the code where it runs (place it with the board's regions)",
        )
    if name is None:
        return code, None
    region = next((r for r in regions if r.name == name), None)
    ok = [r.name for r in regions if r.runs_copied_code]
    if region is None or not region.runs_copied_code:
        what = "no region named" if region is None else "region"
        why = (
            ""
            if region is None
            else " is not volatile, writable and executable RAM the CPU reaches"
        )
        raise t.fail(
            "code_region",
            f'{what} {name!r}{why}: code = "copy" runs the code from such RAM '
            f"({', '.join(ok) or 'the board has none'})",
        )
    return code, region.name


def _npu_port(t: Table, kind: RegionKind, npu: bool) -> tuple[bool, NpuPort]:
    """The region's `npu` and `npu_port`, each implied by the other when only one is
    written: `npu_port = "ext"` alone means the NPU reaches it; `npu = false` alone, port
    "none"; neither: the kind's."""
    if "npu_port" not in t.data:
        return npu, default_npu_port(kind, npu)
    port = NpuPort(t.value("npu_port", default_npu_port(kind, npu).value))
    if "npu" not in t.data:
        return port != NpuPort.NONE, port
    if npu != (port != NpuPort.NONE):
        raise t.fail(
            "npu_port",
            f'"{port}" contradicts npu = {str(npu).lower()}: a region the NPU reaches has '
            'the port that reaches it ("sram", "ext" or "both"), one it does not has "none"',
        )
    return npu, port


def regions_table(raw: Any, file: str, cold_boot: bool = False) -> tuple[MemoryRegion, ...]:
    top = Table({"region": raw}, "", file)
    if raw is None:
        raise top.fail("region", "missing: a board needs at least one [[region]]")
    if not isinstance(raw, list) or not raw or not all(isinstance(r, dict) for r in raw):
        raise top.fail("region", "must be an array of tables ([[region]] blocks), at least one")
    regions: list[MemoryRegion] = []
    for i, data in enumerate(raw):
        label = f"region[{i}]" + (f" {data['name']!r}" if isinstance(data.get("name"), str) else "")
        t = Table(data, label, file, "region")
        t.only_schema()
        name = t.value("name")
        if not IDENT_RE.match(name):
            raise t.fail("name", f"{name!r} is not a C identifier (linker scripts use it)")
        kind = RegionKind(t.value("kind"))
        base = t.value("base")
        size = t.value("size")
        if base + size > ADDRESS_LIMIT:
            raise t.fail("size", f"0x{base:08x} + 0x{size:x} runs past the 4 GiB address space")
        written = t.bool_("volatile") if "volatile" in t.data else None
        implied = implied_attrs(kind, cold_boot, written)
        attrs = {attr: t.value(attr, getattr(implied, attr)) for attr in REGION_ATTRS}
        attrs["npu"], port = _npu_port(t, kind, attrs["npu"])
        if attrs["npu"] and kind in (RegionKind.ITCM, RegionKind.DTCM):
            raise t.fail("npu", "the NPU cannot reach the TCMs: set npu = false")
        regions.append(
            MemoryRegion(
                name=name,
                kind=kind,
                base=base,
                size=size,
                description=t.value("description"),
                npu_port=port,
                **attrs,
            )
        )
    seen: dict[str, int] = {}
    for i, r in enumerate(regions):
        if r.name in seen:
            raise BoardError(
                f"{file}: region[{i}].name: region {r.name!r} is declared twice "
                f"(also region[{seen[r.name]}])"
            )
        seen[r.name] = i
    ordered = sorted(regions, key=lambda r: r.base)
    for a, b in itertools.pairwise(ordered):
        if b.base < a.end:
            i = regions.index(b)
            raise BoardError(
                f"{file}: region[{i}] {b.name!r}: 0x{b.base:08x}..0x{b.end:08x} overlaps "
                f"region {a.name!r} 0x{a.base:08x}..0x{a.end:08x}"
            )
    return tuple(regions)


# A board drafted by `ethosu-kit new-board` may leave these facts as the string "TODO":
# a guess would build firmware that hangs or faults. The board loads (so `boards` can
# report it and the bring-up builds); what needs a fact calls `require`, which refuses
