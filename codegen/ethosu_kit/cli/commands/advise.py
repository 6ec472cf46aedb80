"""`ethosu-kit advise`: compile a model's TOSA graph with Vela for every candidate NPU
configuration, memory mode, fast-scratch size and system configuration, plan each on
the boards, and recommend the fastest that fits (Vela's estimate) with the compile spec
that lowers it (docs/advise.md).

The model is the TOSA flatbuffer(s) ExecuTorch's Ethos-U lowering dumps with
`dump_intermediate_artifacts_to(DIR)` (a file, several, or the folder), or a PyTorch
module (`--module`), lowered once here (needs torch + executorch).
"""

from __future__ import annotations

import argparse
import json
import math
import tempfile
from collections.abc import Callable
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ethosu_kit.aot.lowering import Target
from ethosu_kit.aot.tosa import load_module, lower_for_tosa
from ethosu_kit.board.loader import load_board
from ethosu_kit.cli.commands.gen import size_arg
from ethosu_kit.cli.commands.report import add_width_argument
from ethosu_kit.core.errors import FitError, KitError
from ethosu_kit.core.writer import write_file_atomic
from ethosu_kit.pte import read_pte
from ethosu_kit.pte.model import ModelInfo
from ethosu_kit.pte.vela_compile import (
    Compiled,
    VelaTarget,
    check_tosa,
    require_vela,
    tosa_files,
)
from ethosu_kit.report import advise_view
from ethosu_kit.report.advise import Advice, advise
from ethosu_kit.report.advise_candidates import Candidate, choose_candidates, tosa_family
from ethosu_kit.report.advise_compile import compile_candidates

EXAMPLE_MODULE = "ethosu_kit.aot.examples:example_model"
MAX_EXAMPLE_RANK = 8
MAX_EXAMPLE_ELEMENTS = 1 << 26


def _shape(text: str) -> tuple[int, ...]:
    try:
        shape = tuple(int(d) for d in text.replace("x", ",").split(","))
    except ValueError:
        shape = ()
    if not shape or any(d <= 0 for d in shape):
        raise argparse.ArgumentTypeError(f"cannot read {text!r} as a shape (use 1,3,16,16)")
    # torch allocates the example before the lowering: 100000^4 was its internal
    # RuntimeError, 100000^2 gigabytes. An NPU's input is a few MiB (Vela's own
    # limit is 65536 per axis)
    if len(shape) > MAX_EXAMPLE_RANK or math.prod(shape) > MAX_EXAMPLE_ELEMENTS:
        raise argparse.ArgumentTypeError(
            f"{text[:80]!r}: at most {MAX_EXAMPLE_RANK} axes and {MAX_EXAMPLE_ELEMENTS} "
            "elements (an NPU's input is a few MiB)"
        )
    return shape


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "tosa",
        type=Path,
        nargs="*",
        help="the TOSA flatbuffer(s) ExecuTorch's Ethos-U lowering dumps (one per partition, "
        "in order), or the folder it dumps them into",
    )
    parser.add_argument(
        "--pte",
        type=Path,
        help="a .pte lowered from the same graph (any target): the network size is then "
        "exact (its program, the candidate's Vela payloads)",
    )
    parser.add_argument(
        "--module",
        metavar="SPEC",
        help="instead of TOSA: a PyTorch module, pkg.mod:Name or file.py:Name (a class, or "
        f"a function returning (module, example inputs); the kit's example: {EXAMPLE_MODULE})",
    )
    parser.add_argument(
        "--example",
        type=_shape,
        action="append",
        default=[],
        metavar="SHAPE",
        help="an example input shape for --module, e.g. 1,3,16,16 (once per input)",
    )
    parser.add_argument(
        "--board",
        action="append",
        default=[],
        help="a built-in board, a board folder or board.toml (repeatable; default: the "
        "default board)",
    )
    parser.add_argument(
        "--accelerator",
        action="append",
        default=[],
        help="a candidate NPU configuration, e.g. ethos-u55-128 (repeatable; default: every "
        "one the boards allow)",
    )
    parser.add_argument(
        "--mode",
        action="append",
        default=[],
        help="a candidate memory mode: Sram_Only, Shared_Sram, Dedicated_Sram, "
        "Dedicated_Sram_384KB ... (repeatable; default: every one the boards' NPU registers "
        "allow)",
    )
    parser.add_argument(
        "--fast-scratch",
        type=size_arg,
        action="append",
        default=[],
        metavar="SIZE",
        help="a candidate fast-scratch size for Dedicated_Sram, e.g. 256KiB (Vela "
        "--arena-cache-size; repeatable; default: ExecuTorch's Dedicated_Sram_384KB)",
    )
    parser.add_argument(
        "--system-config",
        action="append",
        default=[],
        help="a candidate Vela system config from Arm/vela.ini (repeatable; default: "
        "ExecuTorch's for each NPU)",
    )
    parser.add_argument("--jobs", type=int, help="compiles at once (default: the local cores)")
    parser.add_argument("--json", action="store_true", help="print the facts as JSON")
    parser.add_argument(
        "--html",
        type=Path,
        metavar="FILE",
        help="write the page: the table on top of the recommended candidate's memory picture",
    )
    add_width_argument(parser)


def _tosas(paths: list[Path]) -> tuple[Path, ...]:
    out: list[Path] = []
    for p in paths:
        if p.is_dir():
            found = tosa_files(p)
            if not found:
                raise KitError(
                    f"{p}: no output*_TOSA-*.tosa in this folder",
                    hint="give the folder passed to dump_intermediate_artifacts_to, or the "
                    ".tosa file",
                )
            out.extend(found)
        elif p.exists():
            check_tosa(p)
            out.append(p)
        else:
            raise KitError(f"{p}: no such file or folder")
    return tuple(out)


def _profile_notes(tosas: tuple[Path, ...], candidates: tuple[Candidate, ...]) -> list[str]:
    """A TOSA graph is lowered for one profile (U55/U65 share one, the U85 has its own):
    say so when a candidate of another product compiles it."""
    profiles = {"+u55" if "+u55" in t.name else "+cf" if "+cf" in t.name else "" for t in tosas}
    notes = []
    for family, mark in (("u55", "+u55"), ("u85", "+cf")):
        other = [c for c in candidates if tosa_family(c.target.accelerator.kind) != family]
        if profiles == {mark} and other:
            notes.append(
                f"the TOSA graph is the {mark[1:]} profile; {other[0].target.accelerator} "
                "candidates compile it as it is (an ExecuTorch lowering for that NPU may "
                "partition differently: use --module for an exact comparison)"
            )
    return notes


def _from_module(
    args: argparse.Namespace, candidates: tuple[Candidate, ...], work: Path, console: Console
) -> tuple[dict[str, tuple[Path, ...]], dict[str, ModelInfo]]:
    """Lower the module once per TOSA profile the candidates need; their graphs and .ptes."""
    model, inputs = load_module(args.module, tuple(args.example))
    tosas: dict[str, tuple[Path, ...]] = {}
    refs: dict[str, ModelInfo] = {}
    for c in candidates:
        family = tosa_family(c.target.accelerator.kind)
        if family in tosas:
            continue
        t = c.target
        console.print(f"lowering {args.module} for {t.accelerator} (TOSA profile {family}) ...")
        target = Target(str(t.accelerator), t.system_config, t.memory_mode, t.extra_flags)
        lowered = lower_for_tosa(model, inputs, target, work / family)
        tosas[family] = tosa_files(lowered.dump)
        if not tosas[family]:
            raise KitError(
                f"{args.module}: lowered for {t.accelerator}, no Ethos-U partition (nothing "
                "runs on the NPU)"
            )
        refs[family] = read_pte(lowered.pte)
    return tosas, refs


def _lower_command(module: str | None) -> Callable[[Candidate], str] | None:
    """The kit's own command that lowers a candidate, when there is one (the example)."""
    if module != EXAMPLE_MODULE:
        return None

    def command(c: Candidate) -> str:
        t = c.target
        line = (
            f"ethosu-kit lower-example -o model.pte --accelerator {t.accelerator} "
            f"--memory-mode {t.memory_mode} --system-config {t.system_config}"
        )
        return line if not t.extra_flags else ""  # lower-example takes no extra flags

    return command


def run(args: argparse.Namespace) -> int:
    if bool(args.tosa) == bool(args.module):
        raise KitError(
            "name the model once: TOSA file(s) (or their folder), or --module",
            hint="ethosu-kit advise out/output_tag0_TOSA-1.0+INT+int16+int4+u55.tosa --board BOARD",
        )
    if args.example and not args.module:
        raise KitError("--example goes with --module")
    if args.jobs is not None and args.jobs < 1:
        raise KitError(f"--jobs {args.jobs}: must be at least 1")
    # refused before minutes of Vela, not by the write at the end (whose error named
    # its temporary file)
    if args.html is not None:
        if args.html.is_dir():
            raise KitError(f"--html {args.html}: is a folder; name the page's file")
        if not args.html.parent.is_dir():
            raise KitError(f"--html {args.html}: {args.html.parent} is not an existing folder")
    require_vela()
    boards = [load_board(b) for b in (args.board or ["default"])]
    candidates = choose_candidates(
        boards, args.accelerator, args.mode, args.fast_scratch, args.system_config
    )
    err = Console(stderr=True, width=args.width, highlight=False, emoji=False)
    with tempfile.TemporaryDirectory(prefix="ethosu-kit-advise-") as tmp:
        notes: list[str] = []
        reference: ModelInfo | dict[str, ModelInfo] | None = None
        if args.module:
            by_family, reference = _from_module(args, candidates, Path(tmp), err)
            jobs = [
                (by_family[tosa_family(c.target.accelerator.kind)], c.target) for c in candidates
            ]
            model = args.module
        else:
            tosas = _tosas(args.tosa)
            reference = read_pte(args.pte) if args.pte else None
            jobs = [(tosas, c.target) for c in candidates]
            model = ", ".join(t.name for t in tosas)
            notes.extend(_profile_notes(tosas, candidates))
        compiled = _compile(jobs, args.jobs, err)
    advice = advise(
        model,
        candidates,
        compiled,
        boards,
        reference=reference,
        lower_command=_lower_command(args.module),
        notes=notes,
    )
    if all(o.error for o in advice.outcomes):  # the graph itself, not a candidate: bad input
        first = advice.outcomes[0]
        raise KitError(
            f"{model}: Vela compiled none of the {len(advice.outcomes)} candidate(s) "
            f"({first.candidate}: {first.error})",
            hint="give the .tosa file ExecuTorch's Ethos-U lowering dumped, unchanged",
        )
    if args.html:
        write_file_atomic(args.html, advise_view.page(advice).encode())
    if args.json:
        print(json.dumps(advice.to_json(), indent=2))
    else:
        advise_view.terminal(advice, Console(width=args.width, highlight=False, emoji=False))
    _refuse_unfit(advice)
    return 0


def _compile(
    jobs: list[tuple[tuple[Path, ...], VelaTarget]], workers: int | None, err: Console
) -> list[Compiled]:
    progress = Progress(
        TextColumn("Vela"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("candidates compiled"),
        TimeElapsedColumn(),
        console=err,
        transient=True,
        disable=not err.is_terminal,
        # no refresh thread: the pool forks its workers, and a fork should not copy a
        # thread that may hold the terminal's lock; the bar redraws as each compile ends
        auto_refresh=False,
    )

    def done(_i: int) -> None:
        progress.advance(task)
        progress.refresh()

    with progress:
        task = progress.add_task("compile", total=len(jobs))
        progress.refresh()
        return compile_candidates(jobs, workers=workers, on_done=done)


def _refuse_unfit(advice: Advice) -> None:
    """No candidate fits a board: the table says where each falls short; exit as gen does."""
    unfit = [p.board for p in advice.picks if p.index < 0]
    if unfit:
        raise FitError(
            f"no candidate fits {', '.join(unfit)} (the table names each one's short region)",
            hint="try other candidates (--accelerator, --mode, --fast-scratch) or a bigger board",
        )
