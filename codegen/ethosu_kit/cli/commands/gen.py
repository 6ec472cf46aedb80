"""`ethosu-kit gen` / `gen-firmware`: from a .pte to a placed, fitted firmware project.

The arguments become a `GenRequest` and `firmware.pipeline.generate_project` does the
work (CMake's configure step runs this command too); here: parsing and printing.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import fields
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from ethosu_kit.board.toolchain import MEASURE_TOOLCHAINS, Toolchain
from ethosu_kit.cli.commands.simulate import seed_arg
from ethosu_kit.core.errors import KitError
from ethosu_kit.core.sizes import parse_size
from ethosu_kit.core.text import printable
from ethosu_kit.firmware.pipeline import (
    APPS,
    AUTO,
    NPU_LIBRARIES,
    Generated,
    GenRequest,
    generate_project,
    size_problem,
)
from ethosu_kit.npu.facts import MemoryMode, mode_names
from ethosu_kit.plan.apps import App
from ethosu_kit.plan.report import report_text
from ethosu_kit.plan.types import NpuLibrary
from ethosu_kit.pte.programs import (
    ProgramSource,
    names_a_program,
    parse_pte_arg,
    read_manifest,
)


def size_arg(text: str) -> int:
    """A size as a board file writes it (`393216`, `0x60000`, `384KiB`, `2 MiB`) -> bytes."""
    try:
        return parse_size(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"cannot read {text!r} as a size (use 393216, 0x60000, 384KiB or 2MiB)"
        ) from None


def size_or_auto(text: str) -> int | str:
    """A size, or `auto` (measured: ethosu_kit.firmware.measure)."""
    return AUTO if text == AUTO else size_arg(text)


def _sized(option: str) -> Callable[[str], int | str]:
    """The argparse type of `--<option>`: a size the pipeline takes for it (at least its
    minimum, a multiple of its alignment), or `auto`; a wrong one is refused naming the
    number and the valid ones."""

    def parse(text: str) -> int | str:
        size = size_or_auto(text)
        problem = size_problem(option, size) if isinstance(size, int) else None
        if problem:
            raise argparse.ArgumentTypeError(problem)
        return size

    parse.__name__ = option.replace("_", "-")  # argparse names the type in some messages
    return parse


stack_size = _sized("stack")
heap_size = _sized("heap")
method_pool_size = _sized("method_pool")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--pte",
        action="append",
        metavar="[NAME=]FILE",
        help="the lowered ExecuTorch program; repeat it for an image of several programs, "
        "each named NAME (default: the file's stem) in the firmware (docs/multi-model.md)",
    )
    source.add_argument(
        "--programs",
        type=Path,
        metavar="FILE.toml",
        help="an image of several programs from a manifest: [[program]] name, pte; "
        "concurrent = [[names that may run at the same time]] (docs/multi-model.md)",
    )
    parser.add_argument(
        "--concurrent",
        action="append",
        default=[],
        metavar="A,B[,C]",
        help="with several --pte: programs that may run at the same time (they share "
        "nothing); repeatable",
    )
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
        help=f"{mode_names()} (default: the mode the pte was compiled for)",
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
        "--code-reserve",
        type=size_arg,
        metavar="SIZE",
        help="bytes the plan keeps free for the code (.text/.rodata; default: the app's "
        "estimate, 32KiB to 320KiB); the link checks the real size. What a board with "
        '[boot] code = "copy" needs in its code RAM (docs/boards.md)',
    )
    parser.add_argument(
        "--toolchain",
        default=Toolchain.GCC.value,
        choices=MEASURE_TOOLCHAINS,
        help="the compiler of the build that --stack/--heap/--method-pool auto measure "
        "(default gcc): their frames differ, size for the one you build with",
    )
    parser.add_argument(
        "--app",
        default=App.EXECUTOR_RUNNER.value,
        choices=APPS,
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
        "--seed",
        type=seed_arg,
        default=0,
        help="selftest: random inputs seed, 0..2^64-1 (0)",
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
        default=NpuLibrary.DRIVER.value,
        choices=NPU_LIBRARIES,
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
    parser.add_argument(
        "--ptd",
        action="append",
        type=Path,
        metavar="FILE",
        help="a .ptd with the pte's external Vela blocks (repeatable; default: the .ptd "
        "files beside the pte); docs/ptd.md",
    )
    parser.add_argument(
        "--place-data",
        action="append",
        metavar="TAG=REGION",
        help="place the .ptd of placement tag TAG in board region REGION (one the NPU "
        "reaches; default: non-volatile memory the NPU reaches)",
    )
    parser.add_argument(
        "--ptd-slot",
        action="append",
        metavar="TAG=ADDRESS:SIZE",
        help="give the .ptd of TAG a fixed reserved slot, so other data can be flashed "
        "there without relinking; the image checks the slot's keys at start-up",
    )


def _mode(text: str | None) -> MemoryMode | None:
    """`--mode`; None: the planner takes the pte's own mode and refuses a mismatch."""
    if not text:
        return None
    try:
        return MemoryMode.parse(text)
    except ValueError:
        raise KitError(
            f"--mode {text!r} is not a memory mode",
            hint=f"use {mode_names()}",
        ) from None


def _programs(
    args: argparse.Namespace,
) -> tuple[tuple[ProgramSource, ...], tuple[tuple[str, ...], ...]]:
    """The programs of an image of several (none: one .pte, the single-program project)."""
    concurrent = tuple(tuple(n.strip() for n in g.split(",") if n.strip()) for g in args.concurrent)
    if args.programs is not None:
        if concurrent:
            raise KitError(
                "--concurrent: say which programs run together in the manifest",
                hint='concurrent = [["kws", "vww"]] at the top of the manifest',
            )
        return read_manifest(args.programs)
    if len(args.pte) == 1 and not names_a_program(args.pte[0]):
        if concurrent:
            raise KitError("--concurrent is for an image of several programs (several --pte)")
        return (), ()
    return tuple(parse_pte_arg(text) for text in args.pte), concurrent


def run(args: argparse.Namespace) -> int:
    # Each field of the request is the option of the same name (GenRequest's own checks
    # say `--<field>`); two are typed here first.
    programs, concurrent = _programs(args)
    typed = {
        "mode": _mode(args.mode),
        "inputs": args.inputs or (),
        "pte": programs[0].pte if programs else Path(args.pte[0]),
        "programs": programs,
        "concurrent": concurrent,
        "ptd": args.ptd or (),
        "place_data": args.place_data or (),
        "ptd_slot": args.ptd_slot or (),
    }
    options = {f.name: getattr(args, f.name) for f in fields(GenRequest) if f.name not in typed}
    request = GenRequest(**options | typed)

    def progress(line: str) -> None:
        """The measurement takes from seconds to minutes (the runner's first build):
        say what it is doing, on stderr (stdout ends with the project's path)."""
        if not args.quiet:
            print(f"measuring: {line}", file=sys.stderr, flush=True)

    generated = generate_project(request, progress=progress)
    if not args.quiet:
        _print_summary(generated)
    print(generated.result.out_dir)
    return 0


def _print_summary(generated: Generated) -> None:
    model, plan, result = generated.model, generated.plan, generated.result
    console = Console(highlight=False, soft_wrap=True)  # the report's lines are its own
    spec = model.compile_spec
    target = str(spec.accelerator) if spec else "CPU only"
    if plan.multi:
        console.print(
            f"{len(plan.programs)} programs: "
            + ", ".join(f"[bold]{p.name}[/] ({escape(printable(p.path))})" for p in plan.programs)
            + f"; {target}, {len(model.ethosu_delegates)} Ethos-U delegate(s)"
        )
    else:
        console.print(
            f"[bold]{escape(printable(Path(model.path).name))}[/]: {model.file_bytes} bytes, "
            f"{target}, {len(model.ethosu_delegates)} Ethos-U delegate(s), "
            f"{len(model.cpu_operators)} CPU operator(s)"
        )
    console.print(f"board [bold]{plan.board.name}[/], mode [bold]{plan.mode.value}[/]")
    console.print(report_text(plan), markup=False)
    console.print(
        f"{len(result.written)} file(s) written, {len(result.unchanged)} unchanged"
        + (f", {len(result.removed)} removed" if result.removed else "")
        + (f", {len(result.kept)} of yours kept" if result.kept else "")
    )
