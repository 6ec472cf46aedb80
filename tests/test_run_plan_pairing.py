"""`run` and `check-elf` pair an ELF with its own memory_plan.json, never a neighbour's.

Two bring-up projects of two programs for the same board and mode, side by side: the
ELF names its program in `.kit.info` (`model_sha256`, the .pte's), and a plan found
near it for the other program is refused with one `error:` line naming both, before
any emulator starts; `--plan` with the image's own plan is the way out. Among several
plans near an ELF the image's own is taken, however near the other one lies.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ethosu_kit.firmware.build import build_project
from ethosu_kit.firmware.image import identify, read_kit_info
from ethosu_kit.plan.types import MemoryPlan
from fw_helpers import Built, need_cross_gcc, need_qemu
from hostile import assert_refused, run_kit
from projects import make_project

pytestmark = pytest.mark.firmware


def _build(pte: Path, project: Path) -> Built:
    make_project(pte, project, board="cs300", mode="Shared_Sram", app="bringup")
    elf = build_project(project, app="bringup", toolchain="gcc")
    return Built(project, elf, project / "memory_plan.json")


@pytest.fixture(scope="module")
def pair(
    pte_u55_shared: Path, pte_cpu_op: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Built, Built]:
    """(a, b): the example CNN and the CNN with argmax, both cs300 Shared_Sram, in
    sibling folders of one root."""
    need_cross_gcc()
    root = tmp_path_factory.mktemp("pairing")
    return _build(pte_u55_shared, root / "a"), _build(pte_cpu_op, root / "b")


def _sha(plan: Path) -> str:
    return MemoryPlan.from_json(plan).model_sha256


def test_the_image_names_its_program(pair: tuple[Built, Built]) -> None:
    for b in pair:
        assert read_kit_info(b.elf)["model_sha256"] == _sha(b.plan)
    assert _sha(pair[0].plan) != _sha(pair[1].plan)


def test_another_programs_plan_near_the_elf_is_refused(pair: tuple[Built, Built]) -> None:
    """a's ELF dropped into b's build folder: b's plans are the only ones near it (same
    board, same mode), and neither is taken."""
    a, b = pair
    stray = b.elf.parent / "stray.elf"
    shutil.copy(a.elf, stray)
    want, other = _sha(a.plan)[:12], _sha(b.plan)[:12]
    for command in ("run", "check-elf"):
        result = run_kit(command, stray)
        line = assert_refused(result, str(stray), want, other, "not this image's plan")
        assert "memory_plan.json" in line and str(b.project) in line, line
        assert "--plan" in result.stderr  # the hint: the way out
        assert "BRINGUP" not in result.stdout, "the emulator ran"
    # --plan with b's plan: refused the same way
    result = run_kit("run", stray, "--plan", b.plan)
    assert_refused(result, str(b.plan), want, other, code=65)
    assert "BRINGUP" not in result.stdout


@pytest.mark.qemu
def test_the_images_own_plan_runs_it(pair: tuple[Built, Built]) -> None:
    a, b = pair
    stray = b.elf.parent / "stray-ok.elf"
    shutil.copy(a.elf, stray)
    assert run_kit("check-elf", stray, "--plan", a.plan, "-q").returncode == 0
    need_qemu()
    result = run_kit("run", stray, "--plan", a.plan)
    assert result.returncode == 0, result
    assert "BRINGUP PASS" in result.stdout


def test_the_images_own_plan_wins_over_a_nearer_one(pair: tuple[Built, Built]) -> None:
    """a's ELF with b's plan copied beside it under its name, inside project a: the
    nearest plan is b's, the image's own (a/memory_plan.json) is two folders up."""
    a, b = pair
    folder = a.project / "copies" / "x"
    folder.mkdir(parents=True, exist_ok=True)
    elf = folder / "fw.elf"
    shutil.copy(a.elf, elf)
    shutil.copy(b.plan, folder / "fw.memory_plan.json")
    assert identify(elf).plan_path == a.plan.resolve()
    result = run_kit("check-elf", elf)
    assert result.returncode == 0, result
    assert "ok: " in result.stdout, result
