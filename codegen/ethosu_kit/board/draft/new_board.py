"""`ethosu-kit new-board`: draft a board folder from what is known about the silicon.

The facts come from, in this order (later wins): an existing board (`--from`), a
CMSIS-Pack device (`--pack --device`), its SVD (`--svd`, or the one the pack names),
and the command line. `draft_*` collect them into a `Draft`; `render_folder` turns it
into the folder's files (board.toml from render/templates/board.toml.j2, plus C stubs for the
HAL hooks the data needs); `write_folder` validates the result with the real loader
in a temporary folder before anything reaches the user's.

Every fact the sources do not give is written as one of two kinds of TODO:
- a blocking TODO: the value is the string "TODO", the loader records the key in
  `Board.todo`, and whatever needs the fact refuses with an error naming it
  (`npu.base` / `npu.irq`: builds with the real NPU driver; `boot.vector_region`:
  every build). A guess there would build firmware that hangs or faults.
- a checked default: a safe value and a `# TODO: ...` comment on its line (`boards DIR`
  lists them). Safe means: wrong only costs speed, prints nothing or is refused
  later with a named error, never a silent hang.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
import tomllib
from dataclasses import dataclass, field, fields, replace
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

import jinja2

from ethosu_kit import __version__
from ethosu_kit.board.cores import CORES, cpu_flags
from ethosu_kit.board.draft.cmsis_pack import draft_regions, resolve_security
from ethosu_kit.board.draft.svd import find_console, find_npu, npu_kind, uart_kind
from ethosu_kit.board.loader import parse_board
from ethosu_kit.board.model import CONSOLE_KINDS, MMIO_CONSOLES, Cpu
from ethosu_kit.board.toolchain import TOOLCHAINS
from ethosu_kit.core.errors import BoardError, KitError
from ethosu_kit.core.files import MAX_BOARD, read_text
from ethosu_kit.core.paths import templates_dir
from ethosu_kit.core.writer import write_file_atomic
from ethosu_kit.npu.facts import DEFAULT_REGISTERS, NPU_MACS, runs_mode

if TYPE_CHECKING:
    from ethosu_kit.board.draft.cmsis_pack import PackDevice
    from ethosu_kit.board.draft.svd import SvdDevice
    from ethosu_kit.board.model import Board

TODO = "TODO"  # the value of a blocking TODO (board_loader.TODO_KEYS lists where it may stand)
_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f]+")


@dataclass
class RegionFacts:
    name: str
    kind: str
    base: int
    size: int
    on_chip: bool
    volatile: bool
    cpu: bool
    npu: bool
    executable: bool
    writable: bool
    loadable: bool
    description: str = ""
    todo: str = ""  # checked-default note for its npu flag
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
    dcache_line: int = 32
    trustzone: bool = False
    irqs: int | None = None
    timer: str = "systick"
    clock_hz: int = 25_000_000
    flags: dict[str, list[str]] = field(default_factory=dict)
    cpu_extra: dict[str, Any] = field(default_factory=dict)  # [cpu] keys this module does not know
    # [npu]
    npu_kinds: list[str] = field(default_factory=list)
    npu_macs: dict[str, list[int]] = field(default_factory=dict)
    npu_base: int | None = None
    npu_base_ns: int | None = None
    npu_irq: int | None = None
    npu_secure: bool = True
    npu_privileged: bool = True
    npu_registers: dict[str, dict[str, tuple[int, tuple[int, ...]]]] = field(default_factory=dict)
    npu_axi: dict[str, Any] = field(default_factory=dict)
    # [console]
    console_kind: str = "none"
    console_base: int | None = None
    console_base_ns: int | None = None
    console_clock_hz: int = 25_000_000
    console_baud: int = 115200
    console_peripheral: str = ""  # the SVD's name, for comments and the stub
    console_source: str = ""  # where the console came from; "" = nowhere (a TODO)
    # [boot]
    vector_region: str | None = None
    vector_address: int | None = None
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


def comment(text: str) -> str:
    """Text safe inside a one-line # comment (a newline would end it and start TOML)."""
    return _CONTROL_RE.sub(" ", text).strip()


def c_comment(text: str) -> str:
    """Text safe inside a C block comment: one line, and no */ to end it early."""
    return comment(text).replace("*/", "* /").replace("/*", "/ *")


# -- from an existing board --------------------------------------------------------------


def _port_files(board: Board) -> dict[str, bytes]:
    """The board's own files, relative to its folder, refusing anything outside it."""
    root = Path(board.port.dir).resolve()
    files: dict[str, bytes] = {}

    def add(rel: str, path: Path) -> None:
        real = path.resolve()
        if not real.is_relative_to(root):
            raise BoardError(f"{board.source}: [port] {rel!r} is outside the board's folder")
        files[real.relative_to(root).as_posix()] = real.read_bytes()

    for rel in (*board.port.sources, *([board.port.cmake] if board.port.cmake else [])):
        add(rel, root / rel)
    for rel in board.port.include_dirs:
        folder = (root / rel).resolve()
        if not folder.is_relative_to(root):
            raise BoardError(f"{board.source}: [port] {rel!r} is outside the board's folder")
        for path in sorted(folder.rglob("*")):
            if path.is_file() and path.suffix in (".h", ".hpp", ".inc"):
                add(path.relative_to(root).as_posix(), path)
    return files


# What board.toml.j2 writes itself; any other table of a copied board passes through.
_DRAFTED = {"schema", "name", "aliases", "description", "cpu", "npu", "console", "boot",
            "qemu", "port", "region", "glue", "uart", "qemu_machine", "glue_dir"}  # fmt: skip
_DRAFTED_QEMU = {"machine", "cpu", "stand_in"}


def _passthrough(board: Board) -> dict[str, dict[str, Any]]:
    """The tables of `board`'s file new-board does not model: copied as they are."""
    data = tomllib.loads(read_text(Path(board.source), MAX_BOARD, BoardError))
    tables = {k: v for k, v in data.items() if k not in _DRAFTED and isinstance(v, dict)}
    qemu = data.get("qemu")
    if isinstance(qemu, dict):
        tables |= {f"qemu.{k}": v for k, v in qemu.items()
                   if k not in _DRAFTED_QEMU and isinstance(v, dict)}  # fmt: skip
    return tables


def draft_from_board(board: Board, name: str) -> Draft:
    """Every fact of `board`, for a new board that starts as its copy."""
    cpu, npu, console = board.cpu, board.npu, board.console
    flags = {
        tc: list(cpu.flags[tc])
        for tc in TOOLCHAINS
        if tc in cpu.flags and cpu.flags[tc] != cpu_flags(cpu.core, cpu.fpu, cpu.mve, tc, cpu.dsp)
    }
    cpu_keys = [f.name for f in fields(Cpu) if f.name not in ("arch", "flags")]
    draft_keys = {f.name for f in fields(Draft)}
    registers: dict[str, dict[str, tuple[int, tuple[int, ...]]]] = {}
    for (kind, mode), regs in npu.registers.items():
        registers.setdefault(kind, {})[mode] = (regs.qconfig, tuple(regs.regioncfg))
    axi: dict[str, Any] = {}
    for key, pair in npu.axi_limits.items():
        kind, _, port = key.partition(":")
        if port:
            axi.setdefault(kind, {})[port] = list(pair)
        else:
            axi[kind] = list(pair)
    d = Draft(
        name=name,
        origin=[f"from board {board.name} ({board.source})"],
        description=f"{board.description} (drafted from {board.name})".strip(),
        # [cpu] is Cpu's fields (arch and flags derive from them): every one is copied,
        # those this module has no Draft field for through cpu_extra
        **{k: getattr(cpu, k) for k in cpu_keys if k in draft_keys},
        cpu_extra={k: getattr(cpu, k) for k in cpu_keys if k not in draft_keys},
        flags=flags,
        npu_kinds=list(npu.kinds),
        npu_macs={k: list(v) for k, v in npu.macs.items()},
        npu_base=None if "npu.base" in board.todo else npu.base,
        npu_base_ns=npu.base_ns,
        npu_irq=None if "npu.irq" in board.todo else npu.irq,
        npu_secure=npu.secure,
        npu_privileged=npu.privileged,
        npu_registers=registers,
        npu_axi=axi,
        console_kind=console.kind,
        console_base=console.base if console.mmio else None,
        console_base_ns=console.base_ns,
        console_clock_hz=console.clock_hz,
        console_baud=console.baud,
        console_source=f"board {board.name}",
        vector_region=(
            TODO
            if "boot.vector_region" in board.todo
            else board.boot.vector_region
            if board.boot
            else None
        ),
        vector_address=board.boot.vector_address if board.boot else None,
        qemu_machine=board.qemu.machine if board.qemu else None,
        qemu_cpu=board.qemu.cpu if board.qemu else None,
        qemu_stand_in=board.qemu.stand_in if board.qemu else "",
        port_sources=list(board.port.sources),
        port_include_dirs=list(board.port.include_dirs),
        port_cmake=board.port.cmake,
        port_hooks=list(board.port.hooks),
        port_files=_port_files(board),
        regions=[
            RegionFacts(
                r.name,
                r.kind.value,
                r.base,
                r.size,
                r.on_chip,
                r.volatile,
                r.cpu,
                r.npu,
                r.executable,
                r.writable,
                r.loadable,
                r.description,
            )
            for r in board.regions
        ],
        glue=dict(board.glue),
        passthrough=_passthrough(board),
    )
    _mark_copied(d, board.name)
    return d


def _mark_copied(d: Draft, source: str) -> None:
    """Every fact copied from another board is a checked default: true of `source`, not
    known of this SoC. The porter confirms each one (`boards DIR` lists them); options
    and an SVD that give a fact take its mark off (apply_choices, apply_svd)."""
    was = f"copied from {source}:"
    d.todo["cpu.core"] = f"{was} this SoC's core, and fpu, mve, dsp, caches, trustzone, irqs, " \
        "clock_hz below"  # fmt: skip
    if d.npu_base is not None:
        d.todo["npu.base"] = f"{was} this SoC's NPU register base (base_ns: its non-secure alias)"
    if d.npu_irq is not None:
        d.todo["npu.irq"] = f"{was} this SoC's NPU interrupt number (IRQn)"
    for kind in d.npu_registers:
        d.todo[f"npu.registers.{kind}"] = (
            f"{was} QCONFIG/REGIONCFG for that SoC's AXI wiring; check them against this one's "
            "(the selftest app proves them)"
        )
    d.todo["console.kind"] = f"{was} this SoC's console: UART kind, base, clock_hz, baud"
    if d.vector_region not in (None, TODO):
        d.todo["boot.vector_region"] = f"{was} where this SoC's core fetches its vector table " \
            "at reset (VTOR)"  # fmt: skip
    if d.qemu_machine:
        d.todo["qemu.machine"] = f"{was} `ethosu-kit run` runs this board's images on this " \
            "QEMU machine: yours, or delete [qemu]"  # fmt: skip
    for table in d.passthrough:
        if table.split(".")[:2] == ["qemu", "layout"]:
            d.todo[table] = f"{was} how that board's map is laid onto its QEMU stand-in " \
                "machine: yours, or delete it"  # fmt: skip
    if "fvp" in d.passthrough:
        d.todo["fvp"] = f"{was} `ethosu-kit run` uses this FVP when it is installed: delete " \
            "this table unless your board is that FVP"  # fmt: skip
    if d.port_sources:
        d.todo["port"] = f"{was} that board's HAL code: does it fit this SoC?"
    for r in d.regions:
        r.copied = f"{was} is this memory on this SoC, at this base and size?"


# -- from a pack -------------------------------------------------------------------------


def draft_from_pack(device: PackDevice, pdsc: Path, name: str, security: str) -> Draft:
    """The CPU and memory map a CMSIS pack gives; TODO for the rest."""
    where = f"{pdsc.name}, device {device.name}"
    if device.core not in CORES:
        raise BoardError(
            f"{pdsc}: device {device.name}: processor {device.core or '(none)'} is not a core "
            "the kit builds for",
            hint=f"cores: {', '.join(CORES)}",
        )
    core = CORES[device.core]
    regions, skipped = draft_regions(device, security)
    if not regions:
        raise BoardError(f"{pdsc}: device {device.name} has no <memory> the board can use")
    security = resolve_security(device.memories, security)
    fpu = "none"
    if device.fpu:
        fpu = "dp" if device.fpu_dp and "dp" in core.fpus else core.fpus[0]
    d = Draft(
        name=name,
        origin=[f"from pack {device.pack} ({where})"],
        # a board's description is one printable line: the pack's strings may not be
        description=comment(f"{device.vendor} {device.name} (from {device.pack})"),
        core=core.name,
        fpu=fpu,
        dcache_line=core.dcache_line,
        trustzone=core.trustzone and security != "all",
        skipped=skipped,
    )
    if core.mve:
        d.todo["cpu.mve"] = (
            'the pack library does not report Dmve: "fp" or "int" if this core has MVE '
            "(faster kernels); none is safe"
        )
    if core.caches:
        d.todo["cpu.dcache"] = (
            "the pack does not say: true if the core has a data cache (off is safe when "
            "nothing before this image enabled it; slower)"
        )
        d.todo["cpu.icache"] = "the pack does not say (off is safe, slower)"
    if core.trustzone and security == "all":
        d.todo["cpu.trustzone"] = "the pack lists no secure/non-secure aliases: true if the " \
            "core has the Security Extension"  # fmt: skip
    if core.dsp_optional:
        d.dsp = False
        d.todo["cpu.dsp"] = "the pack library does not report Ddsp: true if the core has the " \
            "DSP extension (faster kernels); false is safe"  # fmt: skip
    d.todo["cpu.clock_hz"] = "the pack library does not report Dclock (used for times only)"
    # the NPU's transactions match the aliases the board uses; a core without security
    # states (Armv7-M) has no secure side to ask for
    d.npu_secure = core.trustzone and security != "ns"
    for r in regions:
        guessed = r.kind.value in ("sram", "bram", "dram", "flash")
        d.regions.append(
            RegionFacts(
                r.name, r.kind.value, r.base, r.size, r.on_chip, r.volatile, True, r.npu,
                r.executable, r.writable, True, comment(r.note),
                todo="guessed from the memory's name and access: can the NPU's AXI masters "
                "reach it?" if guessed else "",
            )
        )  # fmt: skip
    startup = [m for m in device.memories if m.startup]
    d.vector_region = TODO  # blocking unless the pack marks where the core starts
    if startup:
        home = next((r for r in d.regions if r.base <= startup[0].start < r.base + r.size), None)
        if home is not None:
            d.vector_region = home.name
            if startup[0].start != home.base:
                d.vector_address = startup[0].start
    return d


# -- from an SVD -------------------------------------------------------------------------


@dataclass(frozen=True)
class Choices:
    """What the command line says (None: not given)."""

    npu: str | None = None  # "ethos-u55-128" or "ethos-u55"
    npu_base: int | None = None
    npu_irq: int | None = None
    npu_peripheral: str | None = None
    console: str | None = None  # a console kind
    console_base: int | None = None
    console_peripheral: str | None = None


def apply_svd(d: Draft, svd: SvdDevice, choices: Choices) -> None:
    """The NPU's and the console's addresses and interrupts, and the CPU facts an SVD has."""
    src = Path(svd.source).name
    d.origin.append(f"peripherals from {src} (device {svd.name})")
    if svd.cpu is not None and d.core in CORES:
        core = CORES[d.core]
        if core.caches:
            for key, value in (("dcache", svd.cpu.dcache), ("icache", svd.cpu.icache)):
                if value is not None:
                    setattr(d, key, value)
                    d.todo.pop(f"cpu.{key}", None)
        if core.dsp_optional and svd.cpu.dsp is not None:
            d.dsp = svd.cpu.dsp
            d.todo.pop("cpu.dsp", None)
        if svd.cpu.irqs:
            d.irqs = min(svd.cpu.irqs, core.max_irqs)
        if core.trustzone and svd.cpu.sau_regions:
            d.trustzone = True
            d.todo.pop("cpu.trustzone", None)
    secure = d.npu_secure
    if choices.npu_base is None or choices.npu_irq is None:
        npu = find_npu(svd, choices.npu_peripheral, secure=secure)
        if npu is not None:
            d.npu_base, d.npu_base_ns, d.npu_irq = npu.base, npu.base_ns, npu.irq
            d.todo.pop("npu.base", None), d.todo.pop("npu.irq", None)
            d.origin.append(f"NPU: {src} peripheral {'/'.join(npu.names)}")
            kind = npu_kind(npu)
            if kind and not d.npu_kinds:
                d.npu_kinds = [kind]
    if choices.console is None and choices.console_base is None:
        uart = find_console(svd, choices.console_peripheral, secure=secure)
        if uart is not None:
            kind = uart_kind(uart)
            d.console_kind = kind or "custom"
            d.console_base, d.console_base_ns = uart.base, uart.base_ns
            d.console_peripheral = "/".join(uart.names)
            d.origin.append(
                f"console: {src} peripheral {d.console_peripheral}"
                + (f" ({kind} registers)" if kind else " (a UART the kit has no driver for)")
            )
            d.console_source = f"{src} {d.console_peripheral}"
            d.todo.pop("console.kind", None)


# -- from the command line ---------------------------------------------------------------


def parse_npu(text: str) -> tuple[str, list[int]]:
    """KIND[-MACS]: "ethos-u55-128" -> ("ethos-u55", [128]); "ethos-u65" -> ("ethos-u65", [])."""
    m = re.fullmatch(r"(ethos-u\d\d)(?:-(\d+))?", text.strip().lower())
    if not m or m.group(1) not in NPU_MACS:
        raise KitError(
            f"--npu {text!r}: not an Ethos-U",
            hint=f"use KIND or KIND-MACS, e.g. ethos-u55-128 (kinds: {', '.join(NPU_MACS)})",
        )
    kind = m.group(1)
    if m.group(2) is None:
        return kind, []
    macs = int(m.group(2))
    if macs not in NPU_MACS[kind]:
        raise KitError(
            f"--npu {text!r}: {kind} has no {macs}-MAC configuration",
            hint=f"it exists as {', '.join(str(x) for x in NPU_MACS[kind])}",
        )
    return kind, [macs]


def apply_choices(d: Draft, choices: Choices) -> None:
    if choices.npu is not None:
        kind, macs = parse_npu(choices.npu)
        d.npu_kinds = [kind]
        d.npu_macs = {kind: macs} if macs else {}
        d.npu_registers = {k: v for k, v in d.npu_registers.items() if k == kind}
        d.npu_axi = {k: v for k, v in d.npu_axi.items() if k == kind}
        fvp = d.passthrough.get("fvp")
        if fvp is not None:  # a copied board's FVP models: only the one for this kind stays
            models = {k: v for k, v in dict(fvp.get("models", {})).items() if k == kind}
            if models:
                d.passthrough["fvp"] = {**fvp, "models": models}
            else:
                del d.passthrough["fvp"]
    if choices.npu_base is not None:
        d.npu_base, d.npu_base_ns = choices.npu_base, None
        d.todo.pop("npu.base", None)
    if choices.npu_irq is not None:
        d.npu_irq = choices.npu_irq
        d.todo.pop("npu.irq", None)
    if choices.console is not None:
        if choices.console not in CONSOLE_KINDS:
            raise KitError(
                f"--console {choices.console!r}: not a console kind",
                hint=f"kinds: {', '.join(CONSOLE_KINDS)}",
            )
        d.console_kind = choices.console
        d.console_base_ns = None
        d.console_peripheral = ""
        d.console_source = "--console"
        d.todo.pop("console.kind", None)
        if choices.console in MMIO_CONSOLES and choices.console_base is None:
            raise KitError(
                f"--console {choices.console} needs --console-base (the UART's register base)",
                hint="or give --svd with the UART and --console-peripheral NAME",
            )
        if choices.console not in (*MMIO_CONSOLES, "custom"):
            if choices.console_base is not None:
                raise KitError(f"--console-base: a {choices.console} console has no address")
            d.console_base = None
    if choices.console_base is not None:
        if choices.console is None and d.console_kind not in (*MMIO_CONSOLES, "custom"):
            raise KitError(
                "--console-base needs --console KIND (cmsdk-apb, pl011 or custom)",
                hint="the kit cannot tell the UART's kind from its address",
            )
        d.console_base = choices.console_base


def finish(d: Draft) -> None:
    """Fill what is still unknown with its TODO, as the module docstring decides."""
    if not d.npu_kinds:
        d.npu_kinds = ["ethos-u55"]
        d.todo["npu.kinds"] = "the Ethos-U this SoC carries (--npu); gen refuses a pte for another"
    for kind in d.npu_kinds:
        if not d.npu_macs.get(kind):
            d.npu_macs[kind] = list(NPU_MACS[kind])
            d.todo[f"npu.macs.{kind}"] = (
                "every configuration: the pte decides; keep the SoC's only (--npu KIND-MACS)"
            )
        if kind not in d.npu_registers:
            d.npu_registers[kind] = {
                mode.value: regs
                for mode, regs in DEFAULT_REGISTERS.items()
                if runs_mode(kind, mode)
            }
            d.todo[f"npu.registers.{kind}"] = (
                "Arm's driver defaults: check them against the SoC's AXI wiring (the selftest "
                "app proves them)"
            )
    if not d.console_source:
        d.todo["console.kind"] = (
            'nothing is printed: cmsdk-apb or pl011 with base, "semihosting" under a debugger '
            'or QEMU, or "custom" with your own C'
        )
    if d.console_kind == "custom" and "console" not in d.port_hooks:
        stub = "console.c"
        d.port_sources.append(stub)
        d.port_hooks.append("console")
        if "." not in d.port_include_dirs:
            d.port_include_dirs.append(".")
        d.port_files[stub] = render_console_stub(d).encode("utf-8")
    if d.irqs is None and d.core in CORES:
        d.irqs = CORES[d.core].max_irqs
        d.todo["cpu.irqs"] = "the NVIC's size is unknown: the most the core can have (only " \
            "costs vector table bytes)"  # fmt: skip
    if d.npu_irq is not None and d.irqs is not None and d.npu_irq >= d.irqs:
        d.irqs = d.npu_irq + 1


# -- rendering ---------------------------------------------------------------------------


def _environment() -> Any:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(templates_dir()),
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
        autoescape=False,
    )
    env.filters["toml"] = toml_value
    env.filters["comment"] = comment
    env.filters["c_comment"] = c_comment
    env.filters["toml_key"] = toml_key
    env.filters["hex"] = lambda n: f"0x{n:08x}"
    return env


_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def toml_key(key: str) -> str:
    return key if _BARE_KEY.match(key) else json.dumps(key)


def toml_value(value: Any) -> str:
    """One TOML value (strings JSON-escaped: a valid TOML basic string, no injection)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{toml_key(k)} = {toml_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(f"no TOML for {type(value).__name__}")


def render_console_stub(d: Draft) -> str:
    text: str = _environment().get_template("board_console.c.j2").render(d=d)
    return text


def render_board_toml(d: Draft) -> str:
    env = _environment()
    text: str = env.get_template("board.toml.j2").render(d=d, version=__version__, TODO=TODO)
    return text


def render_folder(d: Draft) -> dict[str, bytes]:
    files = dict(d.port_files)
    files["board.toml"] = render_board_toml(d).encode("utf-8")
    return files


def _check_rel(rel: str) -> None:
    p = PurePosixPath(rel)
    if p.is_absolute() or ".." in p.parts or not p.parts:
        raise BoardError(f"{rel!r}: a board file must stay inside the board's folder")


def validate(files: dict[str, bytes], name_for_errors: str) -> Board:
    """Load the drafted folder with the real loader, from a temporary copy."""
    with tempfile.TemporaryDirectory(prefix="ethosu-kit-board-") as tmp:
        root = Path(tmp)
        for rel, data in files.items():
            _check_rel(rel)
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_bytes(data)
        text = files["board.toml"].decode("utf-8")
        board = parse_board(text, name_for_errors, root)
    return replace(board, source=name_for_errors)


def write_folder(files: dict[str, bytes], out: Path, force: bool) -> list[str]:
    """Write the folder; never over a user's files: a non-empty `out` needs `force`, and
    then only the files drafted here are replaced (others stay), each atomically."""
    if out.exists() and not out.is_dir():
        raise KitError(f"{out}: exists and is not a folder")
    if out.is_dir() and any(out.iterdir()) and not force:
        raise KitError(
            f"{out}: exists and is not empty; not writing a board into it",
            hint="give a new folder, or --force to replace the files new-board writes "
            "(board.toml and its stubs; other files stay)",
        )
    if not out.exists():
        # build next to it and rename: a failure leaves no half-written folder
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}."))
        try:
            for rel, data in files.items():
                (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
                (tmp / rel).write_bytes(data)
            tmp.chmod(0o755)
            tmp.rename(out)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    else:
        for rel, data in files.items():
            (out / rel).parent.mkdir(parents=True, exist_ok=True)
            write_file_atomic(out / rel, data)
    return sorted(files)
