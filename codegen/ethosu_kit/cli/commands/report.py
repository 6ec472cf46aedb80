"""`ethosu-kit report`: the memory picture of a project's plan and/or a linked ELF, in the
terminal, as a self-contained HTML page, as SVG or as JSON; `--diff old.elf new.elf` and
`--budget FILE` for CI (docs/report.md)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rich.console import Console

from ethosu_kit.core.errors import KitError
from ethosu_kit.core.writer import write_file_atomic
from ethosu_kit.firmware.image import image_plan, plan_copy_hint
from ethosu_kit.firmware.project import ProjectDir
from ethosu_kit.plan.report import programs_text
from ethosu_kit.plan.types import MemoryPlan
from ethosu_kit.report import diff, picture, views

BUDGET_EXIT = 5  # a budget is broken (1..4 are the kit's other failures)
# the terminal views' --width: narrower garbles every table, far wider only costs memory
MIN_WIDTH, MAX_WIDTH = 20, 1000


def width_arg(text: str) -> int:
    """--width of a terminal view (report's, advise's), in columns."""
    try:
        width = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of columns") from None
    if not MIN_WIDTH <= width <= MAX_WIDTH:
        raise argparse.ArgumentTypeError(f"{width}: must be {MIN_WIDTH} to {MAX_WIDTH} columns")
    return width


def add_width_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--width", type=width_arg, help="terminal view width")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "target",
        type=Path,
        nargs="*",
        help="a generated project folder (or its memory_plan.json), a built ELF, or both",
    )
    parser.add_argument(
        "--plan", type=Path, help="the ELF's memory_plan.json (default: the one of its project)"
    )
    parser.add_argument("--html", type=Path, metavar="FILE", help="write the page here")
    parser.add_argument("--svg", type=Path, metavar="FILE", help="write the map here")
    parser.add_argument("--json", action="store_true", help="print the facts as JSON")
    parser.add_argument(
        "--diff",
        nargs=2,
        type=Path,
        metavar=("OLD", "NEW"),
        help="what grew from OLD to NEW (two ELFs, or two projects), per region, buffer, section",
    )
    parser.add_argument(
        "--budget",
        type=Path,
        metavar="FILE",
        help="per-region limits (TOML or JSON, docs/report.md): exit 5 naming the regions over",
    )
    add_width_argument(parser)


def _picture(targets: list[Path], plan_arg: Path | None) -> picture.MemoryPicture:
    """The picture of a project folder / memory_plan.json and/or an ELF."""
    return _plan_and_picture(targets, plan_arg)[1]


def _plan_and_picture(
    targets: list[Path], plan_arg: Path | None
) -> tuple[MemoryPlan, picture.MemoryPicture]:
    """The plan, and the picture of a project folder / memory_plan.json and/or an ELF."""
    plan_path: Path | None = plan_arg
    elf: Path | None = None
    for t in targets:
        if t.is_dir():
            plan_path = ProjectDir(t).plan_json
        elif t.suffix == ".json":  # memory_plan.json, or a copy of it under another name
            plan_path = t
        elif t.is_file():
            if elf is not None:
                raise KitError(f"{t}: one ELF at a time", hint="use --diff OLD NEW for two")
            elf = t
        else:
            raise KitError(f"{t}: no such file or folder")
    if plan_path is None and elf is not None:
        plan_path = image_plan(elf, None)
        if plan_path is None:
            raise KitError(
                f"{elf}: no memory_plan.json found near it",
                hint=f"pass --plan <project>/memory_plan.json, or {plan_copy_hint(elf)}",
            )
    if plan_path is None:
        raise KitError("name a project folder, a memory_plan.json or an ELF")
    plan = MemoryPlan.from_json(plan_path)
    return plan, picture.build_picture(plan, plan_path, elf)


def run(args: argparse.Namespace) -> int:
    if args.diff:
        if args.target:
            raise KitError("--diff takes its two images itself, no other target")
        old, new = (_picture([p], args.plan) for p in args.diff)
        changes = diff.diff(old, new)
        if args.json:
            rows = [{**diff.encode_change(c)} for c in changes]
            print(
                json.dumps(
                    {"old": old.elf or old.plan, "new": new.elf or new.plan, "changes": rows},
                    indent=2,
                )
            )
        else:
            for c in changes:
                print(diff.change_text(c))
            if not changes:
                print("no size changed")
        pic = new
    else:
        if not args.target:
            raise KitError("name a project folder, a memory_plan.json or an ELF")
        plan, pic = _plan_and_picture(args.target, args.plan)
        if args.html:
            write_file_atomic(args.html, views.html(pic).encode())
        if args.svg:
            write_file_atomic(args.svg, views.svg(pic).encode())
        if args.json:
            print(json.dumps(picture.to_json(pic), indent=2))
        elif not (args.html or args.svg) or sys.stdout.isatty():
            views.terminal(pic, Console(width=args.width, highlight=False, emoji=False))
            # an image of several programs: who shares what, and the bytes saved
            sys.stdout.write(programs_text(plan))
    if args.budget:
        lines = diff.broken(pic, diff.load_budget(args.budget), str(args.budget))
        if lines:
            # every broken limit on its own line; the error line repeats the first
            for line in lines[1:]:
                print(f"budget: {line}", file=sys.stderr)
            more = f" (and {len(lines) - 1} more above)" if len(lines) > 1 else ""
            raise BudgetError(f"{args.budget}: {lines[0]}{more}")
    return 0


class BudgetError(KitError):
    """A region uses more than its budget allows."""

    exit_code = BUDGET_EXIT
