"""`ethosu-kit boards [NAME|PATH]`: list the built-in boards, or show and validate one."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ethosu_kit.board import Board

HELP = "list the built-in boards (and check a custom board file)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "board",
        nargs="?",
        help="show one board's memory map (name, alias or board.toml path); "
        "a board file is validated and any error printed",
    )


def _npus(board: Board) -> str:
    return ", ".join(
        f"{kind} ({'/'.join(str(m) for m in board.npu.macs.get(kind, ()))} MACs)"
        for kind in board.npu.kinds
    )


def _list(boards: list[Board]) -> str:
    from rich.table import Table

    from ethosu_kit.report import add_text_row, size_text

    table = Table(title="built-in boards", title_justify="left")
    for column in ("name", "aliases", "CPU", "NPUs", "regions"):
        table.add_column(column)
    for b in boards:
        regions = ", ".join(f"{r.name} {size_text(r.size)}" for r in b.regions)
        add_text_row(table, b.name, ", ".join(b.aliases), b.cpu.core, _npus(b), regions)
    return _render(table)


def _render(*renderables: object) -> str:
    import io

    from rich.console import Console

    out = io.StringIO()
    console = Console(file=out, width=130, no_color=True, highlight=False)
    for r in renderables:
        console.print(r)
    return out.getvalue()


def describe(board: Board) -> str:
    """One board: CPU, NPU, UART and the memory map."""
    from rich.table import Table

    from ethosu_kit.report import add_text_row, printable, size_text

    npu = board.npu
    lines = [
        f"{board.name} ({', '.join(board.aliases) or 'no aliases'}): {board.description}",
        f"  file: {board.source}",
        f"  CPU:  {board.cpu.core} {board.cpu.arch}, FPU {'yes' if board.cpu.fpu else 'no'}, "
        f"MVE {board.cpu.mve or 'no'}, {board.cpu.clock_hz / 1e6:g} MHz",
        f"  NPU:  {_npus(board)} at 0x{npu.base:08x}, IRQ {npu.irq}, "
        f"{'secure' if npu.secure else 'non-secure'}, "
        f"{'privileged' if npu.privileged else 'unprivileged'}",
        f"  UART: {board.uart.kind} at 0x{board.uart.base:08x}",
        f"  QEMU: {board.qemu_machine or 'no machine (build and check only)'}",
    ]
    table = Table(title="memory map", title_justify="left")
    for column in ("region", "kind", "base", "end", "size", "attributes", "description"):
        table.add_column(column)
    for r in sorted(board.regions, key=lambda r: r.base):
        attrs = [
            "on-chip" if r.on_chip else "external",
            "volatile" if r.volatile else "non-volatile",
            *(a for a in ("cpu", "npu") if getattr(r, a)),
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


def run(args: argparse.Namespace) -> int:
    from ethosu_kit.board_loader import builtin_boards, load_board

    if args.board:
        print(describe(load_board(args.board)), end="")
    else:
        print(_list(builtin_boards()), end="")
    return 0
