"""A firmware team's own CMake tree: find_package(ethosu-porting-kit) + ethosu_add_firmware,
which runs the generator at configure time, then builds and runs the bringup in QEMU."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ethosu_kit.cli.app import main
from ethosu_kit.core import paths
from ethosu_kit.firmware.elf_check import check_elf
from ethosu_kit.firmware.qemu import run_elf
from fw_helpers import REPO, need_cross_gcc, need_qemu

pytestmark = pytest.mark.firmware

USER_CMAKELISTS = """\
cmake_minimum_required(VERSION 3.25)
project(team_firmware C CXX ASM)
find_package(ethosu-porting-kit 0.1 REQUIRED)
ethosu_add_firmware(TARGET team_fw APP bringup PTE "${TEAM_PTE}" BOARD cs300 MODE Shared_Sram)
"""


def _configure(
    src: Path, build: Path, pte: Path, cwd: Path | None = None, *, toolchain: bool = True
) -> subprocess.CompletedProcess[str]:
    """Configure the team's tree with the kit's GCC toolchain file, as its CI would
    (`toolchain=False`: with none, the host's compiler)."""
    kit_cmake = paths.cmake_dir()
    toolchain_file = kit_cmake / "toolchain" / "arm-none-eabi-gcc.cmake"
    return subprocess.run(
        [
            "cmake", "-S", str(src), "-B", str(build), "-G", "Ninja",
            *([f"-DCMAKE_TOOLCHAIN_FILE={toolchain_file}"] if toolchain else []),
            f"-DCMAKE_PREFIX_PATH={kit_cmake}",
            f"-DETHOSU_KIT_PYTHON={sys.executable}",
            f"-DTEAM_PTE={pte}",
        ],
        capture_output=True, text=True, check=False, cwd=cwd,
    )  # fmt: skip


def _configure_refused(configure: subprocess.CompletedProcess[str], *words: str) -> None:
    """Configure stopped, its error naming every one of `words`."""
    assert configure.returncode != 0, configure.stdout + configure.stderr
    for word in words:
        assert word in configure.stderr, f"{word!r} not in:\n{configure.stderr}"


def _build(build: Path) -> None:
    make = subprocess.run(
        ["cmake", "--build", str(build), "--parallel", "2"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert make.returncode == 0, make.stdout + make.stderr


def test_external_project(pte_u55_shared: Path, tmp_path: Path) -> None:
    need_cross_gcc()
    src = tmp_path / "team"
    src.mkdir()
    (src / "CMakeLists.txt").write_text(USER_CMAKELISTS)
    build = tmp_path / "build"
    configure = _configure(src, build, pte_u55_shared)
    assert configure.returncode == 0, configure.stdout + configure.stderr
    generated = build / "team_fw_kit"
    assert (generated / "generated" / "linker.ld").is_file()
    _build(build)
    elf = build / "team_fw.elf"
    assert check_elf(elf, generated / "memory_plan.json").ok
    need_qemu()
    run = run_elf(elf, timeout=30)
    assert run.exit_code == 0, run.output
    assert "BRINGUP PASS" in run.output


def test_generation_error_stops_configure(tmp_path: Path) -> None:
    need_cross_gcc()
    src = tmp_path / "team"
    src.mkdir()
    (src / "CMakeLists.txt").write_text(USER_CMAKELISTS)
    bad = tmp_path / "bad.pte"
    bad.write_bytes(b"\0" * 64)
    configure = _configure(src, tmp_path / "build", bad)
    _configure_refused(configure, "ethosu_kit_generate: gen-firmware failed", "bad.pte")


def test_board_folder_relative_to_the_calling_cmakelists(
    pte_u55_shared: Path, tmp_path: Path
) -> None:
    """BOARD ../boards/an521 in a subdirectory's CMakeLists.txt is that file's path
    (CMAKE_CURRENT_SOURCE_DIR), whatever folder cmake runs in; the board is a folder of
    the team's tree the kit has never seen (the Cortex-M33 example), run in its QEMU."""
    import shutil

    need_cross_gcc()
    src = tmp_path / "team"
    shutil.copytree(REPO / "docs" / "examples" / "boards" / "mps2-an521", src / "boards" / "an521")
    (src / "fw").mkdir()
    (src / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.25)\nproject(team C CXX ASM)\n"
        "find_package(ethosu-porting-kit REQUIRED)\nadd_subdirectory(fw)\n"
    )
    (src / "fw" / "CMakeLists.txt").write_text(
        'ethosu_add_firmware(TARGET m33_fw APP bringup PTE "${TEAM_PTE}" BOARD ../boards/an521)\n'
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    build = tmp_path / "build"
    configure = _configure(src, build, pte_u55_shared, cwd=elsewhere)
    assert configure.returncode == 0, configure.stdout + configure.stderr
    _build(build)
    elf = build / "fw" / "m33_fw.elf"
    assert check_elf(elf, build / "fw" / "m33_fw_kit" / "memory_plan.json").ok
    # the plan is copied beside the ELF: `check-elf` and `run` find the board folder's
    # plan (and so the board) as for a generated project
    assert (build / "fw" / "memory_plan.json").is_file()
    assert main(["check-elf", str(elf)]) == 0
    need_qemu()
    run = run_elf(elf, timeout=30)
    assert run.exit_code == 0, run.output
    assert "bringup: board mps2-an521," in run.output and "BRINGUP PASS" in run.output


def test_the_host_compiler_is_refused_at_configure(pte_u55_shared: Path, tmp_path: Path) -> None:
    """Without a cross toolchain file, configure stops naming the toolchain files, rather
    than the build failing later on `cc: unrecognized -mthumb`."""
    src = tmp_path / "team"
    src.mkdir()
    (src / "CMakeLists.txt").write_text(USER_CMAKELISTS.replace("C CXX ASM", "C ASM"))
    configure = _configure(src, tmp_path / "build", pte_u55_shared, toolchain=False)
    _configure_refused(configure, "is the host's compiler", "toolchain/arm-none-eabi-gcc.cmake")


def test_two_firmwares_in_one_folder_each_find_their_plan(
    pte_u55_shared: Path, tmp_path: Path
) -> None:
    """Two executables in one output folder share its memory_plan.json (the last one
    configured); each also gets <elf name>.memory_plan.json, which check-elf prefers."""
    need_cross_gcc()
    src = tmp_path / "team"
    src.mkdir()
    (src / "CMakeLists.txt").write_text(
        USER_CMAKELISTS
        + 'ethosu_add_firmware(TARGET team_st APP selftest PTE "${TEAM_PTE}" BOARD cs300 '
        "NPU virtual)\n"
    )
    build = tmp_path / "build"
    configure = _configure(src, build, pte_u55_shared)
    assert configure.returncode == 0, configure.stdout + configure.stderr
    _build(build)
    from ethosu_kit.firmware.elf_check import plan_near

    for name in ("team_fw", "team_st"):
        own = build / f"{name}.memory_plan.json"
        assert plan_near(build / f"{name}.elf") == own.resolve()
        assert main(["check-elf", str(build / f"{name}.elf")]) == 0, name
