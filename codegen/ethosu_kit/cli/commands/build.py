"""`ethosu-kit build DIR`: cmake --preset <toolchain> + cmake --build; last line = the ELF path."""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

from ethosu_kit.core.errors import KitError
from ethosu_kit.core.names import PTE_NAME
from ethosu_kit.core.writer import write_project
from ethosu_kit.firmware.build import TOOLCHAINS, build_project
from ethosu_kit.firmware.pipeline import plan_and_render
from ethosu_kit.inputs.compiled import project_input_data
from ethosu_kit.plan.types import MemoryPlan
from ethosu_kit.pte import read_pte
from ethosu_kit.pte.reader import read_pte_bytes


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("project", type=Path, help="folder made by gen-firmware")
    parser.add_argument(
        "--app",
        default="bringup",
        help="bringup, executor_runner, selftest or a folder of app sources (default: bringup)",
    )
    parser.add_argument("--toolchain", choices=TOOLCHAINS, default="gcc", help="preset")
    parser.add_argument(
        "--npu",
        choices=("driver", "virtual", "none"),
        default=None,
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


def _for_selftest(project: Path, vectors: Path | None, force: bool = False) -> None:
    """Regenerate `project` for the self-test (its plan plus the vectors) unless it already
    is one and no new vectors were given. Same board, mode and options as it was made with
    (its memory_plan.json, typed); a file edited since generation stops it, unless
    `force` (build --force: build regenerates, so build is where the flag is)."""
    plan_path = project / "memory_plan.json"
    if not plan_path.is_file():
        raise KitError(
            f"{project}: no memory_plan.json, so not a generated project",
            hint="generate one first: gen-firmware --pte model.pte -o DIR",
        )
    plan = MemoryPlan.from_json(plan_path)
    generated = project / "generated"
    if (
        vectors is None
        and plan.options.app == "selftest"
        and (generated / "kit_selftest.h").is_file()
    ):
        return
    pte = generated / PTE_NAME
    if not pte.is_file():
        raise KitError(f"{pte}: missing, so the project cannot be regenerated for the self-test")
    model = replace(read_pte(pte), path=plan.model_path)
    _, files = plan_and_render(
        pte, read_pte_bytes(pte), model, plan.board, mode=plan.mode,
        options=replace(plan.options, app="selftest"), vectors=vectors,
        input_data=project_input_data(project, plan),
    )  # fmt: skip
    write_project(files, project, force=force)


def run(args: argparse.Namespace) -> int:
    if args.app == "selftest":
        _for_selftest(args.project, args.vectors, args.force)
    elif args.vectors is not None:
        raise KitError("--vectors is for --app selftest", hint="add --app selftest")
    elf = build_project(args.project, args.app, args.toolchain, args.npu, args.force)
    print(elf)
    return 0
