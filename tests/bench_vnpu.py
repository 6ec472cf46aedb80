"""Benchmark: the virtual NPU's time per inference next to tosa_reference_model on the same graph.

Prints, per model: NPU operations in the stream, virtual-NPU ms per inference (the
whole delegate: IO copies, command decode, execution), tosa_reference_model ms per
inference of the TOSA graph Vela compiled, and the ratio. Run with
`pytest -s -m benchmark tests/bench_vnpu.py`.
"""

from __future__ import annotations

import time

import numpy as np
import pytest

from ethosu_kit.vnpu import VirtualNpu, run_delegate
from ethosu_kit.vnpu.delegate import random_inputs
from ethosu_kit.vnpu.npu import disassemble
from vnpu_models import BY_NAME
from vnpu_support import mismatches, op_model, tosa_run

pytestmark = [pytest.mark.benchmark, pytest.mark.lowering]

REPEATS = 10


def _best_ms(fn: object, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()  # type: ignore[operator]
        best = min(best, time.perf_counter() - start)
    return best * 1e3


@pytest.mark.parametrize("name", ["mobilenet", "block", "conv_deep", "permute", "softmax"])
def test_bench_virtual_npu_vs_tosa_reference(name: str) -> None:
    blocks, tosa = op_model(BY_NAME[name])
    ops = sum(1 for line in disassemble(blocks.command_stream) if " NPU_OP_" in line)
    inputs = random_inputs(blocks, np.random.default_rng(0))
    with VirtualNpu(blocks.cop.config, blocks.cop.id) as npu:
        assert mismatches(run_delegate(blocks, inputs, npu), tosa_run(tosa, inputs)) == 0
        vnpu_ms = _best_ms(lambda: run_delegate(blocks, inputs, npu), REPEATS)
    tosa_ms = _best_ms(lambda: tosa_run(tosa, inputs), max(3, REPEATS // 3))
    print(
        f"\n[bench_vnpu] {name}: {ops} NPU ops, weights {len(blocks.weight_data)} B, "
        f"scratch {blocks.scratch_size} B | virtual NPU {vnpu_ms:.2f} ms/inference | "
        f"tosa_reference_model {tosa_ms:.2f} ms/inference | ratio {tosa_ms / vnpu_ms:.2f}x"
    )
