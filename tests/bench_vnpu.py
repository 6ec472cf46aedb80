"""Benchmark: the virtual NPU's time per inference next to tosa_reference_model on the same graph.

Prints, per model: NPU operations in the stream, virtual-NPU µs per inference (the
whole delegate as a caller running it repeatedly has it, `PreparedDelegate`: IO copies,
command decode, execution; `run_delegate`'s figure beside it), tosa_reference_model µs per
inference of the TOSA graph Vela compiled, and the ratio, MET / NOT MET against the goal
of issue 21 (RATIO_GOAL); for the MobileNet-sized models also the multiply-accumulates
per inference and GMAC/s against GMACS_GOAL. Figures only: nothing here asserts a speed
(the machine may be shared). With EXECUTORCH_ROOT: the executor_runner + virtual NPU in
QEMU on MobileNetV2 224x224, QEMU's CPU time against QEMU_GOAL_S, the virtual NPU built
both ways (ETHOSU_VIRTUAL_VECTORIZE). Run with `pytest -s -m benchmark tests/bench_vnpu.py`.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import numpy as np
import pytest

from ethosu_kit.pte import VelaBlocks, read_vela_streams
from ethosu_kit.vnpu import PreparedDelegate, VirtualNpu, run_delegate
from ethosu_kit.vnpu.delegate import random_inputs
from ethosu_kit.vnpu.npu import disassemble
from models import lowered_cache_root
from projects import make_project
from runner_build import RunResult, build_with_cli, require_externals, run_qemu
from vnpu_models import BY_NAME, MOBILENET_V2, lowered
from vnpu_support import mismatches, op_model, runner_equals_simulation, tosa_run

pytestmark = [pytest.mark.benchmark, pytest.mark.lowering]

REPEATS = 10
# the virtual NPU's runs also repeat for this long (a small model's run is microseconds)
VNPU_BUDGET_S = 0.2
# issue 21 part 3: the virtual NPU at least this many times tosa_reference_model's speed on
# every benchmark model, and this many GMAC/s on the MobileNet-sized one
RATIO_GOAL = 50.0
GMACS_GOAL = 20.0
MOBILENET_SIZED = ("mobilenet", "u85_mobilenet")
# issue 21 part 3: the MobileNetV2-224 executor_runner + virtual NPU in QEMU, QEMU's user CPU
# seconds (the best of QEMU_RUNS: the machine may be shared)
QEMU_GOAL_S = 1.0
QEMU_RUNS = 3


def _met(ok: bool) -> str:
    return "MET" if ok else "NOT MET"


def torch_macs(model: object) -> int:
    """Multiply-accumulates of one inference of an OpModel's float module: every Conv2d
    (output values x input channels per group x kernel taps) and Linear, counted on a
    forward pass of its input shapes."""
    import torch
    from torch import nn

    total = 0

    def count(module: object, _inputs: object, out: object) -> None:
        nonlocal total
        assert isinstance(out, torch.Tensor)
        if isinstance(module, nn.Conv2d):
            kh, kw = module.kernel_size
            total += out.numel() * (module.in_channels // module.groups) * kh * kw
        elif isinstance(module, nn.Linear):
            total += out.numel() * module.in_features

    net = model.build()  # type: ignore[attr-defined]
    hooks = [m.register_forward_hook(count) for m in net.modules()]
    with torch.no_grad():
        net(*(torch.zeros(shape) for shape in model.shapes))  # type: ignore[attr-defined]
    for hook in hooks:
        hook.remove()
    return total


def _best_ms(fn: object, repeats: int, budget_s: float = 0.0) -> float:
    """The fastest of `repeats` calls, or of as many more as fit `budget_s` seconds (a
    run of microseconds on a shared machine: the best of 10 is mostly the others' load)."""
    best = float("inf")
    spent = 0.0
    done = 0
    while done < repeats or spent < budget_s:
        start = time.perf_counter()
        fn()  # type: ignore[operator]
        took = time.perf_counter() - start
        best = min(best, took)
        spent += took
        done += 1
    return best * 1e3


def _bench_against_tosa(
    label: str, blocks: VelaBlocks, tosa: bytes, product: int, repeats: int, *, macs: int = 0
) -> None:
    """Prove the virtual NPU equal to the reference on seeded inputs, then time both and
    print the bench line. `product`: CONFIG.product of the stream (0 U55, 2 U85); `macs`:
    the model's multiply-accumulates, for GMAC/s (0: not printed)."""
    ops = sum(1 for line in disassemble(blocks.command_stream, product) if " NPU_OP_" in line)
    inputs = random_inputs(blocks, np.random.default_rng(0))
    with VirtualNpu(blocks.cop.config, blocks.cop.id) as npu:
        assert mismatches(run_delegate(blocks, inputs, npu), tosa_run(tosa, inputs)) == 0
        # an inference as a caller running the delegate repeatedly makes it: inputs copied
        # in, the stream run from zeroed scratch, fresh output arrays
        prepared = PreparedDelegate(blocks, npu)
        assert mismatches(prepared(inputs), tosa_run(tosa, inputs)) == 0
        vnpu_ms = _best_ms(lambda: prepared(inputs), repeats, VNPU_BUDGET_S)
        call_ms = _best_ms(lambda: run_delegate(blocks, inputs, npu), repeats, VNPU_BUDGET_S)
    tosa_ms = _best_ms(lambda: tosa_run(tosa, inputs), max(3, repeats // 3))
    ratio = tosa_ms / vnpu_ms
    line = (
        f"\n[bench_vnpu] {label}: {ops} NPU ops, weights {len(blocks.weight_data)} B, "
        f"scratch {blocks.scratch_size} B | virtual NPU {vnpu_ms * 1e3:.1f} us/inference "
        f"(run_delegate {call_ms * 1e3:.1f} us) | "
        f"tosa_reference_model {tosa_ms * 1e3:.1f} us/inference | ratio {ratio:.1f}x "
        f"(goal >= {RATIO_GOAL:.0f}x: {_met(ratio >= RATIO_GOAL)})"
    )
    if macs:
        gmacs = macs / (vnpu_ms * 1e6)
        line += (
            f" | {macs / 1e6:.1f} M MACs, {gmacs:.1f} GMAC/s "
            f"(goal >= {GMACS_GOAL:.0f}: {_met(gmacs >= GMACS_GOAL)})"
        )
    print(line)


@pytest.mark.parametrize("name", ["mobilenet", "block", "conv_deep", "permute", "softmax"])
def test_bench_virtual_npu_vs_tosa_reference(name: str) -> None:
    blocks, tosa = op_model(BY_NAME[name])
    macs = torch_macs(BY_NAME[name]) if name in MOBILENET_SIZED else 0
    _bench_against_tosa(name, blocks, tosa, product=0, repeats=REPEATS, macs=macs)


def _reused_runner(pte: Path, name: str, vectorize: bool) -> tuple[Path, Path]:
    """(project, ELF) of the executor_runner with the virtual NPU for `pte`, built once in
    the test-model cache and rebuilt incrementally after (ExecuTorch is built once). One
    project per kit checkout and ETHOSU_VIRTUAL_VECTORIZE value: a project records its
    kit's folder, and one generated by another checkout would build (and time) that
    checkout's virtual NPU."""
    import hashlib
    import subprocess

    from ethosu_kit.core.paths import kit_root
    from ethosu_kit.vnpu.build import source_hash

    kit = hashlib.sha256(str(kit_root().resolve()).encode()).hexdigest()[:8]
    flavour = "-vec" if vectorize else ""
    project = lowered_cache_root() / "fw-bench" / f"{name}-{pte.parent.name}-kit{kit}{flavour}"
    # regenerated every time (--force over the kit's own files; the build folder is kept, so
    # the build stays incremental): a project made by an older kit is never built as is,
    # and a build that fails fails the benchmark instead of being retried
    make_project(pte, project, npu="virtual", force=project.is_dir())
    # the option into the cache first: `ethosu-kit build` configures with the cache's value
    configure = [
        "cmake",
        "--preset",
        "gcc",
        "-DETHOSU_KIT_APP=executor_runner",
        "-DETHOSU_KIT_NPU=virtual",
        f"-DETHOSU_VIRTUAL_VECTORIZE={'ON' if vectorize else 'OFF'}",
    ]
    step = subprocess.run(configure, cwd=project, capture_output=True, text=True, check=False)
    assert step.returncode == 0, step.stdout[-4000:] + step.stderr[-4000:]
    print(f"[bench_vnpu] {project} (kit sources {source_hash()})")
    return project, build_with_cli(project, "virtual")


def _qemu_cpu(elf: Path) -> tuple[RunResult, list[float]]:
    """QEMU_RUNS runs of `elf`: the first run, and each run's QEMU user CPU seconds."""
    import resource

    times = []
    first = None
    for _ in range(QEMU_RUNS):
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
        run = run_qemu(elf, timeout=300)
        times.append(resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime - before)
        assert run.exit_code == 0, run.uart
        first = first or run
    assert first is not None
    return first, times


@pytest.mark.firmware
@pytest.mark.qemu
@pytest.mark.slow
def test_bench_qemu_runner_on_virtual_npu(tmp_path: Path) -> None:
    """executor_runner + virtual NPU in QEMU (Corstone-300, Cortex-M55) on MobileNetV2
    224x224 (U55-128 Shared_Sram, 3.5 MB): QEMU's user CPU time, the best of QEMU_RUNS, the
    virtual NPU built as the kit builds it (scalar: ETHOSU_VIRTUAL_VECTORIZE OFF) and with
    the compiler's MVE auto-vectorisation (ON), next to the delegate's time on the host;
    both runs' printed outputs must equal the host simulation. Built once, reused
    (incremental)."""
    require_externals("EXECUTORCH_ROOT", "ETHOSU_DRIVER_ROOT", "CMSIS_ROOT")
    pte = lowered(MOBILENET_V2) / "model.pte"
    (blocks,) = read_vela_streams(pte)
    inputs = random_inputs(blocks, np.random.default_rng(0))
    with VirtualNpu(blocks.cop.config, blocks.cop.id) as npu:
        host_ms = _best_ms(lambda: run_delegate(blocks, inputs, npu), 3)
    for vectorize in (False, True):
        project, elf = _reused_runner(pte, "mobilenet_v2", vectorize)
        start = time.perf_counter()
        run, cpu = _qemu_cpu(elf)
        wall = (time.perf_counter() - start) / QEMU_RUNS
        runner_equals_simulation(pte, project, run, tmp_path)
        cycles = re.search(r"^kit: cycles (\d+) execute", run.uart, re.MULTILINE)
        best = min(cpu)
        how = "MVE auto-vectorised (ON)" if vectorize else "scalar, the default (OFF)"
        print(
            f"\n[bench_vnpu] qemu mobilenet_v2 224x224: executor_runner + virtual NPU, {how}: "
            f"QEMU user CPU {best:.2f} s best of {QEMU_RUNS} "
            f"({' '.join(f'{t:.2f}' for t in cpu)}; goal <= {QEMU_GOAL_S:.0f} s: "
            f"{_met(best <= QEMU_GOAL_S)}), {wall:.2f} s wall a run, "
            f"{cycles.group(1) if cycles else '?'} SysTick cycles in execute | host delegate "
            f"{host_ms:.1f} ms | outputs == host simulation"
        )


@pytest.mark.parametrize(
    "name", ["u85_mobilenet", "u85_residual_cnn", "u85_conv_deep", "u85_permute", "u85_softmax"]
)
def test_bench_u85_virtual_npu_vs_tosa_reference(name: str) -> None:
    """The same figures for the virtual Ethos-U85 (U85-256, Shared_Sram) on the U85 corpus."""
    from vnpu_u85_models import BY_NAME as U85_MODELS
    from vnpu_u85_models import CONFIGS, compiled, tosa_graph

    accel, mode = CONFIGS[0]
    model = U85_MODELS[name]
    tosa = tosa_graph(model)
    blocks = compiled(model, accel, mode)
    # best of REPEATS as on the U55 (3 when an inference took 13 ms: the reference's 100+ ms
    # runs are a third of that count either way)
    macs = torch_macs(model) if name in MOBILENET_SIZED else 0
    _bench_against_tosa(
        f"{name} ({accel} {mode})", blocks, tosa, product=2, repeats=REPEATS, macs=macs
    )
