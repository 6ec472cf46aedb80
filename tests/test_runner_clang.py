"""The executor_runner built with clang-19 + lld computes what the GCC build does.

clang's bare-metal driver has no C++ library: the kit's toolchain/clang.cmake gives it
the arm-none-eabi libstdc++ headers of the board's multilib and the link takes
libstdc++_nano/libsupc++_nano next to newlib-nano. One project of the example model,
built with both presets (`ethosu-kit build DIR --app executor_runner --toolchain …
--npu virtual`), run in QEMU on Corstone-300 with the virtual NPU: the same output
lines, value for value, and the same values through `run -o`.

Skipped, naming what is missing, without the checkouts (docs/executorch.md) or clang-19.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from projects import make_project
from runner_build import RunResult, build_with_cli, require_externals, run_qemu

pytestmark = [pytest.mark.firmware, pytest.mark.qemu, pytest.mark.slow]


@pytest.fixture(scope="module")
def elfs(pte_u55_shared: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    require_externals("EXECUTORCH_ROOT")
    if shutil.which("clang-19") is None and shutil.which("clang") is None:
        pytest.skip("clang-19 is not installed (apt-get install clang-19 lld-19)")
    if shutil.which("arm-none-eabi-g++") is None:
        pytest.skip("arm-none-eabi-g++ is not installed (its libstdc++ headers serve clang)")
    project = make_project(pte_u55_shared, tmp_path_factory.mktemp("runner_clang") / "fw").path
    elfs = {tc: build_with_cli(project, "virtual", toolchain=tc) for tc in ("gcc", "clang")}
    assert elfs["clang"] == project / "build/clang/executor_runner.elf", elfs
    return elfs


@pytest.fixture(scope="module")
def runs(elfs: dict[str, Path]) -> dict[str, RunResult]:
    out = {}
    for tc, elf in elfs.items():
        out[tc] = run_qemu(elf)
        assert out[tc].exit_code == 0, f"{tc}:\n{out[tc].uart}"
    return out


def test_clang_runner_prints_the_gcc_outputs(runs: dict[str, RunResult]) -> None:
    gcc, clang = runs["gcc"].outputs(), runs["clang"].outputs()
    assert gcc, runs["gcc"].uart
    assert clang == gcc, f"clang {clang}\ngcc {gcc}"


def test_clang_runner_io_equals_gcc(elfs: dict[str, Path], tmp_path: Path) -> None:
    """Every output value, through the semihosting file protocol, bit for bit."""
    x = np.random.default_rng(3).uniform(-1, 1, (1, 3, 16, 16)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    got = {}
    for tc, elf in elfs.items():
        out = tmp_path / f"{tc}.npz"
        ran = subprocess.run(
            ["ethosu-kit", "run", str(elf), "--inputs", str(tmp_path / "x.npy"), "-o", str(out)],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr
        got[tc] = np.load(out)
    assert sorted(got["clang"].files) == sorted(got["gcc"].files) == ["input0", "output0"]
    assert np.array_equal(got["clang"]["input0"], x)
    assert got["clang"]["output0"].tobytes() == got["gcc"]["output0"].tobytes()
