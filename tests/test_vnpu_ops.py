"""The virtual NPU against tosa_reference_model: every one-op model, 20 random full-range inputs.

Each model is lowered for ethos-u55-128 / Shared_Sram with its TOSA graph kept; the
delegate's Vela command stream runs on the virtual NPU and the TOSA graph on the
reference model, on the same int8/int16 inputs. Bit-exact or the test fails. The
mutation tests prove the comparison notices a wrong rounding, bias, clamp or shift.
"""

from __future__ import annotations

import numpy as np
import pytest

from ethosu_kit.vnpu import Mutation, VirtualNpu, run_delegate
from ethosu_kit.vnpu.delegate import random_inputs
from ethosu_kit.vnpu.npu import disassemble
from vnpu_models import BY_NAME, OP_MODELS, U55_32_MODELS
from vnpu_support import mismatches, op_model, tosa_run

pytestmark = pytest.mark.lowering

RUNS = 20

# operations each model's stream must contain, so a model that Vela lowers differently
# (or that stays on the CPU) is noticed rather than silently testing less
EXPECTED_OPS = {
    "conv3x3_pad": "NPU_OP_CONV",
    "depthwise_s2": "NPU_OP_DEPTHWISE",
    "add": "elementwise_mode=ELEMENTWISE_MODE_ADD",
    "mul_bcast": "elementwise_mode=ELEMENTWISE_MODE_MUL",
    "sub_rev_const": "elementwise_mode=ELEMENTWISE_MODE_SUB",
    "maximum": "elementwise_mode=ELEMENTWISE_MODE_MAX",
    "maxpool": "pooling_mode=POOLING_MODE_MAX",
    "mean": "pooling_mode=POOLING_MODE_REDUCE_SUM",
    "sigmoid": "activation_function=ACTIVATION_FUNCTION_TABLE_0",
    "sigmoid_a16w8": "activation_function=ACTIVATION_FUNCTION_TABLE_0",
    "softmax": "NPU_OP_DMA_START",
}


@pytest.mark.parametrize("name", [m.name for m in (*OP_MODELS, *U55_32_MODELS)])
def test_bit_exact_with_tosa_reference(name: str) -> None:
    blocks, tosa = op_model(BY_NAME[name])
    listing = "\n".join(disassemble(blocks.command_stream))
    if name in EXPECTED_OPS:
        assert EXPECTED_OPS[name] in listing, f"{name}: stream has no {EXPECTED_OPS[name]}"
    rng = np.random.default_rng(1234)
    distinct = set()
    with VirtualNpu(blocks.cop.config, blocks.cop.id) as npu:
        for run in range(RUNS):
            inputs = random_inputs(blocks, rng)
            ours = run_delegate(blocks, inputs, npu)
            bad = mismatches(ours, tosa_run(tosa, inputs))
            assert bad == 0, f"{name}: input {run}: {bad} values differ from tosa_reference_model"
            distinct.update(np.unique(ours[0]).tolist())
    # a constant output would compare equal for the wrong reasons
    assert len(distinct) > 2, f"{name}: outputs take only {sorted(distinct)}"


@pytest.mark.parametrize(
    ("mutation", "name"),
    [
        (Mutation.NATURAL_FLOOR, "conv3x3_pad"),
        (Mutation.NATURAL_FLOOR, "add"),
        (Mutation.NO_BIAS, "conv1x1"),
        (Mutation.CLAMP_32BIT, "softmax"),
        (Mutation.SHIFT_18, "add_bcast"),
    ],
)
def test_wrong_rule_is_caught(mutation: Mutation, name: str) -> None:
    blocks, tosa = op_model(BY_NAME[name])
    rng = np.random.default_rng(99)
    inputs_list = [random_inputs(blocks, rng) for _ in range(3)]
    VirtualNpu.set_mutation(mutation)
    try:
        bad = sum(
            mismatches(run_delegate(blocks, inputs), tosa_run(tosa, inputs))
            for inputs in inputs_list
        )
    finally:
        VirtualNpu.set_mutation(Mutation.NONE)
    assert bad > 0, f"{mutation!r} on {name}: the comparison did not notice"
    ok = sum(
        mismatches(run_delegate(blocks, inputs), tosa_run(tosa, inputs)) for inputs in inputs_list
    )
    assert ok == 0


@pytest.mark.slow
def test_mobilenet_sized_model_bit_exact() -> None:
    """A whole MobileNet-V1-sized network (one delegate, ~0.5 MB weights) on 20 inputs."""
    blocks, tosa = op_model(BY_NAME["mobilenet"])
    rng = np.random.default_rng(7)
    with VirtualNpu(blocks.cop.config, blocks.cop.id) as npu:
        for run in range(RUNS):
            inputs = random_inputs(blocks, rng)
            bad = mismatches(run_delegate(blocks, inputs, npu), tosa_run(tosa, inputs))
            assert bad == 0, f"mobilenet: input {run}: {bad} values differ"
