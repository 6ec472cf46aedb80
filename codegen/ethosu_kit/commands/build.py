"""`ethosu-kit build DIR`: cmake --preset <toolchain> + cmake --build; last line = the ELF path."""

from __future__ import annotations

import argparse
from pathlib import Path

from ethosu_kit.build import TOOLCHAINS  # stdlib only: cheap at parser time

HELP = "configure and build a generated project (plain CMake presets); prints the ELF path"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("project", type=Path, help="folder made by gen-firmware")
    parser.add_argument(
        "--app",
        default="bringup",
        help="bringup, executor_runner or a folder of app sources (default: bringup)",
    )
    parser.add_argument("--toolchain", choices=TOOLCHAINS, default="gcc", help="preset")
    parser.add_argument(
        "--npu",
        choices=("driver", "virtual", "none"),
        default="driver",
        help="Ethos-U core driver (ETHOSU_DRIVER_ROOT), the virtual NPU, or none",
    )


def run(args: argparse.Namespace) -> int:
    from ethosu_kit.build import build_project

    elf = build_project(args.project, args.app, args.toolchain, args.npu)
    print(elf)
    return 0
