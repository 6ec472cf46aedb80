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
from projects import make_project
from runner_build import (
    RunResult,
    build_runner,
    build_with_cli,
    require_externals,
    run_qemu,
)
from vnpu_support import runner_equals_simulation

pytestmark = [pytest.mark.firmware, pytest.mark.qemu, pytest.mark.slow]


@pytest.fixture(scope="module")
def firmware(pte_u55_shared: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(project, ELF): the example model's executor_runner built with NPU virtual."""
    require_externals("EXECUTORCH_ROOT")
    project = make_project(pte_u55_shared, tmp_path_factory.mktemp("vnpu_fw") / "fw").path
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

    from ethosu_kit.plan.types import MemoryPlan, Role

    need = pte_workspace(pte_u55_shared)
    plan = MemoryPlan.from_json(firmware[0] / "memory_plan.json")
    (buf,) = plan.by_role(Role.VNPU_WORKSPACE)
    assert buf.size == (need + 15) // 16 * 16, f"workspace {buf.size} B, the model needs {need} B"
    with firmware[1].open("rb") as f:
        section = ELFFile(f).get_section_by_name(buf.section)
        assert section is not None, f"no {buf.section} section"
        addr, size = section["sh_addr"], section["sh_size"]
    assert size == buf.size
    assert plan.board.region(buf.region).contains(addr, size), hex(addr)
    assert (
        subprocess.run(["ethosu-kit", "check-elf", str(firmware[1])], check=False).returncode == 0
    )


def _kit(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ethosu-kit", *args], capture_output=True, text=True, check=False)


@pytest.fixture(scope="module")
def io_run(
    pte_u55_shared: Path, firmware: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, Path, Path]:
    """(input .npy, run -o result, simulate -o result): one input through the runner in
    QEMU (semihosting file IO) and the same input, quantized, through simulate."""
    import numpy as np

    from ethosu_kit.pte.quant import io_quantization

    folder = tmp_path_factory.mktemp("runner_io")
    x = np.random.default_rng(7).uniform(-1, 1, (1, 3, 16, 16)).astype(np.float32)
    np.save(folder / "x.npy", x)
    ran = _kit(
        "run", str(firmware[1]), "--inputs", str(folder / "x.npy"), "-o", str(folder / "run.npz")
    )
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr
    assert "kit: input 0: 3072 bytes from kit_input_0.bin" in ran.stdout, ran.stdout
    (qin,), _ = io_quantization(pte_u55_shared)
    assert qin is not None
    q = np.clip(np.round(x / qin.scale) + qin.zero_point, -128, 127).astype(np.int8)
    np.save(folder / "xq.npy", q)
    sim = _kit(
        "simulate",
        str(pte_u55_shared),
        "--inputs",
        str(folder / "xq.npy"),
        "-o",
        str(folder / "sim.npz"),
    )
    assert sim.returncode == 0, sim.stderr
    return folder / "x.npy", folder / "run.npz", folder / "sim.npz"


def test_runner_io_equals_simulate(pte_u55_shared: Path, io_run: tuple[Path, Path, Path]) -> None:
    """`run --inputs x.npy -o out.npz` equals `simulate` on the delegate, bit for bit:
    compare quantizes the runner's float input/output with the program's own scales."""
    _, run_npz, sim_npz = io_run
    same = _kit("compare", str(run_npz), str(sim_npz), "--pte", str(pte_u55_shared))
    assert same.returncode == 0, same.stdout + same.stderr
    assert "run.npz[output0] vs sim.npz[delegate0_output0]: max 0 LSB" in same.stdout, same.stdout
    assert "COMPARE PASS (2 of 2)" in same.stdout


def test_runner_io_matches_the_quantized_pytorch_model(
    pte_u55_shared: Path, io_run: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    """Within 1 LSB of the quantized PyTorch graph the delegate was compiled from."""
    import numpy as np
    import torch

    from ethosu_kit.aot.lowering import quantized_graph
    from models import MODELS

    model = MODELS["u55_shared"]
    module, inputs, calibration = model.build()
    graph = quantized_graph(module, inputs, model.target, calibration=calibration)
    x_path, run_npz, _ = io_run
    with torch.no_grad():
        ref = graph(torch.from_numpy(np.load(x_path)))
    np.savez(tmp_path / "ref.npz", output0=ref.numpy())
    close = _kit(
        "compare",
        str(run_npz),
        str(tmp_path / "ref.npz"),
        "--pte",
        str(pte_u55_shared),
        "--lsb",
        "1",
    )
    assert close.returncode == 0, close.stdout + close.stderr
    exact = _kit("compare", str(run_npz), str(tmp_path / "ref.npz"), "--pte", str(pte_u55_shared))
    print(close.stdout + exact.stdout)


def test_runner_reports_measured_stack_heap_and_pools(run: RunResult) -> None:
    import re

    usage = dict(
        (m.group(1), (int(m.group(2)), int(m.group(3))))
        for m in re.finditer(r"^usage: (\w+) used (\d+) of (\d+) bytes", run.uart, re.M)
    )
    assert {"stack", "heap", "method_pool", "temp_pool"} <= set(usage), run.uart
    used, size = usage["stack"]
    assert 0 < used < size, usage


def test_run_o_without_inputs_saves_the_inputs_used(
    pte_u55_shared: Path, firmware: tuple[Path, Path], tmp_path: Path
) -> None:
    """`run -o` without --inputs: the runner fills its inputs itself (every element 1)
    and sends them back, so out.npz holds input0 and `simulate --inputs out.npz`
    reproduces its outputs bit for bit."""
    import numpy as np

    out = tmp_path / "run.npz"
    ran = _kit("run", str(firmware[1]), "-o", str(out))
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr
    assert "kit: input 0: wrote kit_input_0.bin 3072 bytes" in ran.stdout, ran.stdout
    saved = np.load(out)
    assert sorted(saved.files) == ["input0", "output0"]
    assert saved["input0"].dtype == np.float32 and saved["input0"].shape == (1, 3, 16, 16)
    assert np.all(saved["input0"] == 1.0)
    sim = _kit("simulate", str(pte_u55_shared), "--inputs", str(out), "-o", str(tmp_path / "s.npz"))
    assert sim.returncode == 0, sim.stderr
    same = _kit("compare", str(out), str(tmp_path / "s.npz"), "--pte", str(pte_u55_shared))
    assert same.returncode == 0, same.stdout + same.stderr
    assert "run.npz[output0] vs s.npz[delegate0_output0]: max 0 LSB" in same.stdout, same.stdout


def test_compiled_in_inputs(
    pte_u55_shared: Path, firmware: tuple[Path, Path], io_run: tuple[Path, Path, Path]
) -> None:
    """gen --inputs x.npy compiles the input in (planned, outside the TCMs); the runner
    takes it and computes what the host-IO run did."""
    import numpy as np

    project, _ = firmware
    x_path, run_npz, _ = io_run
    make_project(pte_u55_shared, project, inputs=x_path, npu="virtual")
    plan = json.loads((project / "memory_plan.json").read_text())
    (buf,) = [b for b in plan["buffers"] if b["name"] == "input_data_0"]
    assert buf["region"] not in ("ITCM", "DTCM") and buf["size"] == 3072, buf
    elf = build_with_cli(project, "virtual")
    out = run_qemu(elf)
    assert out.exit_code == 0, out.uart
    assert "kit: input 0: 3072 bytes from kit_input_data.h" in out.uart, out.uart
    want = np.load(run_npz)["output0"].reshape(-1)
    (got,) = out.outputs()
    assert np.allclose(np.array(got.values), want, atol=1e-6), (got.values, want)
    # run -o without --inputs saves the compiled-in input the runner used: x itself
    saved_npz = x_path.parent / "compiled_in.npz"
    ran = _kit("run", str(elf), "-o", str(saved_npz))
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr
    saved = np.load(saved_npz)
    assert np.array_equal(saved["input0"], np.load(x_path))
    assert saved["output0"].tobytes() == np.load(run_npz)["output0"].tobytes()


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
