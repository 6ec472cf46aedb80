"""`ethosu-kit boards [NAME|PATH]`: list the built-in boards, or show and validate one."""

from __future__ import annotations

import argparse
import io
import re
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table

from ethosu_kit.board.hooks import HOOKS, hal_default
from ethosu_kit.board.loader import builtin_boards, load_board
from ethosu_kit.core.files import MAX_BOARD, read_text
from ethosu_kit.core.sizes import size_text
from ethosu_kit.core.text import add_text_row, printable

if TYPE_CHECKING:
    from ethosu_kit.board.model import Board


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "board",
        nargs="?",
        help="show one board (name, alias, folder or board.toml): its memory map, the "
        "facts still TODO, its HAL hooks and what it is ready to build; a board file is "
        "validated and any error printed",
    )


def _npus(board: Board) -> str:
    return ", ".join(
        f"{kind} ({'/'.join(str(m) for m in board.npu.macs.get(kind, ()))} MACs)"
        for kind in board.npu.kinds
    )


def _list(boards: list[Board]) -> str:
    table = Table(title="built-in boards", title_justify="left")
    for column in ("name", "aliases", "CPU", "NPUs", "regions"):
        table.add_column(column)
    for b in boards:
        regions = ", ".join(f"{r.name} {size_text(r.size)}" for r in b.regions)
        add_text_row(table, b.name, ", ".join(b.aliases), b.cpu.core, _npus(b), regions)
    return _render(table)


def _render(*renderables: object) -> str:
    out = io.StringIO()
    console = Console(file=out, width=130, no_color=True, highlight=False)
    for r in renderables:
        console.print(r)
    return out.getvalue()


def describe(board: Board) -> str:
    """One board: CPU, NPU, console, boot, QEMU, its own code and the memory map."""
    npu = board.npu
    cpu = board.cpu
    lines = [
        f"{board.name} ({', '.join(board.aliases) or 'no aliases'}): {board.description}",
        f"  file: {board.source}",
        f"  CPU:  {cpu.core} {cpu.arch}, FPU {cpu.fpu}, MVE {cpu.mve or 'no'}, "
        f"{'TrustZone, ' if cpu.trustzone else ''}"
        f"caches {'/'.join(c for c, on in (('I', cpu.icache), ('D', cpu.dcache)) if on) or 'none'}"
        f", {cpu.irqs} IRQs, timer {cpu.timer}, {cpu.clock_hz / 1e6:g} MHz",
        f"  NPU:  {_npus(board)} at "
        f"{'TODO' if 'npu.base' in board.todo else f'0x{npu.base:08x}'}, "
        f"IRQ {'TODO' if 'npu.irq' in board.todo else npu.irq}, "
        f"{'secure' if npu.secure else 'non-secure'}, "
        f"{'privileged' if npu.privileged else 'unprivileged'}",
        f"  console: {board.console.kind}"
        + (f" at 0x{board.console.base:08x}" if board.console.mmio else ""),
        "  boot: "
        + (
            f"vectors at 0x{board.boot.vector_address:08x} ({board.boot.vector_region}), "
            + (
                "boots cold from non-volatile memory (RAM is not loaded)"
                if board.cold_boot
                else "image loaded by a debugger or emulator"
            )
            if board.boot
            else "vectors at the start of the code region"
        ),
        "  QEMU: "
        + (
            f"{board.qemu.machine} -cpu {board.qemu.cpu}"
            + (f" (stand-in: {board.qemu.stand_in})" if board.qemu.stand_in else "")
            + (" [images: gen --qemu-stand-in]" if board.qemu.layout else "")
            if board.qemu
            else "no machine (build and check only)"
        ),
        f"  port: {board.port.dir}: {len(board.port.sources)} sources, hooks "
        f"{', '.join(board.port.hooks) or 'none (kit defaults)'}",
    ]
    table = Table(title="memory map", title_justify="left")
    for column in ("region", "kind", "base", "end", "size", "attributes", "description"):
        table.add_column(column)
    for r in sorted(board.regions, key=lambda r: r.base):
        attrs = [
            "on-chip" if r.on_chip else "external",
            "volatile" if r.volatile else "non-volatile",
            *(["cpu"] if r.cpu else []),
            *([f"npu:{r.port}"] if r.npu else []),
            "r" + ("w" if r.writable else "-") + ("x" if r.executable else "-"),
            *(["loadable"] if r.loadable else []),
        ]
        add_text_row(
            table,
            r.name,
            r.kind.value,
            f"0x{r.base:08x}",
            f"0x{r.end - 1:08x}",
            size_text(r.size),
            " ".join(attrs),
            r.description,
        )
    modes = Table(title="NPU registers per memory mode", title_justify="left")
    for column in ("NPU", "mode", "QCONFIG", "REGIONCFG_0..7"):
        modes.add_column(column)
    for (kind, mode), regs in npu.registers.items():
        add_text_row(modes, kind, mode, str(regs.qconfig), " ".join(str(v) for v in regs.regioncfg))
    return "\n".join(printable(line) for line in lines) + "\n" + _render(table, modes)


# What each blocking TODO stops (the keys board_loader lets be "TODO").
BLOCKS = {
    "npu.base": "builds with --npu driver",
    "npu.irq": "builds with --npu driver",
    "boot.vector_region": "every build",
}
_HEADER_RE = re.compile(r"^\s*\[\[?\s*([A-Za-z0-9_.\"-]+)\s*\]\]?")
_NAME_LINE_RE = re.compile(r'^\s*name\s*=\s*"([A-Za-z0-9_]+)"')
_KEY_RE = re.compile(r"^\s*([A-Za-z0-9_-]+)\s*=.*#\s*TODO:\s*(.*)$")


def checked_defaults(text: str) -> list[tuple[str, int, str]]:
    """The `# TODO:` comments of a board.toml: (key, line, note), safe defaults to check.

    A `# TODO:` at the end of a `key = value` line marks that key; one on a line of its
    own marks the table that follows."""
    found: list[tuple[str, int, str]] = []
    table = ""
    regions = 0
    pending: list[tuple[int, str]] = []
    for lineno, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        header = _HEADER_RE.match(line)
        if header:
            table = header.group(1)
            if stripped.startswith("[["):
                table = f"{table}[{regions}]"
                regions += 1
            found += [(table, n, note) for n, note in pending]
            pending = []
            continue
        if stripped.startswith("# TODO:"):
            pending.append((lineno, stripped.removeprefix("# TODO:").strip()))
            continue
        name = _NAME_LINE_RE.match(line)
        if name and table.startswith("region["):
            table = f"{table.split(' ')[0]} {name.group(1)!r}"
        m = _KEY_RE.match(line)
        if m and not stripped.startswith("#"):
            key = f"{table}.{m.group(1)}" if table else m.group(1)
            found.append((key, lineno, m.group(2).strip()))
    return found


def _source_todos(board: Board) -> list[str]:
    """TODO lines in the board's own C (stubs new-board wrote)."""
    out = []
    for rel in board.port.sources:
        try:
            lines = Path(board.port.path(rel)).read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            continue
        for n, line in enumerate(lines, 1):
            if "TODO:" in line:
                note = line[line.index("TODO:") + 5 :].removesuffix("*/").strip()
                out.append(f"{rel}:{n}: {note}")
    return out


def hooks_table(board: Board) -> list[tuple[str, str, str]]:
    """(hook, who provides it, what with): the board's own C, the kit's default, or missing."""
    rows = []
    for hook in HOOKS:
        if hook.name in board.port.hooks:
            rows.append((hook.name, "board", ", ".join(board.port.sources)))
            continue
        default = hal_default(board, hook.name)
        if default.required_because:
            rows.append((hook.name, "MISSING", f"{default.required_because} needs the board's own"))
        else:
            rows.append((hook.name, "kit", ", ".join(Path(s).name for s in default.sources)))
    return rows


def readiness(board: Board) -> list[tuple[str, bool, str]]:
    """(what, ready, why not) for the builds a porter runs in order."""
    blocking = list(board.todo)
    missing = [h for h, who, _ in hooks_table(board) if who == "MISSING"]
    every = [k for k in blocking if BLOCKS.get(k) == "every build"]
    base_problem = ", ".join([*(f"{k} is TODO" for k in every),
                              *(f"hook {h} missing" for h in missing)])  # fmt: skip
    npu_todo = [k for k in blocking if BLOCKS.get(k) == "builds with --npu driver"]
    driver_problem = ", ".join(
        x for x in (base_problem, ", ".join(f"{k} is TODO" for k in npu_todo)) if x
    )
    return [
        ("build --app bringup", not base_problem, base_problem),
        ("build --app selftest --npu virtual", not base_problem, base_problem),
        ("build --npu driver (selftest, executor_runner)", not driver_problem, driver_problem),
        ("ethosu-kit run (QEMU)", board.qemu is not None, "no [qemu] machine" * (not board.qemu)),
        # the silicon's own path, which a board with no QEMU machine is left with (a port
        # read from a vendor pack): say it is there rather than only "run: no"
        ("ethosu-kit run --probe KIND (the board)", not base_problem, base_problem),
    ]


def todo_summary(board: Board, text: str) -> str:
    """The TODO part of `boards DIR`: blocking facts, defaults to check, TODOs in the C."""
    lines = []
    if board.todo:
        lines.append(f"TODO, blocking ({len(board.todo)}): the kit refuses what needs them")
        lines += [f"  {k:<24} blocks {BLOCKS.get(k, 'builds that use it')}" for k in board.todo]
    else:
        lines.append("TODO, blocking: none")
    checks = checked_defaults(text)
    if checks:
        lines.append(f"TODO, defaults to check ({len(checks)}): safe as written; delete the "
                     "'# TODO:' once checked")  # fmt: skip
        width = max(24, *(len(key) for key, _, _ in checks))
        lines += [f"  {key:<{width}} line {n}: {note}" for key, n, note in checks]
    source = _source_todos(board)
    if source:
        lines.append(f"TODO in the board's C ({len(source)}):")
        lines += [f"  {s}" for s in source]
    return "\n".join(lines)


def report(board: Board) -> str:
    """`boards DIR`: the board, what is still TODO, its HAL hooks and what it can build."""
    text = read_text(Path(board.source), MAX_BOARD) if Path(board.source).is_file() else ""
    out = [describe(board).rstrip("\n"), "", todo_summary(board, text), "", "HAL hooks:"]
    out += [f"  {hook:<11} {who:<8} {what}" for hook, who, what in hooks_table(board)]
    out.append("ready:")
    for what, ok, why in readiness(board):
        out.append(f"  {what:<48} {'yes' if ok else 'no: ' + why}")
    return "\n".join(out) + "\n"


def run(args: argparse.Namespace) -> int:
    if args.board:
        print(report(load_board(args.board)), end="")
    else:
        print(_list(builtin_boards()), end="")
    return 0
