"""A non-editable wheel install carries the firmware sources and can generate (and build)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _run(argv: list[str | Path], cwd: Path, timeout: int = 600) -> str:
    proc = subprocess.run(
        [str(a) for a in argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        # without this checkout's PYTHONPATH and venv: the wheel's install is what runs
        env={k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")},
    )
    assert proc.returncode == 0, f"{argv}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc.stdout


@pytest.mark.slow
def test_wheel_install_generates_a_project(pte_u55_shared: Path, tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", wheels, REPO], tmp_path)
    (wheel,) = wheels.glob("ethosu_porting_kit-*.whl")
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(system_site_packages=True, with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    _run([python, "-m", "pip", "install", "--no-deps", "-q", wheel], tmp_path)
    where = _run(
        [python, "-c", "import ethosu_kit.core.paths as p; print(p.__file__); print(p.kit_root())"],
        tmp_path,
    ).split()
    assert all(Path(w).is_relative_to(env_dir) for w in where), where
    assert Path(where[1]).name == "_kit"

    out = tmp_path / "fw"
    _run([env_dir / "bin" / "gen-firmware", "--pte", pte_u55_shared, "-q", "-o", out], tmp_path)
    board_cmake = (out / "generated" / "kit_board.cmake").read_text()
    assert f'set(ETHOSU_KIT_DIR "{Path(where[1]) / "cmake"}")' in board_cmake
    assert (out / "generated" / "linker.ld").is_file()
    assert (out / ".ethosu-kit" / "manifest.json").is_file()

    if shutil.which("arm-none-eabi-gcc") is None or shutil.which("ninja") is None:
        return  # generation is what this test is about; the build needs the cross toolchain
    # The wheel's firmware sources build the bring-up app with the generated presets.
    _run(["cmake", "--preset", "gcc", "-DETHOSU_KIT_APP=bringup"], out)
    _run(["cmake", "--build", "--preset", "gcc", "-j2"], out)
    assert list((out / "build" / "gcc").glob("bringup*.elf"))
