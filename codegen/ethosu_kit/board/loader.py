"""Load and validate a board.toml into a `Board`.

Stage 0 of the data flow. A board is data: the built-in ones live in
`boards/<name>/board.toml`, a custom one is any file of the same schema. Every
problem raises `BoardError` naming the file, the key and what is wrong, e.g.
`my.toml: region[2] 'SRAM'.size: must be > 0, got -4`.

The schema (`schema = 2`; docs/boards.md has the full reference), key by key. Optional
keys show their default. A schema 1 file keeps loading: its `[uart]` is read as
`[console]`, its `qemu_machine` as `[qemu].machine`, its `glue_dir` (or the file's folder)
as `[port]` with `board.c` providing `board_init` when that file exists.

    schema        = 2
    name          = "my-soc-evk"           lower case, digits, '-'
    aliases       = ["evk"]                optional, default []
    description   = "..."                  optional, default ""

    [cpu]  core (a key of ethosu_kit.board.cores.CORES); fpu = "dp" | "sp" | "none" (true/false:
           the core's FPU / none); mve = "" | "int" | "fp"; dcache, icache = false;
           dcache_line = 32; trustzone = false; irqs (default: the NPU IRQ rounded up to
           a multiple of 32); timer = "systick" | "dwt" | "custom"; clock_hz = 25_000_000;
           arch (optional: must be the core's)
    [cpu.flags]  gcc / clang / armclang = [compiler flags]   (each optional: replaces the
           flags ethosu_kit.board.cores.cpu_flags derives for that toolchain)

    [npu]  kinds = ["ethos-u55", ...]; base, irq (required); secure, privileged
           (optional, default true); base_ns (optional)
    [npu.macs]  <kind> = [MAC configurations]               one entry per kind
    [npu.axi_limits]  <kind> = [reads, writes]  or  { sram = [r, w], ext = [r, w] }  (optional)
    [npu.registers.<kind>]  <mode> = { qconfig = N, regioncfg = [8 values 0..3] }
           (optional; a mode absent for a kind is one that kind cannot run)

    [console] kind = "cmsdk-apb" | "pl011" | "semihosting" | "custom" | "none";
              base (MMIO kinds only, required there); clock_hz; baud = 115200; base_ns

    [boot]  vector_region = "ITCM" | vector_address = 0x...   (optional: without it the
            vector table starts the code region)

    [qemu]  machine; cpu (default: [cpu].core); stand_in = ""   (optional)
    [qemu.layout]  vector_region; [qemu.layout.region.<NAME>] base, size   (optional, with
            stand_in: the board's map laid onto the stand-in machine; gen --qemu-stand-in)

    [fvp]   models = { <npu kind> = "FVP_…" }; board, cpu (instance names); npu = "";
            uart = "uart0"; params = ["instance.parameter=value", …]   (optional)

    [port]  sources = []; include_dirs = []; cmake = ""; hooks = [] (names of HOOKS)
            paths relative to the board's folder

    [[region]]  name (C identifier), kind (itcm dtcm sram bram rom flash dram),
                base, size; attributes on_chip, volatile, cpu, npu, executable,
                writable, loadable (each optional, default from the kind, see
                KIND_DEFAULTS); description = ""

    [glue]  free-form facts that only the board's own C reads (optional)

Numbers may be TOML integers (0x10000000, 512_000) or strings: "0x8000",
"512 KiB", "2 MiB", "1 GiB".
"""

from __future__ import annotations

import copy
import itertools
import re
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

from ethosu_kit.board.checks import check_board
from ethosu_kit.board.cores import CORES, FPU_KINDS, MVE_KINDS, check_config, cpu_flags
from ethosu_kit.board.model import (
    CONSOLE_KINDS,
    HOOK_NAMES,
    TIMER_KINDS,
    Board,
    Boot,
    Console,
    Cpu,
    Fvp,
    MemoryRegion,
    ModeRegisters,
    Npu,
    Port,
    Qemu,
    QemuLayout,
    RegionKind,
    RegionPlace,
)
from ethosu_kit.board.toolchain import TOOLCHAINS
from ethosu_kit.core.errors import BoardError
from ethosu_kit.core.files import MAX_BOARD, read_text
from ethosu_kit.core.paths import boards_dir
from ethosu_kit.core.sizes import parse_size
from ethosu_kit.npu.facts import NPU_MACS, MemoryMode, mode_refusal

SCHEMA_VERSION = 2
SCHEMAS = (1, 2)


# Region attributes a kind implies: (on_chip, volatile, cpu, npu, executable, writable, loadable)
KIND_DEFAULTS: dict[RegionKind, tuple[bool, bool, bool, bool, bool, bool, bool]] = {
    RegionKind.ITCM: (True, True, True, False, True, True, True),
    RegionKind.DTCM: (True, True, True, False, False, True, True),
    RegionKind.SRAM: (True, True, True, True, False, True, True),
    RegionKind.BRAM: (True, True, True, False, True, True, True),
    RegionKind.ROM: (True, False, True, False, True, False, True),
    RegionKind.FLASH: (False, False, True, True, True, False, True),
    RegionKind.DRAM: (False, True, True, True, True, True, True),
}
ATTRS = ("on_chip", "volatile", "cpu", "npu", "executable", "writable", "loadable")
ADDRESS_LIMIT = 1 << 32

_NAME_RE = re.compile(r"^[a-z0-9][a-z0-9-]*$")
_IDENT_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

T = TypeVar("T")


def _type_name(value: Any) -> str:
    return {bool: "a boolean", int: "an integer", str: "a string", list: "a list",
            dict: "a table", float: "a float"}.get(type(value), type(value).__name__)  # fmt: skip


@dataclass
class _Table:
    """One TOML table being read: knows its file and key path for error messages."""

    data: dict[str, Any]
    path: str  # e.g. "npu" or "region[2] 'SRAM'"
    file: str

    def fail(self, key: str | None, problem: str, hint: str | None = None) -> BoardError:
        where = f"{self.path}.{key}" if self.path and key else (key or self.path)
        return BoardError(f"{self.file}: {where}: {problem}", hint)

    def _get(self, key: str, kind: type[T], required: bool, default: T | None) -> T | None:
        if key not in self.data:
            if required:
                raise self.fail(key, "missing (required key)")
            return default
        value = self.data[key]
        if isinstance(value, kind) and not (kind is int and isinstance(value, bool)):
            return value
        raise self.fail(key, f"must be {_type_name(kind())}, got {_type_name(value)} {value!r}")

    def str_(self, key: str, default: str | None = None) -> str:
        value = self._get(key, str, default is None, default)
        assert value is not None
        return value

    def opt_str(self, key: str) -> str | None:
        return self._get(key, str, False, None)

    def bool_(self, key: str, default: bool | None = None) -> bool:
        value = self._get(key, bool, default is None, default)
        assert value is not None
        return value

    def number(self, key: str, default: int | None = None, *, positive: bool = False) -> int:
        """An integer, or a string like "0x8000" / "512 KiB"."""
        if key not in self.data:
            if default is None:
                raise self.fail(key, "missing (required key)")
            return default
        value = self.data[key]
        if isinstance(value, bool) or not isinstance(value, int | str):
            raise self.fail(
                key, f'must be an integer or a size string like "512 KiB", got {value!r}'
            )
        if isinstance(value, str):
            try:
                value = parse_size(value)
            except ValueError:
                raise self.fail(
                    key, f'cannot read {value!r} as a number (use 0x..., 1234, "512 KiB", "2 MiB")'
                ) from None
        if value < 0 or (positive and value == 0):
            raise self.fail(
                key, f"must be > 0, got {value}" if positive else f"must be >= 0, got {value}"
            )
        return value

    def opt_number(self, key: str) -> int | None:
        return self.number(key) if key in self.data else None

    def str_list(self, key: str, default: list[str] | None = None) -> list[str]:
        value = self._get(key, list, default is None, default)
        assert value is not None
        for i, item in enumerate(value):
            if not isinstance(item, str):
                raise self.fail(f"{key}[{i}]", f"must be a string, got {item!r}")
        return value

    def int_list(self, key: str, value: Any) -> list[int]:
        if not isinstance(value, list) or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in value
        ):
            raise self.fail(key, f"must be a list of integers, got {value!r}")
        return value

    def table(self, key: str, required: bool = True) -> _Table:
        value = self._get(key, dict, required, {})
        assert value is not None
        return _Table(value, f"{self.path}.{key}" if self.path else key, self.file)

    def only(self, *allowed: str) -> None:
        for key in self.data:
            if key not in allowed:
                raise self.fail(key, "unknown key", hint=f"keys allowed here: {', '.join(allowed)}")


def _one_of(t: _Table, key: str, value: str, allowed: tuple[str, ...] | list[str]) -> str:
    if value not in allowed:
        raise t.fail(key, f"unknown value {value!r}; expected one of: {', '.join(allowed)}")
    return value


_FLAG_RE = re.compile(r"^-[A-Za-z0-9_=+.,:/-]+$")


def _flags(t: _Table) -> dict[str, tuple[str, ...]]:
    """[cpu.flags]: per toolchain, a list of single compiler flags (no spaces, no quoting)."""
    t.only(*TOOLCHAINS)
    flags: dict[str, tuple[str, ...]] = {}
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


def _fpu(t: _Table, core: str) -> str:
    """fpu = "dp" | "sp" | "none"; schema 1's true/false mean the core's FPU / none."""
    value = t.data.get("fpu", "none")
    if isinstance(value, bool):
        return CORES[core].fpus[0] if value else "none"
    if not isinstance(value, str):
        raise t.fail("fpu", f'must be "dp", "sp" or "none", got {value!r}')
    return _one_of(t, "fpu", value, FPU_KINDS)


def _cpu(t: _Table, npu_irq: int) -> Cpu:
    t.only("core", "arch", "fpu", "mve", "dsp", "dcache", "icache", "dcache_line", "trustzone",
           "irqs", "timer", "clock_hz", "flags")  # fmt: skip
    core = _one_of(t, "core", t.str_("core"), list(CORES))
    info = CORES[core]
    arch = t.str_("arch", info.arch)
    if arch != info.arch:
        raise t.fail("arch", f"a {core} is {info.arch}, not {arch!r} (or leave arch out)")
    fpu = _fpu(t, core)
    mve = _one_of(t, "mve", t.str_("mve", ""), MVE_KINDS)
    dcache = t.bool_("dcache", False)
    icache = t.bool_("icache", False)
    trustzone = t.bool_("trustzone", False)
    dsp = t.bool_("dsp", True)
    impossible = check_config(core, fpu, mve, trustzone=trustzone, caches=dcache or icache, dsp=dsp)
    if impossible:
        key, problem = impossible
        raise t.fail(key, problem)
    line = t.number("dcache_line", info.dcache_line, positive=True)
    if line not in (16, 32, 64, 128):
        raise t.fail("dcache_line", f"must be 16, 32, 64 or 128 bytes, got {line}")
    irqs = t.number("irqs", max(32, (npu_irq // 32 + 1) * 32), positive=True)
    if irqs > info.max_irqs:
        raise t.fail("irqs", f"a {core} NVIC takes at most {info.max_irqs} interrupts, got {irqs}")
    if npu_irq >= irqs:
        raise t.fail("irqs", f"the vector table must reach the NPU's IRQ {npu_irq}, got {irqs}")
    derived = {tc: cpu_flags(core, fpu, mve, tc, dsp) for tc in TOOLCHAINS}
    derived.update(_flags(t.table("flags", required=False)))
    return Cpu(
        core,
        arch,
        fpu,
        mve,
        dcache,
        icache,
        derived,
        clock_hz=t.number("clock_hz", 25_000_000, positive=True),
        dcache_line=line,
        trustzone=trustzone,
        irqs=irqs,
        timer=_one_of(t, "timer", t.str_("timer", "systick"), TIMER_KINDS),
        dsp=dsp,
    )


def _npu(t: _Table) -> Npu:
    t.only("kinds", "base", "base_ns", "irq", "secure", "privileged", "macs", "axi_limits",
           "registers")  # fmt: skip
    kinds = t.str_list("kinds")
    if not kinds:
        raise t.fail("kinds", 'must name at least one NPU (e.g. ["ethos-u55"])')
    for i, kind in enumerate(kinds):
        _one_of(t, f"kinds[{i}]", kind, list(NPU_MACS))
    base = t.number("base")
    irq = t.number("irq")
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
            sub = _Table(value, f"{axi_t.path}.{kind}", t.file)
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
            mt = per_kind.table(mode)
            mt.only("qconfig", "regioncfg")
            qconfig = mt.number("qconfig")
            regioncfg = mt.int_list("regioncfg", mt.data.get("regioncfg"))
            if qconfig > 3:
                raise mt.fail("qconfig", f"must be 0..3, got {qconfig}")
            if len(regioncfg) != 8 or any(not 0 <= v <= 3 for v in regioncfg):
                raise mt.fail(
                    "regioncfg", f"must be 8 values 0..3 (REGIONCFG_0..7), got {regioncfg}"
                )
            registers[(kind, mode)] = ModeRegisters(qconfig, tuple(regioncfg))

    return Npu(
        kinds=tuple(kinds),
        macs=macs,
        base=base,
        irq=irq,
        secure=t.bool_("secure", True),
        privileged=t.bool_("privileged", True),
        registers=registers,
        axi_limits=axi,
        base_ns=t.opt_number("base_ns"),
    )


def _pair(t: _Table, key: str, value: Any) -> tuple[int, int]:
    values = t.int_list(key, value)
    if len(values) != 2 or min(values) <= 0:
        raise t.fail(key, f"must be [reads, writes], two positive integers, got {values}")
    return values[0], values[1]


def _console(t: _Table, schema: int) -> Console:
    t.only("kind", "base", "base_ns", "clock_hz", "baud")
    kind = _one_of(t, "kind", t.str_("kind"), CONSOLE_KINDS)
    console = Console(
        kind=kind,
        base=t.number("base", 0 if kind not in ("cmsdk-apb", "pl011") else None),
        clock_hz=t.number("clock_hz", 25_000_000, positive=True),
        baud=t.number("baud", 115200, positive=True),
        base_ns=t.opt_number("base_ns"),
    )
    if not console.mmio and schema >= 2:  # schema 1 needed a base whatever the kind
        for key in ("base", "base_ns"):
            if key in t.data:
                raise t.fail(key, f'a "{kind}" console has no address; leave {key} out')
    elif console.base == 0 and schema >= 2:
        raise t.fail("base", "a UART at address 0 is not plausible: give the UART's base")
    return console


_QEMU_RE = re.compile(r"^[a-z0-9][a-z0-9.,-]*$")


def _qemu(t: _Table, core: str, regions: tuple[MemoryRegion, ...] = ()) -> Qemu:
    t.only("machine", "cpu", "stand_in", "layout")
    machine = t.str_("machine")
    cpu = t.str_("cpu", core)
    for key, value in (("machine", machine), ("cpu", cpu)):
        if not _QEMU_RE.match(value):
            raise t.fail(key, f"{value!r} is not a QEMU {key} name")
    stand_in = t.str_("stand_in", "")
    layout = None
    if "layout" in t.data:
        if not stand_in:
            raise t.fail("layout", "a layout is for a stand-in machine: say what it is in stand_in")
        layout = _qemu_layout(t.table("layout"), regions)
    return Qemu(machine=machine, cpu=cpu, stand_in=stand_in, layout=layout)


def _qemu_layout(t: _Table, regions: tuple[MemoryRegion, ...]) -> QemuLayout:
    """[qemu.layout]: vector_region, and [qemu.layout.region.<NAME>] base/size per region
    the stand-in machine has elsewhere (or smaller)."""
    t.only("vector_region", "region")
    names = {r.name for r in regions}
    vector_region = t.opt_str("vector_region")
    if vector_region is not None and vector_region not in names:
        raise t.fail("vector_region", f"no region named {vector_region!r}")
    places = []
    moved = t.table("region", required=False)
    for name in moved.data:
        if name not in names:
            raise moved.fail(
                name, f"no region named {name!r} (regions: {', '.join(sorted(names))})"
            )
        place = moved.table(name)
        place.only("base", "size")
        places.append(RegionPlace(name, place.number("base"), place.number("size", positive=True)))
    return QemuLayout(tuple(places), vector_region)


_FVP_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_FVP_PARAM_RE = re.compile(r"^[A-Za-z0-9_.\[\]-]+=[A-Za-z0-9_.:/+-]*$")


def _fvp(t: _Table, npu: Npu) -> Fvp:
    """[fvp]: the Arm FVP per NPU kind and the model's instance names."""
    t.only("models", "board", "cpu", "npu", "uart", "params")
    models_t = t.table("models")
    models = {}
    for kind in models_t.data:
        if kind not in npu.kinds:
            raise models_t.fail(kind, f"not an NPU of this board ({', '.join(npu.kinds)})")
        models[kind] = models_t.str_(kind)
    values = {key: t.str_(key, default) for key, default in
              (("board", None), ("cpu", None), ("npu", ""), ("uart", "uart0"))}  # fmt: skip
    for key, value in (*models.items(), *values.items()):
        if value and not _FVP_NAME_RE.match(value):
            raise t.fail(key, f"{value!r} is not an FVP or instance name")
    params = tuple(t.str_list("params", []))
    for param in params:
        if not _FVP_PARAM_RE.match(param):
            raise t.fail("params", f"{param!r} is not an FVP parameter 'instance.name=value'")
    return Fvp(models, values["board"], values["cpu"], values["npu"], values["uart"], params)


def _lay_onto_stand_in(data: dict[str, Any], source: str) -> dict[str, Any]:
    """The board's data with [qemu.layout] applied: its regions where the stand-in machine
    has them and its boot region there (a copy; the data is then parsed as usual)."""
    layout = data.get("qemu", {}).get("layout") if isinstance(data.get("qemu"), dict) else None
    if not isinstance(layout, dict):
        raise BoardError(
            f"{source}: no [qemu.layout], so there is no stand-in layout of this board",
            hint="a board QEMU runs as it is needs no --qemu-stand-in",
        )
    out = copy.deepcopy(data)
    moved = layout.get("region", {})
    for entry in out.get("region", []) if isinstance(out.get("region"), list) else []:
        if isinstance(entry, dict) and isinstance(moved, dict) and entry.get("name") in moved:
            place = moved[entry["name"]]
            if isinstance(place, dict):
                entry.update({k: v for k, v in place.items() if k in ("base", "size")})
    if "vector_region" in layout:
        out["boot"] = {"vector_region": layout["vector_region"]}
    return out


def _port(t: _Table, folder: Path) -> Port:
    t.only("sources", "include_dirs", "cmake", "hooks")

    def existing(key: str, rel: str, want_dir: bool) -> str:
        path = folder / rel
        if not (path.is_dir() if want_dir else path.is_file()):
            what = "folder" if want_dir else "file"
            raise t.fail(key, f"{rel!r}: no such {what} in {folder}")
        return rel

    sources = [existing(f"sources[{i}]", p, False) for i, p in enumerate(t.str_list("sources", []))]
    includes = [
        existing(f"include_dirs[{i}]", p, True)
        for i, p in enumerate(t.str_list("include_dirs", []))
    ]
    cmake = t.opt_str("cmake")
    if cmake:
        existing("cmake", cmake, False)
    hooks = t.str_list("hooks", [])
    for i, hook in enumerate(hooks):
        _one_of(t, f"hooks[{i}]", hook, HOOK_NAMES)
        if hook in hooks[:i]:
            raise t.fail(f"hooks[{i}]", f"{hook!r} is named twice")
    if hooks and not sources:
        raise t.fail("hooks", "hooks are implemented by [port].sources, and there are none")
    return Port(str(folder), tuple(sources), tuple(includes), cmake or None, tuple(hooks))


def _glue(t: _Table) -> dict[str, Any]:
    """[glue]: scalar facts for the board's own C, each a KIT_GLUE_<KEY> macro."""
    seen: dict[str, str] = {}
    for key, value in t.data.items():
        if not _IDENT_RE.match(key):
            raise t.fail(key, f"{key!r} is not a C identifier (it becomes KIT_GLUE_<KEY>)")
        if key.upper() in seen:
            raise t.fail(key, f"is KIT_GLUE_{key.upper()} as {seen[key.upper()]!r} is")
        seen[key.upper()] = key
        ok = isinstance(value, bool | int) or (isinstance(value, str) and value.isprintable())
        if not ok:
            raise t.fail(key, f"must be an integer, a boolean or one line of text, got {value!r}")
    return dict(t.data)


def _schema1_port(folder: Path) -> Port:
    """A schema 1 board's glue folder: board.c (kit_hal_board_init) and its headers."""
    if (folder / "board.c").is_file():
        return Port(str(folder), ("board.c",), (".",), None, ("board_init",))
    return Port(str(folder))


def _boot(t: _Table, regions: tuple[MemoryRegion, ...], cpu: Cpu) -> Boot:
    t.only("vector_region", "vector_address")
    name = t.opt_str("vector_region")
    address = t.opt_number("vector_address")
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
    if not (holder.loadable and holder.executable):
        raise t.fail(
            key, f"region {holder.name!r} at 0x{address:08x} must be loadable and executable"
        )
    if address % cpu.vector_table_align:
        raise t.fail(
            key,
            f"0x{address:08x} is not {cpu.vector_table_align}-byte aligned, as VTOR needs for "
            f"{16 + cpu.irqs} vectors",
        )
    return Boot(holder.name, address)


def _regions(raw: Any, file: str) -> tuple[MemoryRegion, ...]:
    top = _Table({"region": raw}, "", file)
    if raw is None:
        raise top.fail("region", "missing: a board needs at least one [[region]]")
    if not isinstance(raw, list) or not raw or not all(isinstance(r, dict) for r in raw):
        raise top.fail("region", "must be an array of tables ([[region]] blocks), at least one")
    regions: list[MemoryRegion] = []
    for i, data in enumerate(raw):
        label = f"region[{i}]" + (f" {data['name']!r}" if isinstance(data.get("name"), str) else "")
        t = _Table(data, label, file)
        t.only("name", "kind", "base", "size", "description", *ATTRS)
        name = t.str_("name")
        if not _IDENT_RE.match(name):
            raise t.fail("name", f"{name!r} is not a C identifier (linker scripts use it)")
        kind = RegionKind(_one_of(t, "kind", t.str_("kind"), [k.value for k in RegionKind]))
        base = t.number("base")
        size = t.number("size", positive=True)
        if base + size > ADDRESS_LIMIT:
            raise t.fail("size", f"0x{base:08x} + 0x{size:x} runs past the 4 GiB address space")
        attrs = dict(zip(ATTRS, KIND_DEFAULTS[kind], strict=True))
        for attr in ATTRS:
            attrs[attr] = t.bool_(attr, attrs[attr])
        if attrs["npu"] and kind in (RegionKind.ITCM, RegionKind.DTCM):
            raise t.fail("npu", "the NPU cannot reach the TCMs: set npu = false")
        regions.append(
            MemoryRegion(
                name=name,
                kind=kind,
                base=base,
                size=size,
                description=t.str_("description", ""),
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
# with an error naming the key. Every other key is read as usual ("TODO" is an error).
TODO = "TODO"
TODO_KEYS: dict[str, str] = {
    "npu.base": "the NPU's register base address",
    "npu.irq": "the NPU's interrupt number",
    "boot.vector_region": "the region the core fetches its vector table from at reset",
}
# what a placeholder reads as while the fact is unknown; None drops the key's table
_TODO_STAND_IN: dict[str, int | None] = {"npu.base": 0, "npu.irq": 0, "boot.vector_region": None}


def _take_todos(data: dict[str, Any]) -> tuple[str, ...]:
    """Find the TODO_KEYS left "TODO" and put stand-ins in `data` so the rest validates."""
    found = []
    for key in TODO_KEYS:
        table, _, leaf = key.partition(".")
        section = data.get(table)
        if isinstance(section, dict) and section.get(leaf) == TODO:
            found.append(key)
            stand_in = _TODO_STAND_IN[key]
            if stand_in is None:
                del data[table]
            else:
                section[leaf] = stand_in
    return tuple(found)


def require(board: Board, keys: tuple[str, ...] | list[str], needed_for: str) -> None:
    """Refuse when one of `keys` is still TODO in the board file, naming it."""
    missing = [k for k in keys if k in board.todo]
    if missing:
        what = "; ".join(f"{k} ({TODO_KEYS.get(k, 'unknown')})" for k in missing)
        raise BoardError(
            f"{board.source}: {what}: still TODO, and {needed_for} needs "
            + ("it" if len(missing) == 1 else "them"),
            hint='write the value in place of "TODO" (`ethosu-kit boards '
            f"{Path(board.source).parent}` lists what is left)",
        )


def parse_board(
    text: str, source: str, folder: Path | None = None, *, qemu_layout: bool = False
) -> Board:
    """Validate board.toml text; `source` names the file in messages, `folder` holds its
    port sources (default: the folder of `source`)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise BoardError(f"{source}: not valid TOML: {exc}") from None
    except RecursionError:  # tomllib recurses per nesting level of arrays/inline tables
        raise BoardError(
            f"{source}: values nested deeper than the TOML reader follows",
            hint="a board file needs at most a few levels of [tables] and [lists]",
        ) from None
    todo = _take_todos(data) if isinstance(data, dict) else ()
    if qemu_layout and isinstance(data, dict):
        data = _lay_onto_stand_in(data, source)
    t = _Table(data, "", source)
    t.only("schema", "name", "aliases", "description", "cpu", "npu", "console", "boot", "qemu",
           "port", "region", "glue", "uart", "qemu_machine", "glue_dir", "fvp")  # fmt: skip
    schema = t.number("schema", 1)
    if schema not in SCHEMAS:
        raise t.fail("schema", f"version {schema} is not known; this kit reads {SCHEMAS}")
    for new, old in (("console", "uart"), ("qemu", "qemu_machine"), ("port", "glue_dir")):
        if new in data and old in data:
            raise t.fail(
                old, f"schema 1's {old} and schema 2's [{new}] are both given; keep [{new}]"
            )
    name = t.str_("name")
    if not _NAME_RE.match(name):
        raise t.fail("name", f"{name!r}: use lower case letters, digits and '-'")
    folder = (folder or Path(source).parent).resolve()

    npu = _npu(t.table("npu"))
    cpu = _cpu(t.table("cpu"), npu.irq)
    regions = _regions(data.get("region"), source)
    console = _console(t.table("uart" if "uart" in data else "console"), schema)
    if "qemu_machine" in data:
        machine = t.str_("qemu_machine")
        qemu = _qemu(_Table({"machine": machine}, "qemu_machine", source), cpu.core)
    elif "qemu" in data:
        qemu = _qemu(t.table("qemu"), cpu.core, regions)
    else:
        qemu = None
    if "port" in data:
        port = _port(t.table("port"), folder)
    else:
        glue = t.opt_str("glue_dir")
        port = _schema1_port(folder / glue if glue else folder)
    aliases = tuple(t.str_list("aliases", []))
    description = t.str_("description", "")
    board = Board(
        name,
        aliases,
        description,
        source,
        cpu,
        npu,
        console,
        regions,
        port,
        boot=_boot(t.table("boot"), regions, cpu) if "boot" in data else None,
        qemu=qemu,
        qemu_layout=qemu_layout,
        fvp=_fvp(t.table("fvp"), npu) if "fvp" in data else None,
        schema=schema,
        glue=_glue(t.table("glue", required=False)),
        todo=todo,
    )
    check_board(board)  # plausible addresses, safe flags and text, port paths inside
    return board


def load_board_file(path: Path, *, qemu_layout: bool = False) -> Board:
    if path.is_dir():
        path = path / "board.toml"

    text = read_text(path, MAX_BOARD, BoardError)
    return parse_board(text, str(path), path.resolve().parent, qemu_layout=qemu_layout)


def stand_in_board(board: Board) -> Board:
    """`board` laid onto its QEMU stand-in ([qemu.layout]), from the same board file;
    a BoardError when the board has no stand-in layout."""
    if board.qemu_layout:
        return board
    return load_board_file(Path(board.source), qemu_layout=True)


@cache
def _builtin() -> tuple[Board, ...]:
    return tuple(load_board_file(p) for p in sorted(boards_dir().glob("*/board.toml")))


def builtin_boards() -> list[Board]:
    return list(_builtin())


def load_board(name_or_path: str | Path) -> Board:
    """A built-in board by name or alias (see `ethosu-kit boards`), a board folder or a
    board.toml path."""
    text = str(name_or_path)
    path = Path(text)
    if isinstance(name_or_path, Path) or text.endswith(".toml") or "/" in text or path.is_dir():
        return load_board_file(path)
    for board in _builtin():
        if text.lower() == board.name or text.lower() in board.aliases:
            return board
    known = ", ".join(f"{b.name} ({', '.join(b.aliases)})" for b in _builtin())
    raise BoardError(
        f"unknown board {text!r}",
        hint=f"built-in boards: {known}; or give the path of a board.toml",
    )
