"""A firmware team's own CMake tree: find_package(ethosu-porting-kit) + ethosu_add_firmware,
which runs the generator at configure time, then builds and runs the bringup in QEMU."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ethosu_kit import paths
from ethosu_kit.elf_check import check_elf
from ethosu_kit.qemu import run_elf
from fw_helpers import need_cross_gcc, need_qemu

pytestmark = pytest.mark.firmware

USER_CMAKELISTS = """\
cmake_minimum_required(VERSION 3.25)
project(team_firmware C CXX ASM)
find_package(ethosu-porting-kit 0.1 REQUIRED)
ethosu_add_firmware(TARGET team_fw APP bringup PTE "${TEAM_PTE}" BOARD cs300 MODE Shared_Sram)
"""


def test_external_project(pte_u55_shared: Path, tmp_path: Path) -> None:
    need_cross_gcc()
    src = tmp_path / "team"
    src.mkdir()
    (src / "CMakeLists.txt").write_text(USER_CMAKELISTS)
    kit_cmake = paths.cmake_dir()
    build = tmp_path / "build"
    configure = subprocess.run(
        [
            "cmake", "-S", str(src), "-B", str(build), "-G", "Ninja",
            f"-DCMAKE_TOOLCHAIN_FILE={kit_cmake / 'toolchain' / 'arm-none-eabi-gcc.cmake'}",
            f"-DCMAKE_PREFIX_PATH={kit_cmake}",
            f"-DETHOSU_KIT_PYTHON={sys.executable}",
            f"-DTEAM_PTE={pte_u55_shared}",
        ],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert configure.returncode == 0, configure.stdout + configure.stderr
    generated = build / "team_fw_kit"
    assert (generated / "generated" / "linker.ld").is_file()
    make = subprocess.run(
        ["cmake", "--build", str(build), "--parallel", "2"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert make.returncode == 0, make.stdout + make.stderr
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
    kit_cmake = paths.cmake_dir()
    configure = subprocess.run(
        [
            "cmake", "-S", str(src), "-B", str(tmp_path / "build"), "-G", "Ninja",
            f"-DCMAKE_TOOLCHAIN_FILE={kit_cmake / 'toolchain' / 'arm-none-eabi-gcc.cmake'}",
            f"-DCMAKE_PREFIX_PATH={kit_cmake}",
            f"-DETHOSU_KIT_PYTHON={sys.executable}",
            f"-DTEAM_PTE={bad}",
        ],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert configure.returncode != 0
    assert "ethosu_kit_generate: gen-firmware failed" in configure.stderr
    assert "bad.pte" in configure.stderr
