"""`new-board --from`: a draft that starts as a copy of an existing board.

Every fact copied is a checked default (`_mark_copied`): true of the other board, not
known of this SoC. Tables new-board does not draft itself pass through as they are.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from ethosu_kit.board.cores import cpu_flags
from ethosu_kit.board.draft.facts import Draft, RegionFacts, Source
from ethosu_kit.board.model import Board, Boot
from ethosu_kit.board.schema import SCHEMA
from ethosu_kit.board.todo import TODO
from ethosu_kit.board.toolchain import TOOLCHAINS
from ethosu_kit.core.errors import BoardError
from ethosu_kit.core.files import (
    MAX_BOARD,
    MAX_PORT_FILE,
    TomlProblem,
    parse_toml,
    read_bytes,
    read_text,
)

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
    try:  # the file the loader read; parsed again as bounded in case it changed since
        data = parse_toml(read_text(Path(board.source), MAX_BOARD, BoardError))
    except TomlProblem as exc:
        raise BoardError(f"{board.source}: {exc}") from None
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
    cpu = board.cpu
    # [cpu.flags]: only what the board replaced of the flags derived from its core
    flags = {
        tc: cpu.flags[tc]
        for tc in TOOLCHAINS
        if tc in cpu.flags and cpu.flags[tc] != cpu_flags(cpu, tc)
    }
    boot = board.boot
    if "boot.vector_region" in board.todo:  # the loader drops a TODO [boot]: it stays TODO
        boot = Boot(vector_region=TODO, vector_address=0)
    d = Draft(
        name=name,
        cpu=replace(cpu, flags=flags),
        npu=board.npu,
        console=board.console,
        boot=boot,
        # its layout passes through as the file has it (_passthrough)
        qemu=replace(board.qemu, layout=None) if board.qemu else None,
        port=replace(board.port, dir=""),
        regions=[RegionFacts(region=r) for r in board.regions],
        origin=[f"from board {board.name} ({board.source})"],
        description=f"{board.description} (drafted from {board.name})".strip(),
        port_files=_port_files(board),
        glue=dict(board.glue),
        passthrough=_passthrough(board),
    )
    d.given(Source.BOARD, *_DRAFTED_KEYS)
    for key in board.todo:
        d.unknown(key)
    if not board.console.mmio:  # the loader's placeholder, not an address
        d.sources.pop("console.base")
    _mark_copied(d, board.name)
    return d


def _mark_copied(d: Draft, source: str) -> None:
    """Every fact copied from another board is a checked default: true of `source`, not
    known of this SoC. The porter confirms each one (`boards DIR` lists them); options
    and an SVD that give a fact take its mark off (apply_choices, apply_svd)."""
    was = f"copied from {source}:"
    d.todo["cpu.core"] = f"{was} this SoC's core, and fpu, mve, dsp, caches, trustzone, irqs, " \
        "clock_hz below"  # fmt: skip
    if d.known("npu.base"):
        d.todo["npu.base"] = f"{was} this SoC's NPU register base (base_ns: its non-secure alias)"
    if d.known("npu.irq"):
        d.todo["npu.irq"] = f"{was} this SoC's NPU interrupt number (IRQn)"
    for kind in d.npu_registers():
        d.todo[f"npu.registers.{kind}"] = (
            f"{was} QCONFIG/REGIONCFG for that SoC's AXI wiring; check them against this one's "
            "(the selftest app proves them)"
        )
    d.todo["console.kind"] = f"{was} this SoC's console: UART kind, base, clock_hz, baud"
    if d.boot is not None and d.known("boot.vector_region"):
        d.todo["boot.vector_region"] = f"{was} where this SoC's core fetches its vector table " \
            "at reset (VTOR)"  # fmt: skip
    if d.qemu is not None:
        d.todo["qemu.machine"] = f"{was} `ethosu-kit run` runs this board's images on this " \
            "QEMU machine: yours, or delete [qemu]"  # fmt: skip
    for table in d.passthrough:
        if table.split(".")[:2] == ["qemu", "layout"]:
            d.todo[table] = f"{was} how that board's map is laid onto its QEMU stand-in " \
                "machine: yours, or delete it"  # fmt: skip
    if "fvp" in d.passthrough:
        d.todo["fvp"] = f"{was} `ethosu-kit run` uses this FVP when it is installed: delete " \
            "this table unless your board is that FVP"  # fmt: skip
    if d.port.sources:
        d.todo["port"] = f"{was} that board's HAL code: does it fit this SoC?"
    for r in d.regions:
        r.copied = f"{was} is this memory on this SoC, at this base and size?"
