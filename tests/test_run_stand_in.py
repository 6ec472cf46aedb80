"""Corstone-320 firmware runs: QEMU's mps3-an547 stands in (issue 11 item 3).

The cs320 board data names the stand-in ([qemu] machine, a Cortex-M55 for the M85)
and lays the Corstone-320 map onto what that machine has ([qemu.layout]: BRAM moved
into the FPGA SRAM, boot from ITCM). `gen --qemu-stand-in` plans and links an image
with that layout; `ethosu-kit run` runs it and says on one line that it is a
stand-in; an image of the real Corstone-320 layout is refused with the way out, and
a stand-in image is refused by the FVP path. The GCC build uses
-march=armv8.1-m.main+mve.fp+fp.dp (GCC 12 has no cortex-m85): QEMU's cortex-m55 runs it.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from ethosu_kit.firmware.build import build_project
from ethosu_kit.firmware.elf_check import check_elf
from fw_helpers import need_cross_gcc, need_qemu
from hostile import assert_refused, run_kit
from projects import make_project

pytestmark = [pytest.mark.firmware, pytest.mark.qemu]


@pytest.fixture(scope="module")
def stand_in(pte_u85_dedicated: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    need_cross_gcc()
    out = tmp_path_factory.mktemp("cs320") / "stand"
    project = make_project(pte_u85_dedicated, out, board="cs320", app="bringup", qemu_stand_in=True)
    return build_project(project.path, app="bringup")


def test_cs320_bringup_runs_on_the_stand_in(stand_in: Path) -> None:
    plan = stand_in.parents[2] / "memory_plan.json"
    assert check_elf(stand_in, plan).ok
    need_qemu()
    result = run_kit("run", stand_in, "--timeout", "60")
    assert result.returncode == 0, result
    assert "BRINGUP PASS" in result.stdout
    assert "board corstone-320" in result.stdout
    stand_in_lines = [line for line in result.stderr.splitlines() if "stands in for" in line]
    assert len(stand_in_lines) == 1, result.stderr
    assert "mps3-an547 (cortex-m55) stands in for corstone-320" in stand_in_lines[0]
    # the plan put the moved BRAM where the stand-in has it (board.toml [qemu.layout]: into
    # the FPGA SRAM after the BROM), and bring-up found each BRAM buffer there: one exact
    # line per buffer, so a missing line or an address outside the moved region fails
    data = json.loads(plan.read_text())
    bram = next(r for r in data["board_data"]["regions"] if r["name"] == "BRAM")
    assert bram["base"] == 0x1102_0000, bram
    in_bram = [b for b in data["buffers"] if b["region"] == "BRAM" and b["size"]]
    assert in_bram, "no buffer in BRAM: the check below would prove nothing"
    for b in in_bram:
        line = re.search(
            rf"^buffer {b['name']} +addr=0x([0-9a-f]{{8}}) size={b['size']} +region=BRAM +"
            r"actual=BRAM .* PASS$",
            result.stdout,
            re.M,
        )
        assert line, f"no bring-up line for {b['name']} in BRAM:\n{result.stdout}"
        assert bram["base"] <= int(line[1], 16) < bram["base"] + bram["size"], line[0]


def test_the_real_cs320_layout_is_refused_with_the_way_out(
    pte_u85_dedicated: Path, tmp_path: Path
) -> None:
    need_cross_gcc()
    project = make_project(pte_u85_dedicated, tmp_path / "real", board="cs320", app="bringup")
    elf = build_project(project.path, app="bringup")
    result = run_kit("run", elf, "--timeout", "30")
    assert_refused(result, "at 0x12000000 are outside the memory QEMU's mps3-an547 has", code=65)
    assert "--qemu-stand-in" in result.stderr
    assert "BRINGUP" not in result.stdout


def test_the_fvp_refuses_a_stand_in_image(stand_in: Path, tmp_path: Path) -> None:
    fake = tmp_path / "FVP_Corstone_SSE-320"
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(0o755)
    result = run_kit("run", stand_in, "--fvp", fake)
    assert_refused(result, "laid out for corstone-320's QEMU stand-in", code=65)


def test_cs320_u85_selftest_with_the_virtual_npu_passes(
    pte_u85_dedicated: Path, tmp_path: Path
) -> None:
    """The NPU self-test of a cs320 + U85 Dedicated_Sram model on the stand-in: every
    delegate's own stream through the virtual Ethos-U85 in firmware, bit-exact."""
    need_cross_gcc()
    project = make_project(
        pte_u85_dedicated, tmp_path / "st", board="cs320", app="selftest", npu="virtual",
        qemu_stand_in=True,
    ).path  # fmt: skip
    built = subprocess.run(
        ["ethosu-kit", "build", str(project), "--app", "selftest", "--npu", "virtual"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    need_qemu()
    result = run_kit("run", built.stdout.strip().splitlines()[-1], "--timeout", "120")
    assert result.returncode == 0, result
    assert "SELFTEST PASS" in result.stdout
    assert "mode Dedicated_Sram" in result.stdout and "ethos-u85" in result.stdout


@pytest.mark.slow
def test_cs320_u85_runner_equals_simulate(pte_u85_dedicated: Path, tmp_path: Path) -> None:
    """With the checkouts: the executor_runner of a cs320 + U85 Dedicated_Sram model on the
    stand-in prints exactly what `ethosu-kit simulate` computes for the same inputs."""
    from runner_build import RunResult, build_with_cli, require_externals
    from vnpu_support import runner_equals_simulation

    require_externals("EXECUTORCH_ROOT", "ETHOSU_DRIVER_ROOT", "CMSIS_ROOT")
    project = make_project(
        pte_u85_dedicated, tmp_path / "fw", board="cs320", app="executor_runner", npu="virtual",
        qemu_stand_in=True,
    ).path  # fmt: skip
    elf = build_with_cli(project, "virtual")
    need_qemu()
    result = run_kit("run", elf, "--timeout", "300")
    assert result.returncode == 0, result
    runner_equals_simulation(
        pte_u85_dedicated, project, RunResult(result.returncode, result.stdout), tmp_path
    )


def test_a_board_without_a_layout_has_no_stand_in(pte_u55_shared: Path, tmp_path: Path) -> None:
    result = run_kit(
        "gen", "--board", "cs300", "--pte", pte_u55_shared, "--qemu-stand-in", "-o", tmp_path / "x"
    )
    assert_refused(result, "no [qemu.layout]", absent=[tmp_path / "x"], code=2)
