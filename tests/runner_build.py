"""Helpers of the executor_runner tests: build with the user's ExecuTorch, run (projects
are made with tests/projects.py).

The full link needs the sources the kit never ships; they come from the environment
(EXECUTORCH_ROOT, ETHOSU_DRIVER_ROOT, CMSIS_ROOT, see docs/executorch.md) and a test
that lacks one skips naming it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

EXTERNALS = ("EXECUTORCH_ROOT", "ETHOSU_DRIVER_ROOT", "CMSIS_ROOT")
QEMU = "qemu-system-arm"
OUTPUT_LINE = re.compile(
    r"^kit: output (\d+): (\w+) \[([0-9, ]*)\] (\d+) of (\d+) values:(.*)$", re.MULTILINE
)
POOL_LINE = re.compile(r"^kit: pool (\S+) (used|peak) (\d+) / (\d+) bytes", re.MULTILINE)


def require_externals(*names: str) -> dict[str, str]:
    """The environment for a build with the user's checkouts, or skip naming what is missing."""
    missing = [n for n in names if not os.environ.get(n)]
    if missing:
        pytest.skip(
            f"{', '.join(missing)} not set: the executor_runner link needs the user's "
            "checkouts (docs/executorch.md)"
        )
    for tool in ("cmake", "ninja", "arm-none-eabi-gcc"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed")
    return {n: os.environ[n] for n in names}


def build_runner(project: Path, npu: str, *defines: str, timeout: float = 1800) -> Path:
    """cmake --preset gcc + build of the executor_runner; returns the ELF."""
    configure = [
        "cmake",
        "--preset",
        "gcc",
        "-DETHOSU_KIT_APP=executor_runner",
        f"-DETHOSU_KIT_NPU={npu}",
        *(f"-D{d}" for d in defines),
    ]
    # (command, how much of its stdout a failure shows): the build's log is the longer
    for argv, stdout_tail in ((configure, 4000), (["cmake", "--build", "build/gcc", "-j2"], 6000)):
        step = subprocess.run(
            argv, cwd=project, capture_output=True, text=True, check=False, timeout=timeout
        )
        assert step.returncode == 0, step.stdout[-stdout_tail:] + step.stderr[-4000:]
    elf = project / "build/gcc/executor_runner.elf"
    assert elf.is_file()
    return elf


def build_with_cli(project: Path, npu: str, timeout: float = 1800, toolchain: str = "gcc") -> Path:
    """`ethosu-kit build DIR --app executor_runner --npu NPU [--toolchain T]`: the user's
    path; the ELF."""
    argv = ["ethosu-kit", "build", str(project), "--app", "executor_runner", "--npu", npu]
    result = subprocess.run(
        [*argv, "--toolchain", toolchain],
        capture_output=True,
        text=True,
        check=False,
        timeout=timeout,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    elf = Path(result.stdout.strip().splitlines()[-1])
    assert elf.is_file(), result.stdout
    return elf


@dataclass(frozen=True)
class RunnerOutput:
    index: int
    dtype: str
    shape: tuple[int, ...]
    count: int
    values: tuple[float, ...]


@dataclass(frozen=True)
class RunResult:
    exit_code: int
    uart: str

    def outputs(self) -> list[RunnerOutput]:
        found = []
        for m in OUTPUT_LINE.finditer(self.uart):
            shape = tuple(int(s) for s in m.group(3).split(",") if s.strip())
            values = tuple(float(v) for v in m.group(6).split())
            found.append(RunnerOutput(int(m.group(1)), m.group(2), shape, int(m.group(5)), values))
        return found

    def pools(self) -> dict[str, tuple[int, int]]:
        return {
            m.group(1): (int(m.group(3)), int(m.group(4))) for m in POOL_LINE.finditer(self.uart)
        }


def run_qemu(elf: Path, timeout: float = 60) -> RunResult:
    if shutil.which(QEMU) is None:
        pytest.skip(f"{QEMU} is not installed")
    result = subprocess.run(
        [
            QEMU,
            "-M",
            "mps3-an547",
            "-cpu",
            "cortex-m55",
            "-nographic",
            "-monitor",
            "none",
            "-serial",
            "stdio",
            "-semihosting-config",
            "enable=on,target=native",
            "-kernel",
            str(elf),
        ],
        capture_output=True,
        # strict UTF-8: garbage on the UART fails the run (ExecuTorch's log formats
        # go through the kit's vsnprintf, __wrap_vsnprintf in executorch_pal.cpp)
        text=True,
        check=False,
        timeout=timeout,
    )
    return RunResult(result.returncode, result.stdout + result.stderr)
