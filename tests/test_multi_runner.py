"""The executor_runner of an image of several programs, one of them with two methods
(issue 18), on the virtual NPU in QEMU, with the ExecuTorch checkouts (skipped without).

One build per board: Corstone-300 (Ethos-U55 Shared_Sram: `kws`, the example CNN, `tio`,
two inputs and three outputs, and `codec`, methods `encode` and `decode`) and
Corstone-320 on its QEMU stand-in (Ethos-U85 Dedicated_Sram: `person` and `io`). The
runner runs every program and method by default; then, for each program and method by
name, `run
--program P --method M --inputs x -o run.npz` equals `simulate PROJECT --program P
--method M --inputs x` on the delegate (0 LSB, by `ethosu-kit compare` with the program's
own scales).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from ethosu_kit.pte import read_pte
from hostile import assert_refused, run_kit
from multi_models import two_method_pte
from runner_build import build_with_cli, require_externals

PTE = Path(__file__).resolve().parent / "data" / "pte"
# board -> the (program, method) pairs its image runs
RUNS = {
    "cs300": (("kws", "forward"), ("tio", "forward"), ("codec", "encode"), ("codec", "decode")),
    "cs320": (("person", "forward"), ("io", "forward")),
}
CASES = [(board, program, method) for board, runs in RUNS.items() for program, method in runs]

pytestmark = [pytest.mark.firmware, pytest.mark.qemu, pytest.mark.slow]


_BUILT: dict[str, tuple[Path, Path]] = {}


def firmware(board: str, request: pytest.FixtureRequest, root: Path) -> tuple[Path, Path]:
    """(project, ELF) of the board's image's executor_runner, NPU virtual, built once."""
    require_externals("EXECUTORCH_ROOT", "ETHOSU_DRIVER_ROOT", "CMSIS_ROOT")
    if board in _BUILT:
        return _BUILT[board]
    from ethosu_kit.aot.lowering import Target
    from ethosu_kit.cli.app import main as kit_main

    if board == "cs300":
        codec = root / "codec.pte"
        shutil.copyfile(two_method_pte(Target("ethos-u55-128", memory_mode="Shared_Sram")), codec)
        programs = [f"kws={PTE / 'u55_shared.pte'}", f"tio={PTE / 'two_io.pte'}", str(codec)]
        options = ["--board", "corstone-300"]
    else:
        io = request.getfixturevalue("pte_u85_dedicated_io")
        programs = [f"person={PTE / 'u85_dedicated.pte'}", f"io={io}"]
        options = ["--board", "corstone-320", "--qemu-stand-in"]
    argv: list[str] = []
    for p in programs:
        argv += ["--pte", p]
    project = root / board
    assert kit_main(["gen", *argv, *options, "--npu", "virtual", "-o", str(project), "-q"]) == 0
    _BUILT[board] = (project, build_with_cli(project, "virtual"))
    return _BUILT[board]


@pytest.mark.parametrize("board", ["cs300", "cs320"])
def test_runs_every_program_and_method_by_default(
    request: pytest.FixtureRequest, root: Path, board: str
) -> None:
    _, elf = firmware(board, request, root)
    result = run_kit("run", elf, timeout=120)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr
    for name, method in RUNS[board]:
        assert f"kit: program {name}," in result.stdout
        assert f'kit: method "{method}" loaded' in result.stdout


@pytest.mark.parametrize("case", CASES, ids=["-".join(c) for c in CASES])
def test_runner_equals_simulate(
    request: pytest.FixtureRequest, root: Path, tmp_path: Path, case: tuple[str, str, str]
) -> None:
    board, program, method = case
    project, elf = firmware(board, request, root)
    pte = project / "generated" / f"{program}.pte"
    (meth,) = [m for m in read_pte(pte).methods if m.name == method]
    rng = np.random.default_rng(11)
    inputs = []
    for i, t in enumerate(meth.inputs):
        path = tmp_path / f"x{i}.npy"
        np.save(path, rng.uniform(-1, 1, t.shape).astype(t.dtype))
        inputs.append(path)
    run = run_kit(
        "run", elf, "--program", program, "--method", method, "--inputs", *inputs,
        "-o", tmp_path / "run.npz", timeout=120,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr
    assert f'kit: method "{method}" loaded' in run.stdout
    sim = run_kit(
        "simulate", project, "--program", program, "--method", method, "--inputs", *inputs,
        "-o", tmp_path / "sim.npz",
    )  # fmt: skip
    assert sim.returncode == 0, sim.stderr
    same = run_kit(
        "compare", tmp_path / "run.npz", tmp_path / "sim.npz", "--pte", pte, "--method", method
    )
    assert same.returncode == 0, same.stdout + same.stderr
    assert "max 0 LSB" in same.stdout and "COMPARE PASS" in same.stdout, same.stdout
    print(f"{program}.{method}: runner == simulate, {same.stdout.strip().splitlines()[-1]}")


def test_unknown_names_are_refused(request: pytest.FixtureRequest, root: Path) -> None:
    _, elf = firmware("cs300", request, root)
    assert_refused(run_kit("run", elf, "--program", "nope"), "no program named 'nope'")
    assert_refused(
        run_kit("run", elf, "--program", "codec", "--method", "nope"),
        "program codec has no method 'nope'",
    )
    assert_refused(run_kit("run", elf, "-o", elf.with_name("o.npz")), "name one")
