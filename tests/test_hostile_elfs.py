"""Hostile inputs, second round (issue 20): ELFs given to `run` and `check-elf`.

An image with no program headers is refused before any emulator starts (QEMU aborts
on it); QEMU refusing the machine/CPU pair is run's tool failure (65), never the
firmware's exit code 1; a symlink loop is one error line.
"""

from __future__ import annotations

import shutil
import struct
from pathlib import Path

import pytest

from ethosu_kit.npu.exit_codes import RUN_TOOL
from fw_helpers import Built, built, need_qemu
from hostile import assert_refused, run_kit

pytestmark = pytest.mark.firmware


@pytest.fixture(scope="module")
def image(data_pte_u55_shared: Path, tmp_path_factory: pytest.TempPathFactory) -> Built:
    return built(data_pte_u55_shared, "cs300", "Shared_Sram", tmp_path_factory.mktemp("elfs"))


def _copy(b: Built, tmp: Path) -> tuple[Path, Path]:
    elf = tmp / "fw.elf"
    shutil.copy(b.elf, elf)
    plan = tmp / "plan.json"
    shutil.copy(b.plan, plan)
    return elf, plan


def test_elf_without_program_headers(image: Built, tmp_path: Path) -> None:
    elf, plan = _copy(image, tmp_path)
    data = bytearray(elf.read_bytes())
    struct.pack_into("<H", data, 44, 0)  # e_phnum of an ELF32
    elf.write_bytes(bytes(data))
    result = run_kit("run", elf, "--plan", plan, "--emulator", "qemu")
    assert_refused(result, "no loadable segments", code=RUN_TOOL["REFUSED"])


def test_qemu_refusing_the_cpu_is_a_tool_failure(data_pte_u55_shared: Path, tmp_path: Path) -> None:
    """A board whose [qemu] cpu is a real QEMU CPU the machine does not take: QEMU says
    so and exits 1, which is not the firmware's code 1 (FAIL)."""
    need_qemu()
    from ethosu_kit.firmware.build import build_project
    from projects import make_project
    from test_hostile_boards import _sub, _write

    board = _write(tmp_path, _sub('cpu = "cortex-m55"\n\n[fvp]', 'cpu = "cortex-m33"\n\n[fvp]'))
    project = tmp_path / "fw"
    make_project(data_pte_u55_shared, project, board=board, mode="Shared_Sram", app="bringup")
    elf = build_project(project, app="bringup", toolchain="gcc")
    result = run_kit("run", elf, "--emulator", "qemu")
    line = assert_refused(result, "QEMU refused", code=RUN_TOOL["REFUSED"])
    assert "FAIL" not in result.stdout + line


def test_symlink_loop(tmp_path: Path) -> None:
    loop = tmp_path / "loop.elf"
    loop.symlink_to(loop)
    assert_refused(run_kit("check-elf", loop), "loop.elf")
    assert_refused(run_kit("run", loop), "loop.elf")


# --program/--method become words of the semihosting command line, which the firmware
# splits at spaces: a space, a newline or 100k characters were passed on (a method of
# "forward --kit-inputs" added a flag); refused before the emulator starts
@pytest.mark.parametrize(
    "flag, value",
    [
        ("--method", "forward --kit-inputs"),
        ("--method", "forward\n"),
        ("--method", "x" * 100_000),
        ("--program", ""),
    ],
    ids=["method-space", "method-newline", "method-100k", "program-empty"],
)
def test_selection_is_one_word(image: Built, tmp_path: Path, flag: str, value: str) -> None:
    elf, plan = _copy(image, tmp_path)
    result = run_kit("run", elf, "--plan", plan, "--emulator", "qemu", flag, value)
    assert_refused(result, flag, "not a name")
