"""`ethosu-kit gen` / `gen-firmware`: from a .pte to a placed, fitted firmware project.

Runs the stages in data-flow order: read the pte, load the board, plan (the fit
check), render every file, and only then write the folder. Any failure before the
write leaves nothing on disk.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape

from ethosu_kit.board.loader import load_board, require, stand_in_board
from ethosu_kit.core.errors import KitError
from ethosu_kit.core.sizes import align_up, parse_size
from ethosu_kit.core.text import printable
from ethosu_kit.core.writer import before_writing, restored_on_failure, since, write_project
from ethosu_kit.firmware import measure as usage
from ethosu_kit.firmware.fingerprint import firmware_fingerprint
from ethosu_kit.firmware.measure import POOL_ROUND, ROUND
from ethosu_kit.firmware.pipeline import plan_and_render
from ethosu_kit.firmware.qemu import why_not_in_qemu
from ethosu_kit.inputs.compiled import load_input_data
from ethosu_kit.npu.facts import MemoryMode
from ethosu_kit.plan.planner import default_stack_heap
from ethosu_kit.plan.report import report_text
from ethosu_kit.plan.types import PlanOptions
from ethosu_kit.pte.reader import model_from_bytes, read_pte_bytes
from ethosu_kit.vnpu.fast_scratch import check_fast_scratch
from ethosu_kit.vnpu.workspace import vnpu_workspace_need

if TYPE_CHECKING:
    from ethosu_kit.board.model import Board
    from ethosu_kit.core.writer import WriteResult
    from ethosu_kit.plan.types import MemoryPlan, PlanOptions
    from ethosu_kit.pte.model import ModelInfo


def size_or_auto(text: str) -> int | str:
    """A size, or `auto` (measured: ethosu_kit.firmware.measure)."""
    return "auto" if text == "auto" else size_arg(text)


# The smallest stack gen takes. Below it an image cannot even report that its stack is
# too small: the start-up's frames (reset handler, C library init, main, the app's entry)
# and, on top of them, one exception frame with the FP state (26 words + 4 B of alignment,
# 108 B) and the fault handler's report (the kit's formatter alone is 112 B with GCC 12)
# must fit for a stack overflow to be named (exit 16, `E: stack overflow`). Measured on the
# self-test (Corstone-300, QEMU): with 1 KiB it prints its first lines and names the
# overflow; with 256 B QEMU dies without a word. No kit app runs in less: the bring-up's
# own frames need more, the self-test's and the runner's several KiB (docs/memory.md).
MIN_STACK = 1024
# The smallest heap: 8, one alignment unit, which is what `--heap auto` gives a program
# that allocates nothing. Not 0: a zero-length heap buffer has no address of its own to
# check (the bring-up app's placement check fails on it), and the runner's delegate
# allocates with `new`.
MIN_HEAP = 8


def _sized(option: str, what: str, align: int, minimum: int) -> Callable[[str], int | str]:
    """The argparse type of `--<option>`: a size that is a multiple of `align` (the
    buffer's alignment: the planner would round it, the C header would not) and at least
    `minimum`, or `auto`. A wrong one is refused naming the number and the valid ones."""

    def parse(text: str) -> int | str:
        size = size_or_auto(text)
        if isinstance(size, str):
            return size
        if size < minimum:
            raise argparse.ArgumentTypeError(
                f"{size} bytes is below the smallest {what} ({minimum} bytes): use {minimum} "
                f"or more, or auto"
            )
        if size % align:
            down, up = size // align * align, align_up(size, align)
            nearest = f"{up}" if down < minimum else f"{down} or {up}"
            raise argparse.ArgumentTypeError(
                f"{size} bytes is not a multiple of {align} (the {what}'s alignment): use {nearest}"
            )
        return size

    parse.__name__ = option  # argparse names the type in some of its messages
    return parse


def stack_size(text: str) -> int | str:
    return _sized("stack", "stack", ROUND, MIN_STACK)(text)


def heap_size(text: str) -> int | str:
    return _sized("heap", "heap", ROUND, MIN_HEAP)(text)


def method_pool_size(text: str) -> int | str:
    # one alignment unit at least: the planner's MIN_POOL, no zero-length array in the C
    return _sized("method-pool", "method pool", POOL_ROUND, POOL_ROUND)(text)


def size_arg(text: str) -> int:
    """A size as a board file writes it (`393216`, `0x60000`, `384KiB`, `2 MiB`) -> bytes."""
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
        default="default",
        help="built-in board name or alias (`ethosu-kit boards` lists them), "
        "a board folder or its board.toml, relative to the current folder "
        "(default: the built-in board whose aliases include 'default')",
    )
    parser.add_argument(
        "--qemu-stand-in",
        action="store_true",
        help="lay the image out for the board's QEMU stand-in machine ([qemu.layout] of its "
        "board.toml) so `ethosu-kit run` can run it there",
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
    parser.add_argument(
        "--stack",
        type=stack_size,
        metavar="SIZE|auto",
        help="stack size: a multiple of 8, at least 1KiB (default 16KiB, selftest 8KiB); "
        "auto: the high-water mark of a QEMU run of the app + 256 B for an interrupt "
        "(docs/memory.md)",
    )
    parser.add_argument(
        "--heap",
        type=heap_size,
        metavar="SIZE|auto",
        help="heap size: a multiple of 8, at least 8 (default 32KiB, selftest 4KiB); auto: "
        "measured in a QEMU run of the app",
    )
    parser.add_argument(
        "--method-pool",
        type=method_pool_size,
        metavar="SIZE|auto",
        help="executor_runner's method allocator pool: a multiple of 16 (default: estimated "
        "from the program); auto: measured in a QEMU run, as --stack/--heap auto also do",
    )
    parser.add_argument(
        "--toolchain",
        default="gcc",
        choices=["gcc", "clang"],
        help="the compiler of the build that --stack/--heap/--method-pool auto measure "
        "(default gcc): their frames differ, size for the one you build with",
    )
    parser.add_argument(
        "--app",
        default="executor_runner",
        choices=["executor_runner", "bringup", "selftest"],
        help="the app the plan holds buffers for and CMake builds by default (selftest: "
        "the NPU self-test's vectors, none of the runner's pools; docs/apps.md)",
    )
    parser.add_argument(
        "--vectors",
        type=Path,
        metavar="FILE.npz",
        help="selftest: inputs and expected outputs (delegate<K>_input<i>, "
        "delegate<K>_output<o>, as `ethosu-kit simulate -o` writes); default: seeded "
        "random inputs, outputs from the virtual NPU on the host",
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="selftest: seed of the random inputs (0)"
    )
    parser.add_argument(
        "--inputs",
        nargs="+",
        metavar="FILE",
        help="compile the method's inputs into the image: one .npy per input or one .npz, "
        "exactly the program's dtypes and shapes (placed by the plan, never in a TCM)",
    )
    parser.add_argument(
        "--npu",
        default="driver",
        choices=["driver", "virtual", "none"],
        help="the NPU library CMake links by default: the Ethos-U core driver, the kit's "
        "virtual NPU (its working memory is then measured on the host and planned), or none",
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
    pte_bytes = read_pte_bytes(args.pte)  # once: the plan and the copy are of the same bytes

    model = model_from_bytes(pte_bytes, str(args.pte))
    board = load_board(args.board)
    if args.qemu_stand_in:
        board = stand_in_board(board)
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
    if args.inputs and args.app == "selftest":
        # the self-test runs each delegate on its vectors: compiled-in method inputs would
        # be bytes in its image that nothing reads
        raise KitError(
            "--inputs: the selftest app does not read the method's inputs (it runs each "
            "delegate's command stream on its vectors)",
            hint="give it vectors: ethosu-kit simulate model.pte --inputs x.npy -o "
            "vectors.npz, then --vectors vectors.npz; compiled-in inputs are for "
            "--app executor_runner",
        )
    input_data = None
    if args.inputs:
        input_data = load_input_data(args.inputs, model)

    stack, heap = default_stack_heap(args.app)
    options = PlanOptions(
        input_data=tuple(len(input_data[i]) for i in sorted(input_data)) if input_data else (),
        fast_scratch=args.fast_scratch,
        stack=args.stack if isinstance(args.stack, int) else stack,
        heap=args.heap if isinstance(args.heap, int) else heap,
        method_pool=args.method_pool if isinstance(args.method_pool, int) else None,
        app=args.app,
        allow_cpu_only=args.allow_cpu_only,
        npu=args.npu,
        vnpu_workspace=vnpu_workspace_need(args.pte, model) if args.npu == "virtual" else None,
    )
    if args.fast_scratch is not None:  # less than the streams touch fails only at run time
        check_fast_scratch(args.pte, model, args.fast_scratch)
    if args.vectors is not None and args.app != "selftest":
        raise KitError("--vectors is for --app selftest", hint="add --app selftest")
    if "auto" in (args.stack, args.heap, args.method_pool) and args.app == "bringup":
        # bringup prints no usage lines: the measuring run would pass and then be refused
        raise KitError(
            "--stack/--heap/--method-pool auto: the bringup app reports no stack or heap "
            "use to measure",
            hint="measure the app you will run (--app selftest or executor_runner), "
            "or give --stack/--heap in bytes",
        )

    if args.method_pool == "auto" and args.app != "executor_runner":
        raise KitError(
            f"--method-pool auto: the {args.app} app has no method pool to measure",
            hint="the method pool is the executor_runner's (--app executor_runner)",
        )

    def render(options: PlanOptions) -> tuple[MemoryPlan, dict[str, bytes]]:
        return plan_and_render(
            args.pte, pte_bytes, model, board, mode=mode, options=options,
            vectors=args.vectors, seed=args.seed, input_data=input_data,
        )  # fmt: skip

    plan, files = render(options)
    if "auto" in (args.stack, args.heap, args.method_pool):
        _require_qemu(args, plan)
        before = before_writing(files, args.output.resolve())

        # the measurement writes and builds the project in place (so the user's build
        # folder stays warm); a failure anywhere puts the folder back as it was
        with restored_on_failure(args.output):
            options = _measured(
                args,
                model,
                board,
                options,
                lambda: write_project(files, args.output, force=args.force),
            )
            plan, files = render(options)
            result = since(write_project(files, args.output, force=args.force), before, files)
    else:
        result = write_project(files, args.output, force=args.force)
    if not args.quiet:
        _print_summary(model, plan, result)
    print(result.out_dir)
    return 0


def _auto_options(args: argparse.Namespace) -> str:
    """`--stack/--heap auto`: the options the user gave as auto, for a message."""
    names = [n for n in ("stack", "heap", "method_pool") if getattr(args, n) == "auto"]
    return "/".join(f"--{n.replace('_', '-')}" for n in names) + " auto"


def _require_qemu(args: argparse.Namespace, plan: MemoryPlan) -> None:
    """auto measures the app in a QEMU run: refuse before the minutes of building when
    QEMU cannot run the plan's image (the test `run` would apply to it after the build),
    naming the ways out: the board's stand-in machine, or sizes measured on the board."""
    why = why_not_in_qemu(plan)
    if not why:
        return
    board = plan.board
    stand_in = board.qemu is not None and board.qemu.layout is not None and not board.qemu_layout
    raise KitError(
        f"{_auto_options(args)} measures the {args.app} app in a QEMU run, and QEMU cannot "
        f"run this image: {why}",
        hint=(
            "generate with --qemu-stand-in to measure it on the board's QEMU stand-in, or "
            if stand_in
            else ""
        )
        + "run the app on the board and pass what its `usage:` lines say in bytes: "
        "--stack N --heap N"
        + (" --method-pool N" if args.app == "executor_runner" else "")
        + " (docs/memory.md)",
    )


def _measured(
    args: argparse.Namespace,
    model: ModelInfo,
    board: Board,
    options: PlanOptions,
    write: Callable[[], object],
) -> PlanOptions:
    """`options` with the stack and/or heap sized from a measurement of this app on this
    model: the project's record when it is of the same firmware, or a QEMU run of the
    project written with `write` first."""

    def progress(line: str) -> None:
        """The measurement takes from seconds to minutes (the runner's first build):
        say what it is doing, on stderr (stdout ends with the project's path)."""
        if not args.quiet:
            print(f"measuring: {line}", file=sys.stderr, flush=True)

    firmware = firmware_fingerprint(board, args.app, args.toolchain, args.output)
    m, note = usage.reuse(args.output, model.sha256, args.app, args.toolchain, firmware)
    if m is None:
        write()
        npu = "virtual" if model.ethosu_delegates else "none"
        m = usage.measure_project(
            args.output, args.app, npu, args.toolchain, firmware, progress=progress
        )
    else:
        progress(note)

    def said(why: str) -> str:
        """The why, and whether the record was reused or why it was measured (again)."""
        return f"{why} ({note})"

    if args.stack == "auto":
        guard = usage.stack_guard_bytes(board.cpu.core)
        size = usage.sized_stack(m, args.npu, guard)
        why = said(usage.stack_why(m, size, args.npu, guard))
        options = replace(options, stack=size, stack_why=why)
        if args.npu == "driver":
            size = usage.sized_stack(m, "virtual", guard)
            why = said(usage.stack_why(m, size, "virtual", guard))
            options = replace(options, stack_virtual=size, stack_virtual_why=why)
    if args.heap == "auto":
        size = usage.sized_heap(m.heap_used)
        options = replace(options, heap=size, heap_why=said(usage.heap_why(m, size)))
    # the method pool too, unless given in bytes: the same run measured it
    pool = m.pools.get("method_pool")
    if args.method_pool == "auto" and pool is None:
        raise KitError(
            f"--method-pool auto: the {args.app} app has no method pool to measure",
            hint="measure the executor_runner (--app executor_runner), or leave --method-pool out",
        )
    if pool is not None and not isinstance(args.method_pool, int):
        size = usage.sized_method_pool(pool[0])
        why = said(usage.method_pool_why(m, pool[0], size))
        options = replace(options, method_pool=size, method_pool_why=why)
    return options


def _print_summary(model: ModelInfo, plan: MemoryPlan, result: WriteResult) -> None:
    console = Console(highlight=False, soft_wrap=True)  # the report's lines are its own
    spec = model.compile_spec
    target = spec.accelerator if spec else "CPU only"
    console.print(
        f"[bold]{escape(printable(Path(model.path).name))}[/]: {model.file_bytes} bytes, {target}, "
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
