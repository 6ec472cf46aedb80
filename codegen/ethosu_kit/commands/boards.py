"""`ethosu-kit boards`: list the built-in boards."""

from __future__ import annotations

import argparse

HELP = "list the built-in boards (and check a custom board file)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("board", nargs="?", help="show one board (name, alias or board.toml path)")


def run(args: argparse.Namespace) -> int:
    raise NotImplementedError("boards: owned by the board-model work")
