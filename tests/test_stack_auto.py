"""`gen --stack auto --heap auto`: sized from the app's own QEMU run, and a stack that is
too small fails by name (not a hang, not silent corruption).

The self-test app (no ExecuTorch needed) on the example model: the first `gen` measures
(builds with the virtual NPU, runs in QEMU, records measured_usage.json) and plans the
stack for the Arm driver (the run's mark outside the virtual NPU's jobs, or the driver's
path from its entry, + 256 B for an interrupt) and says so; built with the virtual NPU,
the plan takes the stack the virtual NPU's frames need and the image passes; an image
with a stack well under the measured mark stops with the stack overflow named and exit
code 16.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

from ethosu_kit.cli.app import main
from ethosu_kit.firmware.build import build_project
from ethosu_kit.firmware.measure import MEASURE_FILE, load_measurement, sized_stack
from ethosu_kit.firmware.qemu import run_elf
from fw_helpers import need_cross_gcc, need_qemu
from projects import make_project

pytestmark = [pytest.mark.firmware, pytest.mark.qemu]


def test_sized_from_a_measurement_and_too_small_is_named(
    pte_u55_shared: Path, tmp_path: Path
) -> None:
    need_cross_gcc()
    need_qemu()
    project = tmp_path / "fw"
    buffers = make_project(
        pte_u55_shared, project, stack="auto", heap="auto", app="selftest"
    ).buffers()
    measured = json.loads((project / MEASURE_FILE).read_text())
    m = load_measurement(project, measured["model_sha256"], "selftest")
    assert m is not None and m.app == "selftest" and m.stack_size == 8 * 1024  # its default
    # planned for the Arm driver (gen's default): the run's CPU part and the driver's path
    assert 0 < m.npu_entry < m.stack_cpu < m.stack_used, "the driver's entry and CPU part"
    stack, heap = buffers["stack"], buffers["heap"]
    assert stack["size"] == sized_stack(m, "driver") < sized_stack(m, "virtual") < 8 * 1024
    assert "--stack auto: for the Arm driver" in str(stack["why"])
    assert MEASURE_FILE in str(stack["why"]) and "--heap auto:" in str(heap["why"])
    assert str(stack["why"]).endswith(f"(measured now: no {MEASURE_FILE} yet)")
    assert "--stack auto:" in (project / "memory_report.txt").read_text()

    # built with the virtual NPU, the plan takes the stack its own frames need
    run = run_elf(build_project(project, app="selftest", npu="virtual"), timeout=60)
    assert run.exit_code == 0, run.output
    used = re.search(r"^usage: stack used (\d+) of (\d+) bytes", run.output, re.M)
    assert used and int(used.group(2)) == sized_stack(m, "virtual"), run.output
    assert int(used.group(1)) <= m.stack_used, "same image, same paths"

    # a second gen reuses the record (no new measurement) and gives the same sizes
    (project / MEASURE_FILE).write_text(
        (project / MEASURE_FILE)
        .read_text()
        .replace(f'"stack_cpu": {m.stack_cpu}', '"stack_cpu": 4000')
    )
    want = sized_stack(replace(m, stack_cpu=4000), "driver")
    stack = make_project(pte_u55_shared, project, stack="auto", app="selftest").buffers()["stack"]
    assert stack["size"] == want and "reused: the same app, compiler, firmware" in str(stack["why"])

    # ... unless the firmware changed since: here the kit's SDK sources, as the record's
    # fingerprint says; measured again (the mark comes back) and the why says why
    record = json.loads((project / MEASURE_FILE).read_text())
    record["firmware"]["sdk"] = "0" * 64
    (project / MEASURE_FILE).write_text(json.dumps(record))
    stack = make_project(pte_u55_shared, project, stack="auto", app="selftest").buffers()["stack"]
    assert stack["size"] == sized_stack(m, "driver"), stack
    assert str(stack["why"]).endswith(
        "(measured again: the kit's SDK sources (sdk/) changed since the record)"
    ), stack
    again = json.loads((project / MEASURE_FILE).read_text())
    assert again["stack_cpu"] == m.stack_cpu and again["firmware"] == m.firmware

    small = tmp_path / "small"
    too_small = measured["stack_used"] // 2 // 8 * 8
    make_project(pte_u55_shared, small, stack=too_small, app="selftest")
    run = run_elf(build_project(small, app="selftest", npu="virtual"), timeout=60)
    assert not run.timed_out
    assert run.exit_code == 16, run.output
    assert f"E: stack overflow: the stack of {too_small} bytes" in run.output, run.output


def test_bringup_is_refused_before_anything_is_built(pte_u55_shared: Path, tmp_path: Path) -> None:
    """bringup prints no usage lines: refused up front, not after a passing QEMU run."""
    from hostile import assert_refused, run_kit

    out = tmp_path / "fw"
    for option in ("--stack", "--heap"):
        result = run_kit("gen", "--pte", pte_u55_shared, "--app", "bringup", option, "auto",
                         "-o", out)  # fmt: skip
        assert_refused(result, "the bringup app reports no stack or heap use", absent=[out])


def test_a_failed_measuring_run_is_one_readable_line() -> None:
    """The UART tail goes into the one error line joined, not as escaped newlines."""
    from ethosu_kit.core.errors import KitError
    from ethosu_kit.firmware.measure import measurement_from_run

    uart = "selftest: board x\ndelegate 0: PASS\nE: HardFault\nKIT FAULT stack overflow\n"
    with pytest.raises(KitError) as err:
        measurement_from_run(uart, 16, app="selftest", npu="virtual", model_sha256="0", board="x")
    assert "\n" not in err.value.message
    assert err.value.message.endswith("delegate 0: PASS | E: HardFault | KIT FAULT stack overflow")


def test_a_failed_measurement_leaves_the_folder_as_it_was(
    pte_u55_shared: Path, tmp_path: Path
) -> None:
    """The measuring run fails (a self-test whose expected output is wrong exits 1): one
    `error:` line, non-zero exit, and the project generated before is byte for byte what
    it was (not the default-sized project the measurement built, not half of the new
    one); a folder that did not exist is not left behind."""
    import hashlib

    import numpy as np

    from hostile import assert_refused, run_kit

    need_cross_gcc()
    need_qemu()
    vectors = tmp_path / "v.npz"
    assert main(["simulate", str(pte_u55_shared), "-o", str(vectors)]) == 0
    arrays = dict(np.load(vectors))
    want = arrays["delegate0_output0"].reshape(-1)
    want[0] = np.int8(1 if want[0] != 1 else 2)
    bad = tmp_path / "bad.npz"
    np.savez(bad, **arrays)

    project = tmp_path / "fw"
    make_project(pte_u55_shared, project, stack="8KiB", app="selftest")

    def snapshot() -> dict[str, str]:
        return {
            str(p.relative_to(project)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(project.rglob("*"))
            if p.is_file()
        }

    before = snapshot()
    fresh = tmp_path / "new" / "fw"
    for out, absent in ((project, []), (fresh, [fresh.parent])):
        # -q: without it the progress lines (measuring: …) come before the error line
        result = run_kit("gen", "--pte", pte_u55_shared, "--app", "selftest", "--vectors", bad,
                         "--stack", "auto", "-q", "-o", out)  # fmt: skip
        assert_refused(result, "measuring selftest", "exit code 1", absent=absent)
    assert snapshot() == before
    assert not list(tmp_path.glob(".fw.*")), "no backup or temporary folder left"


def test_a_measurement_that_cannot_build_names_the_way_out(
    pte_u55_shared: Path, tmp_path: Path
) -> None:
    """The runner measured without the ExecuTorch checkout: one error line saying the
    build failed and why, a hint with the checkouts and the way round (sizes in bytes),
    and no "rerun by hand in <folder>": that folder is gen's work and gone."""
    from hostile import assert_refused, run_kit

    need_cross_gcc()
    need_qemu()  # without QEMU, gen refuses before building (nothing could run the image)
    out = tmp_path / "fw"
    env = {"EXECUTORCH_ROOT": str(tmp_path / "no-executorch-here")}
    # -q: without it the progress lines (measuring: …) come before the error line
    result = run_kit("gen", "--pte", pte_u55_shared, "--app", "executor_runner",
                     "--stack", "auto", "-q", "-o", out, env=env)  # fmt: skip
    line = assert_refused(result, "building executor_runner to measure it failed", absent=[out])
    assert "EXECUTORCH_ROOT" in line
    assert "rerun by hand" not in result.stderr and "EXECUTORCH_ROOT" in result.stderr


def test_method_pool_auto_is_the_runners(pte_u55_shared: Path, tmp_path: Path) -> None:
    """Only the executor_runner has a method pool: refused up front for the others."""
    from hostile import assert_refused, run_kit

    out = tmp_path / "fw"
    result = run_kit("gen", "--pte", pte_u55_shared, "--app", "selftest", "--method-pool",
                     "auto", "-o", out)  # fmt: skip
    assert_refused(result, "--method-pool auto: the selftest app has no method pool", absent=[out])


def test_method_pool_in_bytes_is_planned_and_said(pte_u55_shared: Path, tmp_path: Path) -> None:
    plan = json.loads(
        (
            make_project(pte_u55_shared, tmp_path / "fw", method_pool="1008").path
            / "memory_plan.json"
        ).read_text()
    )
    pool = next(b for b in plan["buffers"] if b["name"] == "method_pool")
    assert pool["size"] == 1008 and pool["why"] == "--method-pool 1008 (option)"


def test_runner_sized_from_a_measurement_and_a_short_method_pool_is_named(
    pte_u55_shared: Path, tmp_path: Path
) -> None:
    """executor_runner: `--stack auto --heap auto` sizes the method pool from the same run
    (no margin: the same allocations on every load); the sized image runs, and one with
    16 bytes less method pool stops at the load, naming the pool (exit code 3)."""
    from runner_build import EXTERNALS, require_externals

    require_externals(*EXTERNALS)
    need_qemu()
    project = make_project(
        pte_u55_shared, tmp_path / "fw", npu="virtual", stack="auto", heap="auto"
    ).path
    measured = json.loads((project / MEASURE_FILE).read_text())
    used = measured["pools"]["method_pool"][0]
    plan = json.loads((project / "memory_plan.json").read_text())
    pool = next(b for b in plan["buffers"] if b["name"] == "method_pool")
    assert pool["size"] == -(-used // 16) * 16 and "--method-pool auto:" in pool["why"]

    run = run_elf(build_project(project, app="executor_runner", npu="virtual"), timeout=120)
    assert run.exit_code == 0, run.output
    line = re.search(r"^usage: method_pool used (\d+) of (\d+) bytes", run.output, re.M)
    assert line and int(line.group(1)) == used and int(line.group(2)) == pool["size"], run.output

    make_project(
        pte_u55_shared,
        project,
        npu="virtual",
        stack="auto",
        heap="auto",
        method_pool=pool["size"] - 16,
    )
    run = run_elf(build_project(project, app="executor_runner", npu="virtual"), timeout=120)
    assert run.exit_code == 3, run.output
    assert "kit: method_pool too small" in run.output, run.output


def test_measured_with_the_compiler_it_is_built_with(pte_u55_shared: Path, tmp_path: Path) -> None:
    """Frames differ between compilers (clang's self-test needs far more stack than
    GCC's): `--toolchain clang` measures the clang build, the record says so, and a GCC
    record of the same app and pte is not taken for it."""
    import shutil

    need_cross_gcc()
    need_qemu()
    if shutil.which("clang-19") is None and shutil.which("clang") is None:
        pytest.skip("clang is not installed")
    from ethosu_kit.board.loader import load_board
    from ethosu_kit.firmware.fingerprint import firmware_fingerprint

    project = tmp_path / "fw"
    make_project(pte_u55_shared, project, app="selftest")
    sha = json.loads((project / "memory_plan.json").read_text())["model"]["sha256"]
    # a GCC record of today's firmware: refused for being GCC's, not for being stale
    firmware = firmware_fingerprint(load_board("corstone-300"), "selftest", "gcc", project)
    gcc_record = {"format": 2, "app": "selftest", "npu": "virtual", "board": "corstone-300",
                  "model_sha256": sha, "stack_used": 64, "stack_size": 16384, "heap_used": 0,
                  "heap_size": 32768, "pools": {}, "exit_code": 0, "toolchain": "gcc",
                  "firmware": firmware}  # fmt: skip
    (project / MEASURE_FILE).write_text(json.dumps(gcc_record))
    buffers = make_project(
        pte_u55_shared, project, stack="auto", toolchain="clang", app="selftest"
    ).buffers()
    measured = json.loads((project / MEASURE_FILE).read_text())
    assert measured["toolchain"] == "clang" and measured["stack_cpu"] > 64, measured
    assert "built with clang" in str(buffers["stack"]["why"])
    assert "(measured again: the record is of a gcc build)" in str(buffers["stack"]["why"])
    run = run_elf(build_project(project, app="selftest", npu="virtual", toolchain="clang"))
    assert run.exit_code == 0, run.output


def test_an_armv7m_stack_is_sized_with_its_mpu_guard(pte_u55_shared: Path, tmp_path: Path) -> None:
    """On a Cortex-M7 the start-up's MPU guard takes the stack's lowest 32 B and the mark
    counts from above it: --stack auto adds the guard, says so, and the image runs with
    the stack it was given (on the Armv8-M Corstone-300 above, no guard is added)."""
    need_cross_gcc()
    need_qemu()
    board = Path(__file__).parents[1] / "docs/examples/boards/mps2-an500"
    project = tmp_path / "fw"
    stack = make_project(
        pte_u55_shared, project, board=board, npu="virtual", stack="auto", app="selftest"
    ).buffers()["stack"]
    measured = json.loads((project / MEASURE_FILE).read_text())
    m = load_measurement(project, measured["model_sha256"], "selftest")
    assert m is not None
    assert stack["size"] == sized_stack(m, "virtual", 32) == sized_stack(m, "virtual") + 32
    assert "+ 32 B of MPU stack guard (Armv7-M)" in str(stack["why"]), stack
    run = run_elf(build_project(project, app="selftest", npu="virtual"), timeout=60)
    assert run.exit_code == 0, run.output
