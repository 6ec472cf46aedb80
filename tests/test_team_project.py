"""A firmware team's own tree takes the model as a library (issue 8).

tests/data/team_project has its own start-up (its own vector-table section and reset
code), its own linker script (its own region names, REGION_ALIAS onto the board's,
`INCLUDE kit_sections.ld`), its own main calling `ethosu_kit_app_main()`, its own
_sbrk (on the plan's heap) and its own toolchain file; `ethosu_add_model(team_fw PTE ...
BOARD ... APP selftest NPU virtual)` brings only the model and the app. Built with
arm-none-eabi-gcc through find_package, add_subdirectory and an installed (moved)
package; check-elf proves the placements in the team's ELF; QEMU (mps3-an547) runs the
NPU self-test (the model's own command stream on the virtual NPU) to SELFTEST PASS.
A script that forgets the INCLUDE or a region alias fails the link naming what is
missing.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ethosu_kit.core import paths
from ethosu_kit.firmware.elf_check import check_elf
from fw_helpers import need_cross_gcc, need_qemu

pytestmark = pytest.mark.firmware

TEAM = Path(__file__).resolve().parent / "data" / "team_project"


def _configure(build: Path, pte: Path, *extra: str, kit_prefix: Path | None = None) -> None:
    prefix = kit_prefix if kit_prefix is not None else paths.cmake_dir()
    proc = subprocess.run(
        [
            "cmake", "-S", str(TEAM), "-B", str(build), "-G", "Ninja",
            f"-DCMAKE_TOOLCHAIN_FILE={TEAM / 'team-toolchain.cmake'}",
            f"-DCMAKE_PREFIX_PATH={prefix}",
            f"-DETHOSU_KIT_PYTHON={sys.executable}",
            f"-DTEAM_PTE={pte}", "-DTEAM_BOARD=cs300", "-DTEAM_MODE=Shared_Sram",
            *extra,
        ],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]


def _build(build: Path, ok: bool = True) -> subprocess.CompletedProcess[str]:
    made = subprocess.run(
        ["cmake", "--build", str(build), "--parallel", "2"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if ok:
        assert made.returncode == 0, made.stdout[-3000:] + made.stderr[-3000:]
    return made


def _proves_and_runs(build: Path) -> None:
    elf = build / "team_fw.elf"
    assert elf.is_file()
    assert (build / "memory_plan.json").is_file(), "the plan lands beside the team's ELF"
    result = check_elf(elf, build / "memory_plan.json")
    assert result.ok, [v.message for v in result.violations]
    assert len(result.checked) >= 5
    # the team's own start-up and script, not the kit's
    nm = subprocess.run(
        ["arm-none-eabi-nm", str(elf)], capture_output=True, text=True, check=True
    ).stdout
    assert " team_reset" in nm and " Reset_Handler" not in nm and " kit_vectors" not in nm
    need_qemu()
    cli = subprocess.run(
        ["ethosu-kit", "run", str(elf), "--timeout", "60"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert cli.returncode == 0, cli.stdout + cli.stderr
    assert "SELFTEST PASS" in cli.stdout, cli.stdout


def test_team_tree_through_find_package(pte_u55_shared: Path, tmp_path: Path) -> None:
    need_cross_gcc()
    build = tmp_path / "build"
    _configure(build, pte_u55_shared)
    _build(build)
    _proves_and_runs(build)


def test_team_tree_through_add_subdirectory(pte_u55_shared: Path, tmp_path: Path) -> None:
    need_cross_gcc()
    build = tmp_path / "build"
    _configure(
        build, pte_u55_shared, "-DTEAM_KIT=subdirectory", f"-DTEAM_KIT_SOURCE={paths.kit_root()}"
    )
    _build(build)
    _proves_and_runs(build)


def test_installed_package_is_relocatable(pte_u55_shared: Path, tmp_path: Path) -> None:
    """cmake --install, then the prefix moved: find_package still finds a working kit."""
    need_cross_gcc()
    kit_build = tmp_path / "kit-build"
    subprocess.run(
        ["cmake", "-S", str(paths.kit_root()), "-B", str(kit_build)],
        capture_output=True, check=True,
    )  # fmt: skip
    subprocess.run(
        ["cmake", "--install", str(kit_build), "--prefix", str(tmp_path / "first")],
        capture_output=True, check=True,
    )  # fmt: skip
    moved = tmp_path / "moved"
    shutil.move(tmp_path / "first", moved)
    build = tmp_path / "build"
    _configure(build, pte_u55_shared, kit_prefix=moved)
    cache = (build / "CMakeCache.txt").read_text()
    assert str(moved / "share" / "ethosu-porting-kit" / "cmake") in cache
    _build(build)
    result = check_elf(build / "team_fw.elf", build / "memory_plan.json")
    assert result.ok


@pytest.mark.parametrize(
    ("edit", "named"),
    [
        (("INCLUDE kit_sections.ld", ""), "does not INCLUDE kit_sections.ld"),
        (('REGION_ALIAS("SRAM", TEAM_SRAM);', ""), "memory region `SRAM' not declared"),
    ],
    ids=["no-include", "no-alias"],
)
def test_team_script_missing_a_piece_fails_the_link_naming_it(
    pte_u55_shared: Path, tmp_path: Path, edit: tuple[str, str], named: str
) -> None:
    need_cross_gcc()
    script = (TEAM / "team.ld").read_text()
    assert edit[0] in script
    bad = tmp_path / "bad.ld"
    bad.write_text(script.replace(edit[0], edit[1]))
    build = tmp_path / "build"
    _configure(build, pte_u55_shared, f"-DTEAM_LINKER_SCRIPT={bad}")
    made = _build(build, ok=False)
    assert made.returncode != 0
    assert named in made.stdout + made.stderr, made.stdout[-3000:]


@pytest.mark.slow
@pytest.mark.qemu
def test_team_tree_runs_the_executor_runner(pte_u55_shared: Path, tmp_path: Path) -> None:
    """APP executor_runner (ExecuTorch, the Ethos-U delegate, the virtual NPU) in the
    team's tree: its start-up runs the C++ constructors, its script keeps .init_array."""
    from runner_build import require_externals

    env = require_externals("EXECUTORCH_ROOT")
    need_cross_gcc()
    build = tmp_path / "build"
    _configure(
        build, pte_u55_shared, "-DTEAM_APP=executor_runner", "-DTEAM_NPU=virtual",
        f"-DEXECUTORCH_ROOT={env['EXECUTORCH_ROOT']}",
    )  # fmt: skip
    subprocess.run(["cmake", "--build", str(build), "--parallel", "2"], check=True, timeout=3600,
                   capture_output=True)  # fmt: skip
    elf = build / "team_fw.elf"
    assert check_elf(elf, build / "memory_plan.json").ok
    need_qemu()
    cli = subprocess.run(
        ["ethosu-kit", "run", str(elf), "--timeout", "120"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert cli.returncode == 0, cli.stdout[-3000:] + cli.stderr[-3000:]
    assert re.search(r"^kit: output 0: ", cli.stdout, re.M), cli.stdout
