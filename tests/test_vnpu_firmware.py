"""The executor_runner on the virtual NPU in QEMU computes what `ethosu-kit simulate` does.

One firmware build (`ethosu-kit build DIR --app executor_runner --npu virtual`, the
user's ExecuTorch checkout) of the kit's example model:

- its printed outputs, for the runner's default inputs (every float input element 1.0,
  quantized by the program's own quantize_per_tensor on the CPU), equal the host
  simulation of the delegate fed the same quantized integers, dequantized with the
  program's output parameters;
- the delegate's NPU scratch comes from the plan's temp pool, sized to the model;
- the virtual NPU's working memory is a buffer of the plan (build --npu virtual
  re-plans the driver project), sized for the model on the host; too little of it
  stops the run with the bytes needed and available on the UART.

Skipped, naming what is missing, without EXECUTORCH_ROOT (docs/executorch.md).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from ethosu_kit.vnpu.workspace import pte_workspace
from runner_build import (
    RunResult,
    build_runner,
    build_with_cli,
    generate,
    require_externals,
    run_qemu,
)
from vnpu_support import runner_equals_simulation

pytestmark = [pytest.mark.firmware, pytest.mark.qemu, pytest.mark.slow]


@pytest.fixture(scope="module")
def firmware(pte_u55_shared: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(project, ELF): the example model's executor_runner built with NPU virtual."""
    require_externals("EXECUTORCH_ROOT")
    project = generate(pte_u55_shared, tmp_path_factory.mktemp("vnpu_fw") / "fw")
    return project, build_with_cli(project, "virtual")


@pytest.fixture(scope="module")
def run(firmware: tuple[Path, Path]) -> RunResult:
    result = run_qemu(firmware[1])
    assert result.exit_code == 0, result.uart
    return result


def test_runner_outputs_equal_host_simulation(
    pte_u55_shared: Path, firmware: tuple[Path, Path], run: RunResult, tmp_path: Path
) -> None:
    same = runner_equals_simulation(pte_u55_shared, firmware[0], run, tmp_path)
    print(f"runner == host simulation on {len(same)} outputs: {same}")


def test_scratch_from_the_temp_pool(firmware: tuple[Path, Path], run: RunResult) -> None:
    """The delegate takes its NPU scratch from the plan's temp pool, sized to the model."""
    info = json.loads((firmware[0] / "model_info.json").read_text())
    peak, size = run.pools()["temp_pool"]
    assert peak >= info["peak_scratch"], "the delegate took its NPU scratch from the temp pool"
    assert size - peak <= 32, f"temp pool {size} B for a {peak} B peak: not sized from the model"


def test_workspace_is_a_planned_buffer_sized_for_the_model(
    pte_u55_shared: Path, firmware: tuple[Path, Path]
) -> None:
    """`build --npu virtual` re-plans a driver project: the virtual NPU's working memory
    becomes the plan's buffer vnpu_workspace, measured for the model and fit-checked,
    and check-elf proves it where the plan put it."""
    from elftools.elf.elffile import ELFFile

    from ethosu_kit.memory_plan import MemoryPlan, Role

    need = pte_workspace(pte_u55_shared)
    plan = MemoryPlan.from_json(firmware[0] / "memory_plan.json")
    (buf,) = plan.by_role(Role.VNPU_WORKSPACE)
    assert buf.size == need, f"workspace {buf.size} B, the model needs {need} B"
    with firmware[1].open("rb") as f:
        section = ELFFile(f).get_section_by_name(buf.section)
        assert section is not None, f"no {buf.section} section"
        addr, size = section["sh_addr"], section["sh_size"]
    assert size == need
    assert plan.board.region(buf.region).contains(addr, size), hex(addr)
    assert (
        subprocess.run(["ethosu-kit", "check-elf", str(firmware[1])], check=False).returncode == 0
    )


def test_too_small_workspace_names_needed_and_available_bytes(
    pte_u55_shared: Path, firmware: tuple[Path, Path]
) -> None:
    project, _ = firmware
    need = pte_workspace(pte_u55_shared)
    small = need // 4 // 16 * 16
    # last in the file: it reconfigures the shared build (only the NPU library recompiles)
    result = run_qemu(build_runner(project, "virtual", f"ETHOSU_VIRTUAL_WORKSPACE_SIZE={small}"))
    assert result.exit_code == 5, result.uart
    assert f"the virtual NPU has {small}" in result.uart, result.uart
    assert "bytes of working memory" in result.uart
