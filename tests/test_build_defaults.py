"""What a project's build takes by default, and what it refuses (issue 17).

- `ethosu-kit build DIR` without `--app` builds the app the project was generated for
  (gen --app, which its CMake presets build too), not always the bring-up.
- The generated board header stops a compile for another core than the board's (boards.md
  promises a static assertion): another architecture, MVE or an FPU the core lacks. The
  header is compiled with the board's own flags (passes) and with wrong -mcpu values.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ethosu_kit.cli import app as cli_app
from ethosu_kit.cli.commands import build as build_command
from projects import make_project

AN521 = Path(__file__).resolve().parents[1] / "docs" / "examples" / "boards" / "mps2-an521"


@pytest.mark.parametrize("app", ["selftest", "executor_runner"])
def test_build_defaults_to_the_projects_app(
    data_pte_u55_shared: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, app: str
) -> None:
    project = make_project(data_pte_u55_shared, tmp_path / "fw", app=app, npu="virtual").path
    asked: dict[str, Any] = {}

    def fake_build(project: Path, **kwargs: Any) -> Path:
        asked.update(kwargs)
        return project / "build" / "gcc" / f"{kwargs['app']}.elf"

    monkeypatch.setattr(build_command, "build_firmware", fake_build)
    assert cli_app.main(["build", str(project)]) == 0
    assert asked["app"] == app
    assert cli_app.main(["build", str(project), "--app", "bringup"]) == 0
    assert asked["app"] == "bringup"
    # a folder without a plan: the bring-up (configure then says what is missing)
    assert build_command.default_app(tmp_path / "nothing") == "bringup"


def _compile(compiler: list[str], flags: list[str], generated: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*compiler, *flags, "-mthumb", f"-I{generated}", "-fsyntax-only", "-x", "c", "-"],
        input='#include "kit_board_config.h"\n',
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.mark.parametrize(
    ("board", "compiler", "wrong"),
    [
        ("cs300", "gcc", ["-mcpu=cortex-m7", "-mfpu=fpv5-d16", "-mfloat-abi=hard"]),
        ("cs300", "clang", ["-mcpu=cortex-m33", "-mfloat-abi=hard"]),
        ("cs300", "gcc", ["-mcpu=cortex-m4", "-mfloat-abi=soft"]),
        ("an521", "gcc", ["-mcpu=cortex-m55", "-mfloat-abi=hard"]),  # MVE, FPU: not an M33's
        ("an521", "gcc", ["-mcpu=cortex-m7", "-mfloat-abi=soft"]),
    ],
)
def test_board_header_stops_a_compile_for_another_core(
    data_pte_u55_shared: Path, tmp_path: Path, board: str, compiler: str, wrong: list[str]
) -> None:
    gcc, clang = shutil.which("arm-none-eabi-gcc"), shutil.which("clang-19")
    if gcc is None or (compiler == "clang" and clang is None):
        pytest.skip("the cross compilers are not installed")
    cc = [gcc] if compiler == "gcc" else [str(clang), "--target=arm-none-eabi"]
    project = make_project(
        data_pte_u55_shared, tmp_path / "fw", board=AN521 if board == "an521" else board,
        mode="Shared_Sram", app="bringup",
    ).path  # fmt: skip
    plan = json.loads((project / "memory_plan.json").read_text())
    own = [f for f in plan["board_data"]["cpu"]["flags"][compiler] if not f.startswith("--target")]
    generated = project / "generated"
    right = _compile(cc, own, generated)
    assert right.returncode == 0, right.stderr
    refused = _compile(cc, wrong, generated)
    assert refused.returncode != 0, f"{wrong} compiled for {board}"
    assert "the compiler flags are for another core than the board's" in refused.stderr
