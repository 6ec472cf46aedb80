"""`ethosu-kit check-elf fw.elf --plan memory_plan.json`: prove the ELF's placements."""

from __future__ import annotations

import argparse
from pathlib import Path

from ethosu_kit.core.errors import KitError
from ethosu_kit.firmware.elf_check import check_or_raise
from ethosu_kit.firmware.image import image_plan, plan_copy_hint


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("elf", type=Path, help="the linked firmware")
    parser.add_argument(
        "--plan",
        type=Path,
        help="memory_plan.json (default: the one of the project folder around the ELF)",
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="no table, only errors")


def run(args: argparse.Namespace) -> int:
    plan = image_plan(args.elf, args.plan)
    if plan is None:
        raise KitError(
            f"{args.elf}: no memory_plan.json found near it",
            hint=f"pass --plan <project>/memory_plan.json, or {plan_copy_hint(args.elf)}",
        )
    check_or_raise(args.elf, plan, args.quiet)
    return 0
