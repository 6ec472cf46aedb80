"""The board.toml schema, written once: every key with its type, default and meaning.

The loader reads each table's keys through it (`reader.Table.value`: type, default,
allowed values) and refuses keys it does not list; docs/boards.md's key reference is
generated from it (`doc_table`, checked by tests/test_board_schema.py), and the same
test checks that `new-board`'s template (render/templates/board.toml.j2) writes every
key marked `drafted`. What a key's value must satisfy beyond its type and choices
(ranges, cross-key rules, plausibility) is in loader.py and checks.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

from ethosu_kit.board import defaults
from ethosu_kit.board.cores import CORES, MVE_KINDS
from ethosu_kit.board.model import (
    KIND_ATTRS,
    NPU_PORTS,
    REGION_ATTRS,
    BootCode,
    BootFrom,
    ConsoleKind,
    RegionKind,
    TimerKind,
)
from ethosu_kit.board.toolchain import TOOLCHAINS


class ValueType(Enum):
    """The TOML shape of a value; the text is the doc table's `type` column."""

    STRING = "string"
    NUMBER = "number"  # an integer or a size string ("0x8000", "512 KiB")
    BOOL = "boolean"
    STRINGS = "list of strings"
    TABLE = "table"
    TABLES = "array of tables"
    ANY = "see notes"  # read by its own code in loader.py


class _Required:
    def __repr__(self) -> str:
        return "required"


REQUIRED: Any = _Required()


@dataclass(frozen=True)
class Derived:
    """A default computed from other keys; `text` says from what (for the docs)."""

    text: str


@dataclass(frozen=True)
class Key:
    name: str
    type: ValueType
    default: Any  # REQUIRED, a value, or Derived(...)
    doc: str
    choices: tuple[str, ...] = ()  # allowed values of a string
    positive: bool = False  # a number must be > 0 (every number is >= 0)
    drafted: bool = True  # board.toml.j2 writes it (False: passed through or not drafted)

    @property
    def required(self) -> bool:
        return self.default is REQUIRED


S, N, B, L = ValueType.STRING, ValueType.NUMBER, ValueType.BOOL, ValueType.STRINGS
TAB, ANY = ValueType.TABLE, ValueType.ANY

# table -> its keys, in the order messages list them ("keys allowed here: ...").
# "" is the top level; "region" each [[region]]; "<kind>" and "<NAME>" stand for names.
SCHEMA: dict[str, tuple[Key, ...]] = {
    "": (
        Key("schema", N, defaults.SCHEMA, "2 for this schema; without it the file is schema 1"),
        Key("name", S, REQUIRED, "lower case letters, digits and '-'"),
        Key("aliases", L, [], "other names `--board` accepts"),
        Key("description", S, "", "one line"),
        Key("cpu", TAB, REQUIRED, "the core"),
        Key("npu", TAB, REQUIRED, "the Ethos-U"),
        Key("console", TAB, REQUIRED, "where kit_putc writes"),
        Key("boot", TAB, None, "where the core boots (without it: the code region's start)"),
        Key("qemu", TAB, None, "the QEMU machine that runs this board's images"),
        Key("port", TAB, None, "the board's own code (schema 1: the glue folder)"),
        Key("region", ValueType.TABLES, REQUIRED, "one [[region]] per memory, at least one"),
        Key("glue", TAB, {}, "facts only the board's C reads: KIT_GLUE_<KEY>"),
        Key(
            "external_data",
            TAB,
            {},
            'where each .ptd goes: TAG = "REGION" (docs/ptd.md)',
            drafted=False,
        ),
        Key("uart", TAB, None, "schema 1's [console]", drafted=False),
        Key("qemu_machine", S, None, "schema 1's [qemu].machine", drafted=False),
        Key("glue_dir", S, None, "schema 1's [port]: a folder with board.c", drafted=False),
        Key("fvp", TAB, None, "the Arm FVP that runs this board's images", drafted=False),
    ),
    "cpu": (
        Key("core", S, REQUIRED, "the Cortex-M core", choices=tuple(CORES)),
        Key("arch", S, Derived("the core's"), "must be the core's", drafted=False),
        Key("fpu", ANY, "none", '"dp", "sp" or "none" (schema 1: true/false)'),
        Key("mve", S, "", "M-profile vector extension (M55/M85)", choices=MVE_KINDS),
        Key("dsp", B, True, "the DSP extension (only a Cortex-M33 may lack it)"),
        Key("dcache", B, False, "an L1 data cache (M7/M55/M85)"),
        Key("icache", B, False, "an L1 instruction cache (M7/M55/M85)"),
        Key("dcache_line", N, Derived("the core's"), "bytes: 16, 32, 64 or 128", positive=True),
        Key("trustzone", B, False, "the Armv8-M Security Extension"),
        Key(
            "irqs",
            N,
            Derived(f"the NPU IRQ rounded up to a multiple of {defaults.IRQS}"),
            "external interrupts: the vector table has 16 + irqs entries",
            positive=True,
        ),
        Key(
            "timer",
            S,
            TimerKind.SYSTICK.value,
            "the cycle counter",
            choices=tuple(k.value for k in TimerKind),
        ),
        Key("clock_hz", N, defaults.CLOCK_HZ, "the core clock (times only)", positive=True),
        Key("flags", TAB, {}, "per toolchain, compiler flags that replace the derived ones"),
    ),
    "cpu.flags": tuple(Key(tc, L, None, f"the {tc} flags", drafted=False) for tc in TOOLCHAINS),
    "npu": (
        Key("kinds", L, REQUIRED, "the Ethos-U kinds this board may carry, at least one"),
        Key("base", N, REQUIRED, "the register base the firmware uses"),
        Key("base_ns", N, None, "its non-secure alias"),
        Key("irq", N, REQUIRED, "the external interrupt number (IRQn), below 480"),
        Key("secure", B, defaults.NPU_SECURE, "the NPU's AXI transactions are secure"),
        Key("privileged", B, defaults.NPU_PRIVILEGED, "... and privileged"),
        Key("macs", TAB, REQUIRED, "<kind> = [MAC configurations], one per kind"),
        Key("axi_limits", TAB, {}, "<kind> = [reads, writes] or { sram = [..], ext = [..] }"),
        Key("registers", TAB, {}, "[npu.registers.<kind>] <mode> = { qconfig, regioncfg }"),
    ),
    "npu.registers.<kind>.<mode>": (
        Key("qconfig", N, REQUIRED, "QCONFIG, 0..3"),
        Key("regioncfg", ANY, REQUIRED, "REGIONCFG_0..7: 8 values 0..3"),
    ),
    "console": (
        Key("kind", S, REQUIRED, "the console", choices=tuple(k.value for k in ConsoleKind)),
        Key(
            "base",
            N,
            Derived("required for cmsdk-apb and pl011, else none"),
            "the UART's register base",
        ),
        Key("base_ns", N, None, "its non-secure alias"),
        Key("clock_hz", N, defaults.CLOCK_HZ, "the UART's reference clock", positive=True),
        Key("baud", N, defaults.BAUD, "the line rate", positive=True),
    ),
    "boot": (
        Key("vector_region", S, None, "the region whose start holds the vector table"),
        Key("vector_address", N, None, "or its address (aligned as VTOR needs)"),
        Key(
            "from",
            S,
            BootFrom.LOADER.value,
            "how the image reaches the part at reset: `nv` boots cold from non-volatile "
            "memory (every initial byte stored there, what runs from RAM copied by the "
            "start-up; RAM is then not loadable unless its [[region]] says so), `loader`: "
            "a debugger or emulator loads the ELF (an FVP, QEMU -kernel, a debugger's load). "
            "`new-board` drafts `nv`",
            choices=tuple(k.value for k in BootFrom),
        ),
        Key(
            "code",
            S,
            BootCode.XIP.value,
            'where a cold-boot image\'s code runs (from = "nv" only): `xip` in place from '
            "the non-volatile region that stores it, `copy`: copied at reset into "
            "`code_region` (an ITCM, an executable SRAM) and run there; the vectors, the "
            "reset code and the copy tables stay in non-volatile memory",
            choices=tuple(k.value for k in BootCode),
            drafted=False,
        ),
        Key(
            "code_region",
            S,
            Derived("the fastest executable, writable RAM: ITCM, on-chip RAM, then the rest"),
            'the RAM code = "copy" runs the code from',
            drafted=False,
        ),
    ),
    "qemu": (
        Key("machine", S, REQUIRED, "the QEMU machine (-M)"),
        Key("cpu", S, Derived("[cpu].core"), "the QEMU CPU (-cpu)"),
        Key("stand_in", S, "", "non-empty: QEMU models a different machine (said on each run)"),
        Key("layout", TAB, None, "the board's map laid onto the stand-in", drafted=False),
    ),
    "qemu.layout": (
        Key("vector_region", S, None, "where the stand-in boots", drafted=False),
        Key("region", TAB, {}, "[qemu.layout.region.<NAME>]: base, size", drafted=False),
    ),
    "qemu.layout.region.<NAME>": (
        Key("base", N, REQUIRED, "the region's base on the stand-in", drafted=False),
        Key("size", N, REQUIRED, "its size there", positive=True, drafted=False),
    ),
    "fvp": (
        Key("models", TAB, REQUIRED, "<kind> = FVP executable, per NPU kind", drafted=False),
        Key("board", S, REQUIRED, "the board's instance name", drafted=False),
        Key("cpu", S, REQUIRED, "the CPU's instance name", drafted=False),
        Key("npu", S, "", 'the NPU\'s instance name ("": none to configure)', drafted=False),
        Key("uart", S, defaults.FVP_UART, "the console UART's instance name", drafted=False),
        Key("params", L, [], 'more "instance.parameter=value"', drafted=False),
    ),
    "port": (
        Key("sources", L, [], "C sources, relative to the board's folder"),
        Key("include_dirs", L, [], "include folders, relative to it"),
        Key("cmake", S, None, "a CMake file the build includes"),
        Key("hooks", L, [], "the HAL hooks the sources implement (docs/hal.md)"),
    ),
    "region": (
        Key("name", S, REQUIRED, "a C identifier (linker scripts use it)"),
        Key("kind", S, REQUIRED, "the memory's kind", choices=tuple(k.value for k in RegionKind)),
        Key("base", N, REQUIRED, "its first byte"),
        Key("size", N, REQUIRED, "its size", positive=True),
        Key("description", S, "", "one line"),
        *(Key(a, B, Derived("the kind's"), f"the region's {a} attribute") for a in REGION_ATTRS),
        Key(
            "npu_port",
            S,
            Derived('"none" when npu = false, "sram" for kind sram, else "ext"'),
            "the NPU's AXI port that reaches it: sram = M0/AXI0 (memory types 0, 1 of "
            "QCONFIG/REGIONCFG), ext = M1/AXI1 (2, 3); U85: its SRAM and EXT ports",
            choices=NPU_PORTS,
        ),
    ),
}


def keys(table: str) -> tuple[str, ...]:
    """The names of `table`'s keys, in schema order."""
    return tuple(k.name for k in SCHEMA[table])


def key(table: str, name: str) -> Key:
    for k in SCHEMA[table]:
        if k.name == name:
            return k
    raise KeyError(f"{table}.{name}")


def _default_text(k: Key) -> str:
    if k.required:
        return "required"
    if isinstance(k.default, Derived):
        return k.default.text
    if k.default is None or k.default == {}:
        return "none"
    if isinstance(k.default, bool):
        return "true" if k.default else "false"
    if isinstance(k.default, int):
        return f"{k.default:_}"
    if isinstance(k.default, str):
        return f'"{k.default}"'
    return repr(k.default)


def doc_table() -> str:
    """docs/boards.md's key reference (between its schema markers)."""
    lines = ["| key | type | default | meaning |", "|---|---|---|---|"]
    for table, entries in SCHEMA.items():
        for k in entries:
            where = f"{table}.{k.name}" if table else k.name
            note = k.doc.replace("|", "\\|")
            if k.choices:
                note += ": " + ", ".join(f"`{c}`" if c else '`""`' for c in k.choices)
            lines.append(f"| `{where}` | {k.type.value} | {_default_text(k)} | {note} |")
    lines += [
        "",
        "A region's attributes, when its [[region]] leaves them out, by kind "
        '(on a board with `boot.from = "nv"`, a region volatile by its kind or by its own '
        "`volatile = true` is not loadable; one written `volatile = false`, such as a block "
        "RAM a board controller fills before reset, is):",
        "",
    ]
    lines += [f"| kind | {' | '.join(REGION_ATTRS)} |", "|---" * (len(REGION_ATTRS) + 1) + "|"]
    for kind, attrs in KIND_ATTRS.items():
        flags = " | ".join("yes" if getattr(attrs, a) else "no" for a in REGION_ATTRS)
        lines.append(f"| `{kind.value}` | {flags} |")
    return "\n".join(lines) + "\n"
