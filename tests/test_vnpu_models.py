"""Whole small models on the virtual NPU against the quantized PyTorch model: within 1 LSB.

The one-op tests prove the virtual NPU bit-exact against the TOSA graph Vela compiled;
this proves the chain the user cares about: the delegate of a lowered model, run on the
virtual NPU from full-range int8 inputs, against the QDQ graph of convert_pt2e (the
float reference kernels between quantize/dequantize pairs) on the same inputs,
compared in the output's integer units. The reference rounds differently from the NPU
(float rescale vs integer scale/shift, float LUT functions vs tables), so a few values
may be off by one; more is a wrong rule somewhere.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from ethosu_kit.vnpu import Mutation, VirtualNpu, run_delegate
from ethosu_kit.vnpu.delegate import tensor_dtype
from vnpu_models import BY_NAME, MOBILENET, WHOLE_MODELS, OpModel, quantized_graph
from vnpu_support import op_model

pytestmark = pytest.mark.lowering

RUNS = 20


def _qparams(node: Any) -> tuple[float, int]:
    """(scale, zero point) of a quantize/dequantize_per_tensor node."""
    assert "quantize_per_tensor" in str(node.target), f"{node}: not a per-tensor (de)quantize"
    return float(node.args[1]), int(node.args[2])


def io_qparams(graph: Any) -> tuple[list[tuple[float, int]], list[tuple[float, int]]]:
    """Quantization of each graph input (its quantize node) and output (its dequantize node)."""
    inputs = []
    for node in graph.graph.nodes:
        if node.op == "placeholder" and node.users:
            (user,) = {u for u in node.users if "quantize_per_tensor" in str(u.target)}
            inputs.append(_qparams(user))
    (out_node,) = [n for n in graph.graph.nodes if n.op == "output"]
    outputs = [_qparams(n) for n in out_node.args[0]]
    return inputs, outputs


def compare(model: OpModel, runs: int = RUNS) -> tuple[int, int, int]:
    """(max |diff| in LSB, values off by one, values compared) over `runs` random inputs."""
    torch = pytest.importorskip("torch")
    blocks, _ = op_model(model)
    graph = quantized_graph(model)
    in_q, out_q = io_qparams(graph)
    assert len(in_q) == len(blocks.inputs) and len(out_q) == len(blocks.outputs), (
        f"{model.name}: the delegate must take the whole graph (IO counts differ)"
    )
    rng = np.random.default_rng(2024)
    worst = off_by_one = total = 0
    distinct: set[int] = set()
    with VirtualNpu(blocks.cop.config, blocks.cop.id) as npu:
        for _ in range(runs):
            ints, floats = [], []
            for t, shape, (scale, zp) in zip(blocks.inputs, model.shapes, in_q, strict=True):
                info = np.iinfo(tensor_dtype(t))
                q = rng.integers(info.min, info.max, size=shape, endpoint=True)
                ints.append(q.astype(tensor_dtype(t)))
                # exactly representable: the graph's own quantize gives q back
                floats.append(torch.from_numpy(((q - zp) * scale).astype(np.float32)))
            ours = run_delegate(blocks, ints, npu)
            with torch.no_grad():
                ref = graph(*floats)
            ref = ref if isinstance(ref, (tuple, list)) else (ref,)
            for got, want, (scale, zp), t in zip(ours, ref, out_q, blocks.outputs, strict=True):
                info = np.iinfo(tensor_dtype(t))
                expect = np.clip(np.round(want.numpy() / scale) + zp, info.min, info.max)
                diff = np.abs(
                    got.reshape(-1).astype(np.int64) - expect.reshape(-1).astype(np.int64)
                )
                worst = max(worst, int(diff.max()))
                off_by_one += int(np.count_nonzero(diff == 1))
                total += diff.size
                distinct.update(np.unique(got).tolist())
    assert len(distinct) > 2, f"{model.name}: outputs take only {sorted(distinct)}"
    return worst, off_by_one, total


def _report(name: str, worst: int, off: int, total: int) -> None:
    print(f"{name}: max |diff| {worst} LSB, {off} of {total} values off by 1 ({off / total:.2%})")


@pytest.mark.parametrize("name", [m.name for m in WHOLE_MODELS] + ["block"])
def test_whole_model_within_one_lsb_of_quantized_pytorch(name: str) -> None:
    worst, off, total = compare(BY_NAME[name])
    _report(name, worst, off, total)
    assert worst <= 1, f"{name}: {worst} LSB from the quantized PyTorch model"


@pytest.mark.slow
def test_mobilenet_sized_model_within_one_lsb() -> None:
    worst, off, total = compare(MOBILENET, runs=5)
    _report("mobilenet", worst, off, total)
    assert worst <= 1, f"mobilenet: {worst} LSB from the quantized PyTorch model"


def test_wrong_rule_breaks_the_one_lsb_bound() -> None:
    """A bias the NPU forgets moves the example CNN's outputs by more than 1 LSB."""
    VirtualNpu.set_mutation(Mutation.NO_BIAS)
    try:
        worst, _, _ = compare(BY_NAME["tiny_cnn"], runs=3)
    finally:
        VirtualNpu.set_mutation(Mutation.NONE)
    assert worst > 1
