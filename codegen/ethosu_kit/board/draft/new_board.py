"""`ethosu-kit new-board`: draft a board folder from what is known about the silicon.

The facts come from, in this order (later wins): an existing board (`--from`), a
CMSIS-Pack device (`--pack --device`), its SVD (`--svd`, or the one the pack names),
and the command line. `draft_*` collect them into a `Draft` (facts.py: the facts and
their sources; from_board.py: a copy of another board); `render_folder` turns it into
the folder's files (render.py: board.toml from render/templates/board.toml.j2, plus C
stubs for the HAL hooks the data needs); `validate` loads the result with the real
loader from memory before `write_folder` writes anything.

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

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ethosu_kit.board.cores import CORES
from ethosu_kit.board.draft.cmsis_pack import draft_regions, resolve_security
from ethosu_kit.board.draft.facts import Draft, RegionFacts, Source
from ethosu_kit.board.draft.from_board import draft_from_board
from ethosu_kit.board.draft.render import (
    comment,
    render_board_toml,
    render_console_stub,
    render_folder,
    validate,
    write_folder,
)
from ethosu_kit.board.draft.svd import find_console, find_npu, npu_facts, uart_kind
from ethosu_kit.board.model import CONSOLE_KINDS, BootFrom, ConsoleKind, MemoryRegion
from ethosu_kit.board.todo import TODO
from ethosu_kit.core.errors import BoardError, KitError
from ethosu_kit.npu.facts import DEFAULT_REGISTERS, NPU_MACS, runs_mode

if TYPE_CHECKING:
    from ethosu_kit.board.draft.cmsis_pack import PackDevice
    from ethosu_kit.board.draft.svd import SvdDevice

# the CLI's entry points (cli/commands/new_board.py, import_pack.py) are all here
__all__ = ["Choices", "Draft", "apply_choices", "apply_svd", "draft_from_board",
           "draft_from_pack", "finish", "parse_npu", "render_board_toml", "render_folder",
           "validate", "write_folder"]  # fmt: skip


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
    d.given(Source.PACK, "cpu.core", "cpu.fpu", "cpu.dcache_line", "cpu.trustzone", "region")
    if core.mve and device.mve is not None:
        d.mve = device.mve
        d.given(Source.PACK, "cpu.mve")
    elif core.mve:
        d.defaulted(
            "cpu.mve",
            'the pack gives no Dmve: "fp" or "int" if this core has MVE (faster kernels); '
            "none is safe",
        )
    if core.caches:
        d.defaulted(
            "cpu.dcache",
            "the pack does not say: true if the core has a data cache (off is safe when "
            "nothing before this image enabled it; slower)",
        )
        d.defaulted("cpu.icache", "the pack does not say (off is safe, slower)")
    if core.trustzone and device.trustzone is not None:
        # Dtz says whether the core has the Security Extension; the firmware uses it only
        # when the pack's map has the secure addresses it runs at
        d.trustzone = device.trustzone and security != "ns"
        d.given(Source.PACK, "cpu.trustzone")
    elif core.trustzone and security == "all":
        d.defaulted(
            "cpu.trustzone",
            "the pack lists no secure/non-secure aliases: true if the "
            "core has the Security Extension",
        )
    if core.dsp_optional and device.dsp is not None:
        d.dsp = device.dsp
        d.given(Source.PACK, "cpu.dsp")
    elif core.dsp_optional:
        d.dsp = False
        d.defaulted(
            "cpu.dsp",
            "the pack gives no Ddsp: true if the core has the DSP extension (faster "
            "kernels); false is safe",
        )
    if device.clock_hz is not None:
        d.clock_hz = device.clock_hz
        d.given(Source.PACK, "cpu.clock_hz")
    else:
        d.defaulted("cpu.clock_hz", "the pack gives no Dclock (used for times only)")
    # the NPU's transactions match the aliases the board uses; a core without security
    # states (Armv7-M) has no secure side to ask for
    d.npu_secure = core.trustzone and security != "ns"
    for r in regions:
        guessed = r.kind.value in ("sram", "bram", "dram", "flash")
        region = MemoryRegion(
            name=r.name, kind=r.kind, base=r.base, size=r.size, on_chip=r.on_chip,
            volatile=r.volatile, cpu=True, npu=r.npu, executable=r.executable,
            writable=r.writable, loadable=r.loadable, description=comment(r.note),
        )  # fmt: skip
        note = (
            "guessed from its kind: the NPU AXI port that reaches it, as the SoC's bus "
            'matrix says: "sram" (M0/AXI0, the U85 SRAM port), "ext" (M1/AXI1, EXT), "both", '
            'or "none" (only the CPU or a DMA reaches it)'
        )
        d.regions.append(RegionFacts(region=region, todo=note if guessed else ""))
    startup = [m for m in device.memories if m.startup]
    d.vector_region = TODO  # blocking unless the pack marks where the core starts
    if startup:
        home = next((f.region for f in d.regions if f.region.contains(startup[0].start)), None)
        if home is not None:
            d.vector_region = home.name
            d.given(Source.PACK, "boot.vector_region")
            if home.volatile:  # a RAM the boot ROM or a debugger fills: not a cold boot
                d.boot_from = BootFrom.LOADER
            if startup[0].start != home.base:
                d.vector_address = startup[0].start
    if d.vector_region == TODO:
        # still blocking (a wrong guess never boots), but say what a part like this
        # usually boots from: its on-chip non-volatile memory the pack marks default
        nv = [f.region.name for f in d.regions if f.region.loadable and f.region.on_chip]
        defaults = {m.name for m in device.memories if m.default}
        likely = [n for n in nv if n in defaults] or nv
        if len(likely) == 1:
            d.vector_hint = f"its on-chip non-volatile memory is {likely[0]}"
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
                    d.given(Source.SVD, f"cpu.{key}")
        if core.dsp_optional and svd.cpu.dsp is not None:
            d.dsp = svd.cpu.dsp
            d.given(Source.SVD, "cpu.dsp")
        if svd.cpu.irqs:
            d.irqs = min(svd.cpu.irqs, core.max_irqs)
            d.given(Source.SVD, "cpu.irqs")
        if core.trustzone and svd.cpu.sau_regions:
            d.trustzone = True
            d.given(Source.SVD, "cpu.trustzone")
    secure = d.npu_secure
    if choices.npu_base is None or choices.npu_irq is None:
        npu = find_npu(svd, choices.npu_peripheral, secure=secure)
        if npu is not None:
            d.npu_base, d.npu_base_ns, d.npu_irq = npu.base, npu.base_ns, npu.irq
            d.given(Source.SVD, "npu.base", "npu.irq")
            d.origin.append(f"NPU: {src} peripheral {'/'.join(npu.names)}")
            facts = npu_facts(npu)
            if facts.kind and not d.npu_kinds:
                d.npu_kinds = [facts.kind]
                d.given(Source.SVD, "npu.kinds")
                d.origin.append(f"NPU kind: {facts.kind}, from {facts.why}")
                if facts.macs is not None:
                    d.npu_macs = {facts.kind: [facts.macs]}
                    d.given(Source.SVD, "npu.macs", f"npu.macs.{facts.kind}")
                    d.origin.append(f"NPU MACs: {facts.macs}, from its CONFIG reset value")
    if choices.console is None and choices.console_base is None:
        uart = find_console(svd, choices.console_peripheral, secure=secure)
        if uart is not None:
            kind = uart_kind(uart)
            d.console_kind = ConsoleKind(kind) if kind else ConsoleKind.CUSTOM
            d.console_base, d.console_base_ns = uart.base, uart.base_ns
            d.console_peripheral = "/".join(uart.names)
            d.origin.append(
                f"console: {src} peripheral {d.console_peripheral}"
                + (f" ({kind} registers)" if kind else " (a UART the kit has no driver for)")
            )
            d.console_source = f"{src} {d.console_peripheral}"
            d.given(Source.SVD, "console.kind", "console.base")


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


def _addressed(kind: ConsoleKind) -> bool:
    """A console at a register base: a UART the kit drives, or the board's own."""
    return kind.mmio or kind is ConsoleKind.CUSTOM


def apply_choices(d: Draft, choices: Choices) -> None:
    if choices.npu is not None:
        kind, macs = parse_npu(choices.npu)
        d.npu_kinds = [kind]
        # MACs the SVD gave for this same kind stay unless the user names others
        d.npu_macs = {kind: macs} if macs else {k: v for k, v in d.npu_macs.items() if k == kind}
        d.npu_registers = {k: v for k, v in d.npu_registers.items() if k == kind}
        d.npu_axi = {k: v for k, v in d.npu_axi.items() if k == kind}
        d.given(Source.USER, "npu.kinds", *(["npu.macs"] if macs else []))
        fvp = d.passthrough.get("fvp")
        if fvp is not None:  # a copied board's FVP models: only the one for this kind stays
            models = {k: v for k, v in dict(fvp.get("models", {})).items() if k == kind}
            if models:
                d.passthrough["fvp"] = {**fvp, "models": models}
            else:
                del d.passthrough["fvp"]
    if choices.npu_base is not None:
        d.npu_base, d.npu_base_ns = choices.npu_base, None
        d.given(Source.USER, "npu.base")
    if choices.npu_irq is not None:
        d.npu_irq = choices.npu_irq
        d.given(Source.USER, "npu.irq")
    if choices.console is not None:
        if choices.console not in CONSOLE_KINDS:
            raise KitError(
                f"--console {choices.console!r}: not a console kind",
                hint=f"kinds: {', '.join(CONSOLE_KINDS)}",
            )
        kind = ConsoleKind(choices.console)
        d.console_kind = kind
        d.console_base_ns = None
        d.console_peripheral = ""
        d.console_source = "--console"
        d.given(Source.USER, "console.kind")
        if kind.mmio and choices.console_base is None:
            raise KitError(
                f"--console {choices.console} needs --console-base (the UART's register base)",
                hint="or give --svd with the UART and --console-peripheral NAME",
            )
        if not _addressed(kind):
            if choices.console_base is not None:
                raise KitError(f"--console-base: a {choices.console} console has no address")
            d.console_base = None
    if choices.console_base is not None:
        if choices.console is None and not _addressed(d.console_kind):
            raise KitError(
                "--console-base needs --console KIND (cmsdk-apb, pl011 or custom)",
                hint="the kit cannot tell the UART's kind from its address",
            )
        d.console_base = choices.console_base
        d.given(Source.USER, "console.base")


def finish(d: Draft) -> None:
    """Fill what is still unknown with its TODO, as the module docstring decides."""
    if not d.npu_kinds:
        d.npu_kinds = ["ethos-u55"]
        d.defaulted(
            "npu.kinds", "the Ethos-U this SoC carries (--npu); gen refuses a pte for another"
        )
    for kind in d.npu_kinds:
        if not d.npu_macs.get(kind):
            d.npu_macs[kind] = list(NPU_MACS[kind])
            d.defaulted(
                f"npu.macs.{kind}",
                ("every configuration: the pte decides; keep the SoC's only (--npu KIND-MACS)"),
            )
        if kind not in d.npu_registers:
            d.npu_registers[kind] = {
                mode.value: regs
                for mode, regs in DEFAULT_REGISTERS.items()
                if runs_mode(kind, mode)
            }
            d.defaulted(
                f"npu.registers.{kind}",
                "Arm's driver defaults: check them against the SoC's AXI wiring (the selftest "
                "app proves them)",
            )
    if not d.console_source:
        d.defaulted(
            "console.kind",
            'nothing is printed: cmsdk-apb or pl011 with base, "semihosting" under a debugger '
            'or QEMU, or "custom" with your own C',
        )
    if _addressed(d.console_kind) and d.sources.get("console.clock_hz") is None:
        # neither a pack nor an SVD gives a UART's reference clock (Dclock is the core's)
        d.defaulted("console.clock_hz", "the UART's input clock (a wrong one garbles the text)")
    if d.console_kind is ConsoleKind.CUSTOM and "console" not in d.port_hooks:
        stub = "console.c"
        d.port_sources.append(stub)
        d.port_hooks.append("console")
        if "." not in d.port_include_dirs:
            d.port_include_dirs.append(".")
        d.port_files[stub] = render_console_stub(d).encode("utf-8")
    if d.irqs is None and d.core in CORES:
        d.irqs = CORES[d.core].max_irqs
        d.defaulted(
            "cpu.irqs",
            "the NVIC's size is unknown: the most the core can have (only "
            "costs vector table bytes)",
        )
    if d.npu_irq is not None and d.irqs is not None and d.npu_irq >= d.irqs:
        d.irqs = d.npu_irq + 1
