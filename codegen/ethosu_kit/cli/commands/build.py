"""`ethosu-kit build DIR`: cmake --preset <toolchain> + cmake --build; last line = the ELF path,
after the flash artefacts (firmware.flash) of a board that boots cold."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ethosu_kit.board.toolchain import TOOLCHAINS, Toolchain
from ethosu_kit.firmware.flash import manifest_path, read_manifest
from ethosu_kit.firmware.pipeline import NPU_LIBRARIES, build_firmware
from ethosu_kit.firmware.project import ProjectDir
from ethosu_kit.plan.apps import App


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("project", type=Path, help="folder made by gen-firmware")
    parser.add_argument(
        "--app",
        help="bringup, executor_runner, selftest or a folder of app sources (default: the "
        "app the project was generated for, gen --app, as its CMake presets build it)",
    )
    parser.add_argument(
        "--toolchain", choices=TOOLCHAINS, default=Toolchain.GCC.value, help="preset"
    )
    parser.add_argument(
        "--npu",
        choices=NPU_LIBRARIES,
        help="Ethos-U core driver (ETHOSU_DRIVER_ROOT), the virtual NPU, or none "
        "(default: the project's own, gen's --npu)",
    )
    parser.add_argument(
        "--vectors",
        type=Path,
        metavar="FILE.npz",
        help="--app selftest: inputs and expected outputs (delegate<K>_input<i>, "
        "delegate<K>_output<o>, as `ethosu-kit simulate -o` writes); default: seeded "
        "random inputs, outputs from the virtual NPU on the host",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="when the build regenerates the project (--app selftest, --npu virtual on a "
        "driver plan), overwrite generated files you edited",
    )


def default_app(project: Path) -> str:
    """The app `project` was generated for (its plan's `gen --app`), which its CMake
    presets build too; bringup for a folder without a plan (configure says what is wrong
    with it)."""
    plan = ProjectDir(project).plan_if_any() if project.is_dir() else None
    return str(plan.options.app) if plan is not None else App.BRINGUP.value


def run(args: argparse.Namespace) -> int:
    elf = build_firmware(
        args.project,
        app=args.app if args.app is not None else default_app(args.project),
        toolchain=args.toolchain,
        npu=args.npu,
        vectors=args.vectors,
        force=args.force,
    )
    manifest = manifest_path(elf)
    if manifest.is_file():  # a board that boots cold: what a flasher writes, before the ELF
        flash = read_manifest(manifest)
        for f in flash.files:
            print(f"{elf.parent / f.bin}  {f.region} at 0x{f.address:08x}, {f.size} B (and .hex)")
        print(manifest)
        for what in flash.left_out:
            print(
                f"warning: {elf}: {what} is not in non-volatile memory, so in no flash file "
                "(check-elf refuses this cold-boot image)",
                file=sys.stderr,
            )
    print(elf)
    return 0
