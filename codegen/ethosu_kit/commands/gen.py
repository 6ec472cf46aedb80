"""`ethosu-kit gen` / `gen-firmware`: from a .pte to a placed, fitted firmware project.

Runs the stages in data-flow order: read the pte, load the board, plan (the fit
check), render every file, and only then write the folder. Any failure before the
write leaves nothing on disk.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ethosu_kit.memory_plan import MemoryPlan
    from ethosu_kit.model_info import ModelInfo
    from ethosu_kit.output import WriteResult

HELP = "generate a firmware project from a .pte (same as gen-firmware)"


def size_arg(text: str) -> int:
    """A size as a board file writes it (`393216`, `0x60000`, `384KiB`, `2 MiB`) -> bytes."""
    from ethosu_kit.board_loader import parse_size

    try:
        return parse_size(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"cannot read {text!r} as a size (use 393216, 0x60000, 384KiB or 2MiB)"
        ) from None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--pte", required=True, type=Path, help="the lowered ExecuTorch program")
    parser.add_argument(
        "-o", "--output", required=True, type=Path, help="folder of the generated project"
    )
    parser.add_argument(
        "--board",
        default="corstone-300",
        help="built-in board name or alias (corstone-300/cs300, corstone-320/cs320), "
        "a board folder or its board.toml, relative to the current folder "
        "(default: corstone-300)",
    )
    parser.add_argument(
        "--mode",
        help="Sram_Only, Shared_Sram or Dedicated_Sram (default: the mode the pte was "
        "compiled for)",
    )
    parser.add_argument(
        "--fast-scratch",
        type=size_arg,
        metavar="SIZE",
        help="Dedicated_Sram fast-scratch size (default: from the pte's Vela config)",
    )
    parser.add_argument("--stack", type=size_arg, metavar="SIZE", help="stack size")
    parser.add_argument("--heap", type=size_arg, metavar="SIZE", help="heap size")
    parser.add_argument(
        "--app",
        default="executor_runner",
        choices=["executor_runner", "bringup"],
        help="the app the pools are sized for and CMake builds by default",
    )
    parser.add_argument(
        "--allow-cpu-only",
        action="store_true",
        help="accept a program with no Ethos-U delegate (everything runs on the CPU)",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="overwrite files edited since generation / generate into a non-kit folder",
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="print only the output path")


def run(args: argparse.Namespace) -> int:
    from ethosu_kit.errors import KitError
    from ethosu_kit.pte.reader import model_from_bytes, read_pte_bytes

    pte_bytes = read_pte_bytes(args.pte)  # once: the plan and the copy are of the same bytes
    from ethosu_kit.board_loader import load_board, require
    from ethosu_kit.memory_plan import PlanOptions
    from ethosu_kit.model_info import MemoryMode
    from ethosu_kit.planner import plan_memory

    model = model_from_bytes(pte_bytes, str(args.pte))
    board = load_board(args.board)
    require(board, ("boot.vector_region",), "every image (the vector table's place)")
    mode = None  # the planner takes the pte's own mode and refuses a mismatch
    if args.mode:
        try:
            mode = MemoryMode.parse(args.mode)
        except ValueError:
            raise KitError(
                f"--mode {args.mode!r} is not a memory mode",
                hint="use Sram_Only, Shared_Sram or Dedicated_Sram",
            ) from None
    defaults = PlanOptions()
    options = PlanOptions(
        fast_scratch=args.fast_scratch,
        stack=args.stack if args.stack is not None else defaults.stack,
        heap=args.heap if args.heap is not None else defaults.heap,
        app=args.app,
        allow_cpu_only=args.allow_cpu_only,
    )
    plan = plan_memory(model, board, mode, options)

    from ethosu_kit.generate import render_project

    files = render_project(model, plan, pte_bytes)

    from ethosu_kit.output import write_project

    result = write_project(files, args.output, force=args.force)
    if not args.quiet:
        _print_summary(model, plan, result)
    print(result.out_dir)
    return 0


def _print_summary(model: ModelInfo, plan: MemoryPlan, result: WriteResult) -> None:
    from rich.console import Console

    from ethosu_kit.report import report_text

    console = Console(highlight=False, soft_wrap=True)  # the report's lines are its own
    spec = model.compile_spec
    target = spec.accelerator if spec else "CPU only"
    console.print(
        f"[bold]{Path(model.path).name}[/]: {model.file_bytes} bytes, {target}, "
        f"{len(model.ethosu_delegates)} Ethos-U delegate(s), "
        f"{len(model.cpu_operators)} CPU operator(s)"
    )
    console.print(f"board [bold]{plan.board.name}[/], mode [bold]{plan.mode.value}[/]")
    console.print(report_text(plan), markup=False)
    console.print(
        f"{len(result.written)} file(s) written, {len(result.unchanged)} unchanged"
        + (f", {len(result.removed)} removed" if result.removed else "")
        + (f", {len(result.kept)} of yours kept" if result.kept else "")
    )
