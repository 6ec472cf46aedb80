"""The executor_runner on the virtual NPU in QEMU computes what `ethosu-kit simulate` does.

One firmware build (`ethosu-kit build DIR --app executor_runner --npu virtual`, the
user's ExecuTorch checkout) of the kit's example model:

- its printed outputs, for the runner's default inputs (every float input element 1.0,
  quantized by the program's own quantize_per_tensor on the CPU), equal the host
  simulation of the delegate fed the same quantized integers, dequantized with the
  program's output parameters;
- the delegate's NPU scratch comes from the plan's temp pool, sized to the model;
- the virtual NPU's working memory is sized for the model on the host and placed in
  external RAM (DDR), not in the TCMs; too little of it stops the run with the bytes
  needed and available on the UART.

Skipped, naming what is missing, without EXECUTORCH_ROOT (docs/executorch.md).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ethosu_kit.cli import main
from ethosu_kit.vnpu.workspace import pte_workspace
from runner_build import RunResult, build_runner, generate, require_externals, run_qemu

pytestmark = [pytest.mark.firmware, pytest.mark.qemu, pytest.mark.slow]


def quant_params(pte: Path) -> dict[str, tuple[float, int, int, int]]:
    """(scale, zero point, qmin, qmax) of the method's CPU quantize and dequantize calls,
    read with ExecuTorch's own deserializer (the kit's reader does not decode scalars)."""
    serialize = pytest.importorskip("executorch.exir._serialize._program")
    pte_file = serialize.deserialize_pte_binary(pte.read_bytes())
    program = getattr(pte_file, "program", pte_file)
    plan = program.execution_plan[0]
    found: dict[str, tuple[float, int, int, int]] = {}
    for ins in plan.chains[0].instructions:
        args = ins.instr_args
        if type(args).__name__ != "KernelCall":
            continue
        name = plan.operators[args.op_index].name.split("::")[-1]
        vals: list[Any] = [plan.values[i].val for i in args.args[1:5]]
        found[name] = (
            float(vals[0].double_val),
            int(vals[1].int_val),
            int(vals[2].int_val),
            int(vals[3].int_val),
        )
    assert set(found) == {"quantize_per_tensor", "dequantize_per_tensor"}, found
    return found


@pytest.fixture(scope="module")
def firmware(pte_u55_shared: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(project, ELF): the example model's executor_runner built with NPU virtual."""
    require_externals("EXECUTORCH_ROOT")
    project = generate(pte_u55_shared, tmp_path_factory.mktemp("vnpu_fw") / "fw")
    result = subprocess.run(
        ["ethosu-kit", "build", str(project), "--app", "executor_runner", "--npu", "virtual"],
        capture_output=True,
        text=True,
        check=False,
        timeout=1800,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    elf = Path(result.stdout.strip().splitlines()[-1])
    assert elf.is_file(), result.stdout
    return project, elf


@pytest.fixture(scope="module")
def run(firmware: tuple[Path, Path]) -> RunResult:
    result = run_qemu(firmware[1])
    assert result.exit_code == 0, result.uart
    return result


def test_runner_outputs_equal_host_simulation(
    pte_u55_shared: Path, firmware: tuple[Path, Path], run: RunResult, tmp_path: Path
) -> None:
    q = quant_params(pte_u55_shared)
    scale, zp, qmin, qmax = q["quantize_per_tensor"]
    info = json.loads((firmware[0] / "model_info.json").read_text())
    shape = info["methods"][0]["inputs"][0]["shape"]
    # ExecuTorch's quantize kernel: zp + nearbyint(value * (float)(1 / scale)), clamped
    inv = np.float32(1.0 / scale)
    ones = np.clip(np.rint(np.float32(1.0) * inv) + zp, qmin, qmax).astype(np.int8)
    np.save(tmp_path / "ones.npy", np.full(shape, ones, dtype=np.int8))
    assert main(["simulate", str(pte_u55_shared), "--inputs", str(tmp_path / "ones.npy"),
                 "-o", str(tmp_path / "host.npz")]) == 0  # fmt: skip
    with np.load(tmp_path / "host.npz") as saved:
        host = saved["delegate0_output0"].reshape(-1).astype(np.int64)

    (out,) = run.outputs()
    assert out.count == host.size
    o_scale, o_zp, _, _ = q["dequantize_per_tensor"]
    printed = np.array(out.values)
    # the runner prints dequantized floats with 6 decimals: back to the integers exactly
    as_ints = np.rint(printed / o_scale).astype(np.int64) + o_zp
    assert as_ints.tolist() == host[: len(printed)].tolist(), run.uart
    expected = (host[: len(printed)] - o_zp).astype(np.float32) * np.float32(o_scale)
    assert np.allclose(printed, expected, atol=1.5e-6, rtol=0), run.uart
    assert len(set(as_ints.tolist())) > 2, "a constant output would agree for the wrong reasons"
    print(f"runner == host simulation on {len(printed)} of {out.count} outputs: {as_ints.tolist()}")


def test_scratch_from_the_temp_pool(firmware: tuple[Path, Path], run: RunResult) -> None:
    """The delegate takes its NPU scratch from the plan's temp pool, sized to the model."""
    info = json.loads((firmware[0] / "model_info.json").read_text())
    peak, size = run.pools()["temp_pool"]
    assert peak >= info["peak_scratch"], "the delegate took its NPU scratch from the temp pool"
    assert size - peak <= 32, f"temp pool {size} B for a {peak} B peak: not sized from the model"


def test_workspace_sized_for_the_model_in_external_ram(
    pte_u55_shared: Path, firmware: tuple[Path, Path]
) -> None:
    from elftools.elf.elffile import ELFFile

    from ethosu_kit.board_loader import load_board

    need = pte_workspace(pte_u55_shared)
    with firmware[1].open("rb") as f:
        section = ELFFile(f).get_section_by_name(".kit.vnpu_workspace")
        assert section is not None, "no .kit.vnpu_workspace section"
        addr, size = section["sh_addr"], section["sh_size"]
    assert size == need, f"workspace {size} B, the model needs {need} B"
    dram = [r for r in load_board("cs300").regions if r.kind.value == "dram"]
    assert any(r.base <= addr and addr + size <= r.base + r.size for r in dram), hex(addr)
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
