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
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ethosu_kit.board.cores import CORES
from ethosu_kit.board.draft.cmsis_pack import draft_regions, resolve_security
from ethosu_kit.board.draft.facts import Draft, RegionFacts, Source, new_cpu
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
from ethosu_kit.board.model import (
    CONSOLE_KINDS,
    Boot,
    BootFrom,
    ConsoleKind,
    ModeRegisters,
    NpuPort,
    Qemu,
    RegionKind,
)
from ethosu_kit.board.todo import TODO
from ethosu_kit.core.errors import BoardError, KitError
from ethosu_kit.npu.facts import DEFAULT_REGISTERS, NPU_MACS, runs_mode

if TYPE_CHECKING:
    from ethosu_kit.board.draft.cmsis_pack import PackDevice
    from ethosu_kit.board.draft.svd import SvdDevice

# the CLI's entry points (cli/commands/new_board.py, import_pack.py) are all here
__all__ = ["Choices", "Draft", "apply_choices", "apply_svd", "draft_from_board",
           "draft_from_pack", "finish", "parse_npu", "render_board_toml", "render_folder",
           "set_npu_macs", "set_qemu_machine", "validate", "write_folder"]  # fmt: skip


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
    cpu = replace(new_cpu(core.name), fpu=fpu, dcache_line=core.dcache_line,
                  trustzone=core.trustzone and security != "all")  # fmt: skip
    d = Draft(
        name=name,
        cpu=cpu,
        origin=[f"from pack {device.pack} ({where})"],
        # a board's description is one printable line: the pack's strings may not be
        description=comment(f"{device.vendor} {device.name} (from {device.pack})"),
        skipped=skipped,
    )
    d.given(Source.PACK, "cpu.core", "cpu.fpu", "cpu.dcache_line", "cpu.trustzone", "region")
    if core.mve and device.mve is not None:
        d.cpu = replace(d.cpu, mve=device.mve)
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
        d.cpu = replace(d.cpu, trustzone=device.trustzone and security != "ns")
        d.given(Source.PACK, "cpu.trustzone")
    elif core.trustzone and security == "all":
        d.defaulted(
            "cpu.trustzone",
            "the pack lists no secure/non-secure aliases: true if the "
            "core has the Security Extension",
        )
    if core.dsp_optional and device.dsp is not None:
        d.cpu = replace(d.cpu, dsp=device.dsp)
        d.given(Source.PACK, "cpu.dsp")
    elif core.dsp_optional:
        d.cpu = replace(d.cpu, dsp=False)
        d.defaulted(
            "cpu.dsp",
            "the pack gives no Ddsp: true if the core has the DSP extension (faster "
            "kernels); false is safe",
        )
    if device.clock_hz is not None:
        d.cpu = replace(d.cpu, clock_hz=device.clock_hz)
        d.given(Source.PACK, "cpu.clock_hz")
    else:
        d.defaulted("cpu.clock_hz", "the pack gives no Dclock (used for times only)")
    # the NPU's transactions match the aliases the board uses; a core without security
    # states (Armv7-M) has no secure side to ask for
    d.npu = replace(d.npu, secure=core.trustzone and security != "ns")
    for r in regions:
        guessed = r.kind.value in ("sram", "bram", "dram", "flash")
        # a board's description is one line: the pack's names may not be
        region = replace(r, description=comment(r.description))
        if region.kind == RegionKind.SRAM and region.npu:
            # an SoC's NPU masters both sit on its interconnect as a rule: "both" lets a
            # U85 (or U65) Dedicated_Sram put its temp pool in a large on-chip SRAM; the
            # TODO asks for the bus matrix's word
            region = replace(region, npu_port=NpuPort.BOTH)
        note = (
            "guessed from its kind: the NPU AXI port that reaches it, as the SoC's bus "
            'matrix says: "sram" (M0/AXI0, the U85 SRAM port), "ext" (M1/AXI1, EXT), "both", '
            'or "none" (only the CPU or a DMA reaches it)'
        )
        d.regions.append(RegionFacts(region=region, todo=note if guessed else ""))
    startup = [m for m in device.memories if m.startup]
    # blocking unless the pack marks where the core starts
    d.boot = Boot(vector_region=TODO, vector_address=0, image_from=BootFrom.NV)
    d.unknown("boot.vector_region")
    if startup:
        home = next((f.region for f in d.regions if f.region.contains(startup[0].start)), None)
        if home is not None:
            # a RAM the boot ROM or a debugger fills is no cold boot
            d.boot = Boot(home.name, startup[0].start,
                          BootFrom.LOADER if home.volatile else BootFrom.NV)  # fmt: skip
            d.given(Source.PACK, "boot.vector_region")
            if startup[0].start != home.base:  # board.toml says so only where it differs
                d.given(Source.PACK, "boot.vector_address")
    if not d.known("boot.vector_region"):
        # still blocking (a wrong guess never boots), but say what a part like this
        # usually boots from: its on-chip non-volatile memory the pack marks default
        nv = [f.region.name for f in d.regions if f.region.loadable and f.region.on_chip]
        defaults = {m.name for m in device.memories if m.default}
        likely = [n for n in nv if n in defaults] or nv
        if len(likely) == 1:
            d.vector_hint = f"its on-chip non-volatile memory is {likely[0]}"
        elif not any(not f.region.volatile for f in d.regions):
            # a part with no flash or MRAM of its own (Himax WE2): its boot ROM copies the
            # image from an external flash into RAM, which from = "nv" can never describe
            d.vector_hint = (
                "the pack lists no non-volatile memory: if a boot ROM copies the image from "
                'external flash into RAM, write from = "loader" and loadable = true on the '
                "RAMs it fills; else add the flash's [[region]]"
            )
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
    if svd.cpu is not None and d.cpu.core in CORES:
        core = CORES[d.cpu.core]
        if core.caches and svd.cpu.dcache is not None:
            d.cpu = replace(d.cpu, dcache=svd.cpu.dcache)
            d.given(Source.SVD, "cpu.dcache")
        if core.caches and svd.cpu.icache is not None:
            d.cpu = replace(d.cpu, icache=svd.cpu.icache)
            d.given(Source.SVD, "cpu.icache")
        if core.dsp_optional and svd.cpu.dsp is not None:
            d.cpu = replace(d.cpu, dsp=svd.cpu.dsp)
            d.given(Source.SVD, "cpu.dsp")
        if svd.cpu.irqs:
            d.cpu = replace(d.cpu, irqs=min(svd.cpu.irqs, core.max_irqs))
            d.given(Source.SVD, "cpu.irqs")
        if core.trustzone and svd.cpu.sau_regions:
            d.cpu = replace(d.cpu, trustzone=True)
            d.given(Source.SVD, "cpu.trustzone")
    secure = d.npu.secure
    if choices.npu_base is None or choices.npu_irq is None:
        npu = find_npu(svd, choices.npu_peripheral, secure=secure)
        if npu is not None:
            d.npu = replace(d.npu, base=npu.base, base_ns=npu.base_ns)
            d.given(Source.SVD, "npu.base")
            if npu.irq is None:
                d.unknown("npu.irq")
            else:
                d.npu = replace(d.npu, irq=npu.irq)
                d.given(Source.SVD, "npu.irq")
            d.origin.append(f"NPU: {src} peripheral {'/'.join(npu.names)}")
            facts = npu_facts(npu)
            if facts.kind and not d.npu.kinds:
                d.npu = replace(d.npu, kinds=(facts.kind,))
                d.given(Source.SVD, "npu.kinds")
                d.origin.append(f"NPU kind: {facts.kind}, from {facts.why}")
                if facts.macs is not None:
                    d.npu = replace(d.npu, macs={facts.kind: (facts.macs,)})
                    d.given(Source.SVD, "npu.macs", f"npu.macs.{facts.kind}")
                    d.origin.append(f"NPU MACs: {facts.macs}, from its CONFIG reset value")
    if choices.console is None and choices.console_base is None:
        uart = find_console(svd, choices.console_peripheral, secure=secure)
        if uart is not None:
            kind = uart_kind(uart)
            d.console = replace(d.console, kind=ConsoleKind(kind) if kind else ConsoleKind.CUSTOM,
                                base=uart.base, base_ns=uart.base_ns)  # fmt: skip
            d.console_peripheral = "/".join(uart.names)
            d.origin.append(
                f"console: {src} peripheral {d.console_peripheral}"
                + (f" ({kind} registers)" if kind else " (a UART the kit has no driver for)")
            )
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
        npu = d.npu
        d.npu = replace(
            npu,
            kinds=(kind,),
            # MACs the SVD gave for this same kind stay unless the user names others
            macs={kind: tuple(macs)} if macs else {k: v for k, v in npu.macs.items() if k == kind},
            registers={k: v for k, v in npu.registers.items() if k[0] == kind},
            axi_limits={k: v for k, v in npu.axi_limits.items() if k.partition(":")[0] == kind},
        )
        d.given(Source.USER, "npu.kinds", *(["npu.macs"] if macs else []))
        fvp = d.passthrough.get("fvp")
        if fvp is not None:  # a copied board's FVP models: only the one for this kind stays
            models = {k: v for k, v in dict(fvp.get("models", {})).items() if k == kind}
            if models:
                d.passthrough["fvp"] = {**fvp, "models": models}
            else:
                del d.passthrough["fvp"]
    if choices.npu_base is not None:
        d.npu = replace(d.npu, base=choices.npu_base, base_ns=None)
        d.given(Source.USER, "npu.base")
    if choices.npu_irq is not None:
        d.npu = replace(d.npu, irq=choices.npu_irq)
        d.given(Source.USER, "npu.irq")
    if choices.console is not None:
        if choices.console not in CONSOLE_KINDS:
            raise KitError(
                f"--console {choices.console!r}: not a console kind",
                hint=f"kinds: {', '.join(CONSOLE_KINDS)}",
            )
        kind = ConsoleKind(choices.console)
        d.console = replace(d.console, kind=kind, base_ns=None)
        d.console_peripheral = ""
        d.given(Source.USER, "console.kind")
        if kind.mmio and choices.console_base is None:
            raise KitError(
                f"--console {choices.console} needs --console-base (the UART's register base)",
                hint="or give --svd with the UART and --console-peripheral NAME",
            )
        if not _addressed(kind):
            if choices.console_base is not None:
                raise KitError(f"--console-base: a {choices.console} console has no address")
            d.console = replace(d.console, base=0)
            d.sources.pop("console.base", None)
    if choices.console_base is not None:
        if choices.console is None and not _addressed(d.console.kind):
            raise KitError(
                "--console-base needs --console KIND (cmsdk-apb, pl011 or custom)",
                hint="the kit cannot tell the UART's kind from its address",
            )
        d.console = replace(d.console, base=choices.console_base)
        d.given(Source.USER, "console.base")


def set_qemu_machine(d: Draft, machine: str) -> None:
    """The user's QEMU machine (--qemu-machine): its own -cpu default, no stand-in."""
    d.qemu = Qemu(machine=machine, cpu="")
    d.given(Source.USER, "qemu.machine")


def set_npu_macs(d: Draft, kind: str, macs: list[int]) -> None:
    """The user's MAC configurations of `kind` (import-pack --macs): the only ones."""
    d.npu = replace(d.npu, macs={kind: tuple(macs)})
    d.given(Source.USER, "npu.macs")


def finish(d: Draft) -> None:
    """Fill what is still unknown with its TODO, as the module docstring decides."""
    if not d.npu.kinds:
        d.npu = replace(d.npu, kinds=("ethos-u55",))
        d.defaulted(
            "npu.kinds", "the Ethos-U this SoC carries (--npu); gen refuses a pte for another"
        )
    for what in ("npu.base", "npu.irq"):
        if what not in d.sources:
            d.unknown(what)
    macs, registers = dict(d.npu.macs), dict(d.npu.registers)
    for kind in d.npu.kinds:
        if not macs.get(kind):
            macs[kind] = tuple(NPU_MACS[kind])
            d.defaulted(
                f"npu.macs.{kind}",
                ("every configuration: the pte decides; keep the SoC's only (--npu KIND-MACS)"),
            )
        if not any(k == kind for k, _ in registers):
            registers |= {
                (kind, mode.value): ModeRegisters(*regs)
                for mode, regs in DEFAULT_REGISTERS.items()
                if runs_mode(kind, mode)
            }
            d.defaulted(
                f"npu.registers.{kind}",
                "Arm's driver defaults: check them against the SoC's AXI wiring (the selftest "
                "app proves them)",
            )
    d.npu = replace(d.npu, macs=macs, registers=registers)
    if "console.kind" not in d.sources:
        d.defaulted(
            "console.kind",
            'nothing is printed: cmsdk-apb or pl011 with base, "semihosting" under a debugger '
            'or QEMU, or "custom" with your own C',
        )
    if _addressed(d.console.kind) and d.sources.get("console.clock_hz") is None:
        # neither a pack nor an SVD gives a UART's reference clock (Dclock is the core's)
        d.defaulted("console.clock_hz", "the UART's input clock (a wrong one garbles the text)")
    port = d.port
    if d.console.kind is ConsoleKind.CUSTOM and "console" not in port.hooks:
        stub = "console.c"
        d.port = replace(
            port,
            sources=(*port.sources, stub),
            hooks=(*port.hooks, "console"),
            include_dirs=port.include_dirs + (() if "." in port.include_dirs else (".",)),
        )
        d.port_files[stub] = render_console_stub(d).encode("utf-8")
    if "cpu.irqs" not in d.sources and d.cpu.core in CORES:
        d.cpu = replace(d.cpu, irqs=CORES[d.cpu.core].max_irqs)
        d.defaulted(
            "cpu.irqs",
            "the NVIC's size is unknown: the most the core can have (only "
            "costs vector table bytes)",
        )
    if d.known("npu.irq") and d.npu.irq >= d.cpu.irqs:
        d.cpu = replace(d.cpu, irqs=d.npu.irq + 1)
