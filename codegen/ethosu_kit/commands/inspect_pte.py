"""`ethosu-kit inspect model.pte [--json]`: what a lowered .pte holds, without torch."""

from __future__ import annotations

import argparse

HELP = "show what a .pte holds: methods, IO, planned buffers, CPU operators, Ethos-U delegates"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("pte", help="the .pte file (ExecuTorch program, ET12)")
    parser.add_argument(
        "--json", action="store_true", help="print ModelInfo as JSON instead of tables"
    )


def run(args: argparse.Namespace) -> int:
    from ethosu_kit.describe import describe_model, model_json
    from ethosu_kit.pte import read_pte

    info = read_pte(args.pte)
    print(model_json(info) if args.json else describe_model(info), end="")
    return 0
