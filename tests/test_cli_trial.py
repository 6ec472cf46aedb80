"""What a new user's first session hit, through the real CLI (`python -m ethosu_kit`).

The self-test with the virtual NPU (no external checkouts) on the example model:
`gen --stack auto` says what it measures and counts what it wrote against the folder as
it was; `build` takes the NPU the project was generated for and has the `--force` its
hint names; `run` refuses host IO to an app that takes none before QEMU starts; sizes
that are no stack, heap or pool are refused by number; `--stack auto` on an image QEMU
cannot run is refused before anything is built.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from fw_helpers import need_cross_gcc, need_qemu
from hostile import Result, assert_refused, parse_args, run_kit

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def measured(pte_u55_shared: Path, tmp_path_factory: pytest.TempPathFactory) -> Result:
    """gen --stack auto of the self-test for the virtual NPU, into a new folder."""
    need_cross_gcc()
    need_qemu()
    out = tmp_path_factory.mktemp("trial") / "fw"
    result = run_kit("gen", "--pte", pte_u55_shared, "--app", "selftest", "--npu", "virtual",
                     "--stack", "auto", "-o", out, timeout=600)  # fmt: skip
    assert result.returncode == 0, result
    return result


def _project(result: Result) -> Path:
    return Path(result.stdout.splitlines()[-1])


@pytest.fixture(scope="module")
def selftest_elf(measured: Result) -> Path:
    """`ethosu-kit build fw --app selftest`, no --npu: the project's own (virtual)."""
    result = run_kit("build", _project(measured), "--app", "selftest", timeout=600)
    assert result.returncode == 0, result
    return Path(result.stdout.splitlines()[-1])


@pytest.mark.firmware
@pytest.mark.qemu
def test_stack_auto_says_what_it_measures_and_what_it_wrote(
    measured: Result, pte_u55_shared: Path
) -> None:
    project = _project(measured)
    # progress on stderr while it builds and runs (the runner's first build takes minutes)
    assert re.search(r"^measuring: building selftest \(gcc, NPU virtual\) in .*fw …$",
                     measured.stderr, re.M), measured.stderr  # fmt: skip
    assert "measuring: running selftest in QEMU …" in measured.stderr, measured.stderr
    # a folder it just made: every file written (as a plain gen says it), none unchanged,
    # nothing "of yours" (its own build/ and measured_usage.json are not the user's)
    files = len(json.loads((project / ".ethosu-kit/manifest.json").read_text())["files"])
    summary = measured.stdout.splitlines()[-2]
    assert summary == f"{files} file(s) written, 0 unchanged", summary
    # a plan for the virtual NPU takes the whole mark: no word of the Arm driver's path
    plan = json.loads((project / "memory_plan.json").read_text())
    why = next(b["why"] for b in plan["buffers"] if b["name"] == "stack")
    assert why.startswith("--stack auto: ") and "Arm driver" not in why, why
    # -q: nothing on stderr (the record is reused: no build), only the path on stdout
    quiet = run_kit("gen", "--pte", pte_u55_shared, "--app", "selftest", "--npu", "virtual",
                    "--stack", "auto", "-q", "-o", project, timeout=600)  # fmt: skip
    assert quiet.returncode == 0 and quiet.stderr == "", quiet
    assert quiet.stdout.splitlines() == [str(project)], quiet


@pytest.mark.firmware
@pytest.mark.qemu
def test_build_takes_the_npu_the_project_was_generated_for(selftest_elf: Path) -> None:
    cache = (selftest_elf.parent / "CMakeCache.txt").read_text()
    assert "ETHOSU_KIT_NPU:STRING=virtual" in cache
    result = run_kit("run", selftest_elf, timeout=120)
    assert result.returncode == 0 and "SELFTEST PASS" in result.stdout, result


@pytest.mark.firmware
@pytest.mark.qemu
def test_run_refuses_host_io_to_the_selftest_before_qemu(
    selftest_elf: Path, tmp_path: Path
) -> None:
    x = tmp_path / "x.npy"
    np.save(x, np.zeros((1, 3, 16, 16), np.float32))
    out = tmp_path / "out.npz"
    result = run_kit("run", selftest_elf, "--inputs", x, "-o", out)
    line = assert_refused(result, "--inputs/-o: the selftest app takes no inputs", absent=[out])
    assert "selftest" in line and result.stdout == "", "QEMU must not have started"
    assert "--vectors" in result.stderr


@pytest.mark.firmware
def test_a_renamed_elf_is_told_which_plan_to_copy_and_as_what(
    selftest_elf: Path, tmp_path: Path
) -> None:
    elf = tmp_path / "s3.elf"
    shutil.copy(selftest_elf, elf)
    result = run_kit("check-elf", elf)
    assert_refused(result, "no memory_plan.json found near it")
    assert "build/<toolchain>/selftest.memory_plan.json next to it as s3.memory_plan.json" in (
        result.stderr
    ), result
    plan = selftest_elf.with_name("selftest.memory_plan.json")
    shutil.copy(plan, tmp_path / "s3.memory_plan.json")
    assert run_kit("check-elf", elf, "-q").returncode == 0


@pytest.mark.firmware
def test_build_has_the_force_its_hint_names(pte_u55_shared: Path, tmp_path: Path) -> None:
    need_cross_gcc()
    out = tmp_path / "fw"
    assert run_kit("gen", "--pte", pte_u55_shared, "-q", "-o", out).returncode == 0
    header = out / "generated" / "kit_memory_config.h"
    header.write_text(header.read_text() + "/* my tweak */\n")
    # --npu virtual re-plans a driver project: the edited header stops it, naming --force
    result = run_kit("build", out, "--app", "bringup", "--npu", "virtual")
    assert_refused(result, "generated/kit_memory_config.h")
    assert "--force" in result.stderr
    forced = run_kit("build", out, "--app", "bringup", "--npu", "virtual", "--force", timeout=600)
    assert forced.returncode == 0, forced
    assert "my tweak" not in header.read_text()


@pytest.mark.parametrize(
    ("option", "value", "said"),
    [
        ("--stack", "0", "0 bytes is below the smallest stack (1024 bytes): use 1024 or more"),
        ("--stack", "7", "7 bytes is below the smallest stack (1024 bytes): use 1024 or more"),
        (
            "--stack",
            "2052",
            "2052 bytes is not a multiple of 8 (the stack's alignment): use 2048 or 2056",
        ),
        ("--heap", "0", "0 bytes is below the smallest heap (8 bytes): use 8 or more"),
        ("--heap", "12", "12 bytes is not a multiple of 8 (the heap's alignment): use 8 or 16"),
        (
            "--method-pool",
            "1000",
            "1000 bytes is not a multiple of 16 (the method pool's alignment): use 992 or 1008",
        ),
        ("--method-pool", "0", "0 bytes is below the smallest method pool (16 bytes)"),
    ],
)
def test_a_size_that_is_no_stack_heap_or_pool_is_refused(
    tmp_path: Path, option: str, value: str, said: str
) -> None:
    """argparse's size types refuse it before the .pte is read (so none is needed)."""
    out = tmp_path / "fw"
    result = parse_args("gen", "--pte", tmp_path / "model.pte", option, value, "-o", out)
    assert_refused(result, f"argument {option}: {said}", absent=[out], code=2)


def test_stack_auto_on_an_image_qemu_cannot_run_is_refused_before_building(
    pte_u85_shared: Path, pte_u55_shared: Path, tmp_path: Path
) -> None:
    out = tmp_path / "fw"
    # Corstone-320's own map: its BRAM is where QEMU's stand-in machine has no memory
    result = run_kit("gen", "--pte", pte_u85_shared, "--board", "cs320", "--app", "selftest",
                     "--stack", "auto", "--heap", "auto", "-o", out)  # fmt: skip
    assert_refused(
        result,
        "--stack/--heap auto measures the selftest app in a QEMU run, and QEMU cannot run this "
        "image: its BRAM at 0x12000000 is outside the memory QEMU's mps3-an547 has",
        absent=[out],
    )
    assert "--qemu-stand-in" in result.stderr and "--stack N --heap N" in result.stderr
    assert "measuring:" not in result.stderr

    # a board folder whose data names no QEMU machine
    board = tmp_path / "board"
    board.mkdir()
    text = (REPO / "boards" / "corstone-300" / "board.toml").read_text()
    text = re.sub(r"^\[qemu\].*?(?=^\[)", "", text, flags=re.M | re.S)
    assert "[qemu]" not in text
    (board / "board.toml").write_text(text)
    result = run_kit("gen", "--pte", pte_u55_shared, "--board", board, "--app",
                     "executor_runner", "--stack", "auto", "-o", out)  # fmt: skip
    assert_refused(result, "names no QEMU machine ([qemu] machine)", absent=[out])
    assert "--qemu-stand-in" not in result.stderr
    assert "--stack N --heap N --method-pool N" in result.stderr


def test_gen_refuses_inputs_the_selftest_never_reads(pte_u55_shared: Path, tmp_path: Path) -> None:
    x = tmp_path / "x.npy"
    np.save(x, np.zeros((1, 3, 16, 16), np.float32))
    out = tmp_path / "fw"
    result = run_kit("gen", "--pte", pte_u55_shared, "--app", "selftest", "--inputs", x,
                     "-o", out)  # fmt: skip
    assert_refused(result, "--inputs: the selftest app does not read the method's inputs",
                   absent=[out])  # fmt: skip
    assert "--vectors" in result.stderr
