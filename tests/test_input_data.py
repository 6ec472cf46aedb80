"""Compiled-in inputs (`gen-firmware --inputs`): placed by the plan, never in a TCM.

A model with a 768 KiB float input (more than Corstone-300's 512 KiB ITCM, where such an
input landed as .rodata and overflowed it at link time) generates, builds and runs: the
bring-up proves the input's buffer is where the plan put it. Wrong arrays are one error
naming the file and the input.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ethosu_kit.cli.app import main
from ethosu_kit.firmware.build import build_project
from ethosu_kit.firmware.elf_check import check_elf
from ethosu_kit.firmware.qemu import run_elf
from fw_helpers import need_cross_gcc, need_qemu
from models import BIG_INPUT_SHAPE
from projects import make_project


def test_large_input_is_placed_outside_the_tcms(data_pte_big_input: Path, tmp_path: Path) -> None:
    need_cross_gcc()
    x = np.random.default_rng(0).uniform(-1, 1, BIG_INPUT_SHAPE).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    project = tmp_path / "fw"
    make_project(data_pte_big_input, project, app="bringup", inputs=tmp_path / "x.npy")
    plan = json.loads((project / "memory_plan.json").read_text())
    (buf,) = [b for b in plan["buffers"] if b["name"] == "input_data_0"]
    assert buf["size"] == x.nbytes > 512 * 1024
    assert buf["region"] not in ("ITCM", "DTCM"), buf
    assert (project / "generated" / "kit_input_data_0.bin").read_bytes() == x.tobytes()
    elf = build_project(project, app="bringup")
    result = check_elf(elf, project / "memory_plan.json")
    assert result.ok and "input_data_0" in result.checked, result.violations
    need_qemu()
    run = run_elf(elf, timeout=60)
    assert run.exit_code == 0, run.output
    assert "buffer input_data_0" in run.output and "BRINGUP PASS" in run.output


@pytest.mark.parametrize(
    ("array", "message"),
    [
        (
            np.zeros((1, 3, 16, 16), np.int8),
            "input 0 is int8 [1, 3, 16, 16], the program wants float32",
        ),
        (np.zeros((3, 16, 16), np.float32), "the program wants float32 [1, 3, 16, 16]"),
    ],
    ids=["dtype", "shape"],
)
def test_wrong_input_is_one_error(
    data_pte_u55_shared: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    array: np.ndarray,
    message: str,
) -> None:
    np.save(tmp_path / "x.npy", array)
    out = tmp_path / "fw"
    code = main(
        [
            "gen",
            "--pte",
            str(data_pte_u55_shared),
            "--inputs",
            str(tmp_path / "x.npy"),
            "-o",
            str(out),
            "-q",
        ]
    )
    err = capsys.readouterr().err
    assert code != 0 and message in err and "x.npy" in err, err
    assert len([x for x in err.splitlines() if x.startswith("error:")]) == 1
    assert not out.exists()
