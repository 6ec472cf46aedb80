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
        help="show one board (name, alias, board folder or board.toml path); "
        "a board folder is validated and any error printed",
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
    """One board: CPU, NPU, console, boot, QEMU, its own code and the memory map."""
    from rich.table import Table

    from ethosu_kit.report import add_text_row, printable, size_text

    npu = board.npu
    cpu = board.cpu
    lines = [
        f"{board.name} ({', '.join(board.aliases) or 'no aliases'}): {board.description}",
        f"  file: {board.source}",
        f"  CPU:  {cpu.core} {cpu.arch}, FPU {cpu.fpu}, MVE {cpu.mve or 'no'}, "
        f"{'TrustZone, ' if cpu.trustzone else ''}"
        f"caches {'/'.join(c for c, on in (('I', cpu.icache), ('D', cpu.dcache)) if on) or 'none'}"
        f", {cpu.irqs} IRQs, timer {cpu.timer}, {cpu.clock_hz / 1e6:g} MHz",
        f"  NPU:  {_npus(board)} at 0x{npu.base:08x}, IRQ {npu.irq}, "
        f"{'secure' if npu.secure else 'non-secure'}, "
        f"{'privileged' if npu.privileged else 'unprivileged'}",
        f"  console: {board.console.kind}"
        + (f" at 0x{board.console.base:08x}" if board.console.mmio else ""),
        "  boot: "
        + (
            f"vectors at 0x{board.boot.vector_address:08x} ({board.boot.vector_region})"
            if board.boot
            else "vectors at the start of the code region"
        ),
        "  QEMU: "
        + (
            f"{board.qemu.machine} -cpu {board.qemu.cpu}"
            + (f" (stand-in: {board.qemu.stand_in})" if board.qemu.stand_in else "")
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
