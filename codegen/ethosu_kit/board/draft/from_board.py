"""`new-board --from`: a draft that starts as a copy of an existing board.

Every fact copied is a checked default (`_mark_copied`): true of the other board, not
known of this SoC. Tables new-board does not draft itself pass through as they are.
"""

from __future__ import annotations

import tomllib
from dataclasses import fields
from pathlib import Path
from typing import Any

from ethosu_kit.board.cores import cpu_flags
from ethosu_kit.board.draft.facts import Draft, RegionFacts, Source
from ethosu_kit.board.model import Board, BootFrom, Cpu
from ethosu_kit.board.schema import SCHEMA
from ethosu_kit.board.todo import TODO
from ethosu_kit.board.toolchain import TOOLCHAINS
from ethosu_kit.core.errors import BoardError
from ethosu_kit.core.files import MAX_BOARD, MAX_PORT_FILE, read_bytes, read_text

MAX_PORT_FILES = 1000


def _port_files(board: Board) -> dict[str, bytes]:
    """The board's own files, relative to its folder, refusing anything outside it."""
    root = Path(board.port.dir).resolve()
    files: dict[str, bytes] = {}

    def add(rel: str, path: Path) -> None:
        real = path.resolve()
        if not real.is_relative_to(root):
            raise BoardError(f"{board.source}: [port] {rel!r} is outside the board's folder")
        if len(files) >= MAX_PORT_FILES:
            raise BoardError(
                f"{board.source}: [port] names more than {MAX_PORT_FILES} files to copy"
            )
        # each file bounded (a 1 GiB "header" is refused by its size, unread)
        files[real.relative_to(root).as_posix()] = read_bytes(real, MAX_PORT_FILE, BoardError)

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


# every fact board.toml.j2 writes, by schema key ("cpu.core"; "region" for all regions)
_DRAFTED_KEYS = (
    "name",
    "aliases",
    "description",
    *(f"{t}.{k.name}" for t in ("cpu", "npu", "console", "boot", "qemu", "port")
      for k in SCHEMA[t] if k.drafted),
    "region",
    "glue",
)  # fmt: skip


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
        boot_from=board.boot.image_from if board.boot else BootFrom.LOADER,
        qemu_machine=board.qemu.machine if board.qemu else None,
        qemu_cpu=board.qemu.cpu if board.qemu else None,
        qemu_stand_in=board.qemu.stand_in if board.qemu else "",
        port_sources=list(board.port.sources),
        port_include_dirs=list(board.port.include_dirs),
        port_cmake=board.port.cmake,
        port_hooks=list(board.port.hooks),
        port_files=_port_files(board),
        regions=[RegionFacts(region=r) for r in board.regions],
        glue=dict(board.glue),
        passthrough=_passthrough(board),
    )
    d.given(Source.BOARD, *_DRAFTED_KEYS)
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
