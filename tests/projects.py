"""The one way tests make a generated project: `make_project(pte, out, board=..., ...)`.

It runs `ethosu-kit gen` in-process through the CLI's own entry point (`cli.app.main`),
so a test gets exactly what a user gets, and the argv is spelled in one place: when a
`gen` flag changes, this file changes, not ten tests. A failed generation fails the
test with gen's exit code and arguments (its `error:` line is in the captured stderr).

Options are `gen` flags by their Python name: `stack="auto"` is `--stack auto`,
`qemu_stand_in=True` is `--qemu-stand-in`, `method_pool=1008` is `--method-pool 1008`;
False and None leave the flag out.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ethosu_kit.cli.app import main as kit_main


@dataclass(frozen=True)
class Project:
    """A generated project folder and the files tests read from it."""

    path: Path

    @property
    def plan_path(self) -> Path:
        return self.path / "memory_plan.json"

    @property
    def generated(self) -> Path:
        return self.path / "generated"

    def plan(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.plan_path.read_text())
        return data

    def buffers(self) -> dict[str, dict[str, Any]]:
        """memory_plan.json's buffers by name."""
        return {str(b["name"]): b for b in self.plan()["buffers"]}


def option_flags(**options: object) -> list[str]:
    """`gen` flags for keyword options (see the module docstring)."""
    flags: list[str] = []
    for name, value in options.items():
        if value is None or value is False:
            continue
        flag = "--" + name.replace("_", "-")
        flags += [flag] if value is True else [flag, str(value)]
    return flags


def gen_argv(
    pte: Path | str,
    out: Path | str,
    *extra: str | Path,
    board: Path | str | None = None,
    mode: str | None = None,
    app: str | None = None,
    npu: str | None = None,
    quiet: bool = True,
    **options: object,
) -> list[str]:
    """The argv of `ethosu-kit gen` (without the program name) for these choices; None
    leaves gen's default. `extra` are raw arguments (a refusal test's bad flags)."""
    argv = ["gen", "--pte", str(pte), "-o", str(out)]
    argv += option_flags(board=board, mode=mode, app=app, npu=npu, **options)
    argv += map(str, extra)
    return [*argv, "-q"] if quiet else argv


def make_project(
    pte: Path | str,
    out: Path,
    *extra: str | Path,
    board: Path | str | None = None,
    mode: str | None = None,
    app: str | None = None,
    npu: str | None = None,
    quiet: bool = True,
    **options: object,
) -> Project:
    """Generate a project from `pte` into `out` with `ethosu-kit gen`; fails the test if
    gen does not exit 0."""
    argv = gen_argv(
        pte, out, *extra, board=board, mode=mode, app=app, npu=npu, quiet=quiet, **options
    )
    code = kit_main(argv)
    assert code == 0, f"gen exited {code}: ethosu-kit {' '.join(argv)}"
    return Project(out)


def copy_with_plan(project: Path, to: Path, edit: Callable[[str], str]) -> Path:
    """A copy of the generated `project` at `to`, its memory_plan.json's text `edit`ed
    (a hand-edited or hostile plan); returns the plan's path."""
    shutil.copytree(project, to)
    plan = to / "memory_plan.json"
    plan.write_text(edit(plan.read_text()))
    return plan
