"""`ethosu-kit simulate model.pte [--inputs ...] [-o out.npz]`: the NPU part, on the host.

Each Ethos-U delegate runs on the virtual NPU (`ethosu_kit.inputs.simulate`); here: the
arguments, what each delegate ran on and gave, and the .npz of `-o`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np

from ethosu_kit.cli.commands.inspect_pte import add_ptd_argument
from ethosu_kit.core.errors import KitError
from ethosu_kit.core.names import program_pte as names_program_pte
from ethosu_kit.firmware.project import ProjectDir
from ethosu_kit.inputs.arrays import check_output_path, save_npz
from ethosu_kit.inputs.simulate import simulate
from ethosu_kit.plan.types import MemoryPlan
from ethosu_kit.pte.ptd import load_external
from ethosu_kit.vnpu.lut import unread_table_warnings


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "pte",
        help="the .pte file, or a generated project of several programs (with --program)",
    )
    parser.add_argument(
        "--program",
        metavar="NAME",
        help="a project of several programs: simulate this program's .pte "
        "(generated/<NAME>.pte; docs/multi-model.md)",
    )
    parser.add_argument(
        "--method",
        metavar="NAME",
        help="only the delegates of this method (default: every method's)",
    )
    parser.add_argument(
        "--inputs",
        nargs="+",
        metavar="FILE",
        help="one .npy per input, or one .npz (arrays in order; a simulate -o or run -o file "
        "gives its inputs): integers are the delegate's own, float32 the method's (quantized "
        "as the program does); needs a single delegate or --delegate",
    )
    parser.add_argument(
        "--delegate",
        type=int,
        metavar="K",
        help="run only Ethos-U delegate K (from 0, as inspect lists them); needed for --inputs "
        "when the model has several. A float input goes only to the delegate it feeds",
    )
    parser.add_argument(
        "--seed", type=seed_arg, default=0, help="seed of the random inputs, 0..2^64-1 (0)"
    )
    parser.add_argument(
        "-o",
        "--output",
        type=Path,
        help="save inputs and outputs to this .npz (missing parent folders are created)",
    )
    add_ptd_argument(parser)


SEED_MAX = (1 << 64) - 1


def seed_arg(text: str) -> int:
    """--seed: an integer 0..2^64-1 (NumPy's generators refuse negative seeds)."""
    try:
        value = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if not 0 <= value <= SEED_MAX:
        raise argparse.ArgumentTypeError(f"{value} is outside 0..{SEED_MAX}")
    return value


def program_pte(project: Path, name: str) -> Path:
    """generated/<name>.pte of a generated project of several programs (its folder or its
    memory_plan.json); one error line naming the programs it has otherwise."""
    folder = project.parent if project.is_file() else project
    plan_path = ProjectDir(folder).plan_json
    if not plan_path.is_file():
        raise KitError(
            f"{project}: --program needs a generated project of several programs (its "
            "folder or memory_plan.json)",
            hint="or pass the program's .pte itself, without --program",
        )
    plan = MemoryPlan.from_json(plan_path)
    names = [p.name for p in plan.programs]
    if name not in names:
        raise KitError(
            f"{project}: no program named {name!r}",
            hint=f"its programs are {', '.join(names)}"
            if names
            else "it has one program: pass its generated/model.pte without --program",
        )
    return ProjectDir(folder).generated / names_program_pte(name)


def needs_program(project: Path) -> KitError:
    """A project folder given without --program: say which programs it has (rather than
    "is a directory, not a .pte")."""
    plan_path = ProjectDir(project).plan_json
    names = (
        [p.name for p in MemoryPlan.from_json(plan_path).programs] if plan_path.is_file() else []
    )
    return KitError(
        f"{project}: a project folder needs --program NAME (simulate runs one program's .pte)",
        hint=f"its programs are {', '.join(names)}"
        if names
        else f"pass the .pte itself, e.g. {ProjectDir(project).generated / 'model.pte'}",
    )


def run(args: argparse.Namespace) -> int:
    if args.output is not None:
        check_output_path(args.output)  # before any work: no result to lose later
    if not args.program and ProjectDir(Path(args.pte)).plan_json.is_file():
        raise needs_program(Path(args.pte))
    saved: dict[str, np.ndarray[Any, Any]] = {}
    pte = program_pte(Path(args.pte), args.program) if args.program else args.pte
    external = load_external(pte, args.ptd)
    for r in simulate(
        pte, inputs=args.inputs, delegate=args.delegate, seed=args.seed, method=args.method,
        external=external,
    ):  # fmt: skip
        k, blocks = r.index, r.blocks
        print(
            f"delegate {k} ({blocks.method}): {len(blocks.cmd_data)} B commands, "
            f"{len(blocks.weight_data)} B weights, {blocks.scratch_size} B scratch"
        )
        product = (blocks.cop.config >> 28) & 0xF
        for line in unread_table_warnings(blocks.command_stream, product, k):
            print(line, file=sys.stderr)
        for line in r.notes:
            print(line)
        for i, x in enumerate(r.inputs):
            saved[f"delegate{k}_input{i}"] = x
            print(f"  input {i}: {x.dtype} {list(x.shape)}")
        for i, y in enumerate(r.outputs):
            saved[f"delegate{k}_output{i}"] = y
            flat = y.reshape(-1)
            head = " ".join(str(v) for v in flat[:16]) + (" ..." if flat.size > 16 else "")
            print(
                f"  output {i}: {y.dtype} {list(y.shape)} min {flat.min()} max {flat.max()}: {head}"
            )
    if args.output is not None:
        written = save_npz(args.output, saved)
        print(f"saved {len(saved)} arrays to {written}")
    return 0
