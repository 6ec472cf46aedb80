"""The virtual Ethos-U85 against tosa_reference_model: the U85 corpus, bit-exact.

Every model of vnpu_u85_models is lowered once (torch + ExecuTorch, ethos-u85-256),
its TOSA graph compiled by Vela for several MAC configurations and memory modes, and
each command stream run on the virtual NPU against the reference model on the same
full-range random integer inputs: 20 inputs on each of U85-256 and U85-2048 Shared_Sram,
U85-512 and U85-128 Dedicated_Sram, 3 on U85-1024 Sram_Only. A construct the virtual NPU
does not model must stop the stream with an error that names it: never an answer.
The mutation tests prove the comparison notices each U85 rule being wrong.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import re
from typing import Any

import numpy as np
import pytest

import vela_next
from ethosu_kit.cli.app import main
from ethosu_kit.pte import VelaBlocks
from ethosu_kit.vnpu import Mutation, VirtualNpu, run_delegate
from ethosu_kit.vnpu.delegate import random_inputs
from ethosu_kit.vnpu.lut import unread_tables
from ethosu_kit.vnpu.npu import VnpuError, disassemble
from vnpu_support import mismatches, tosa_run
from vnpu_u85_models import (
    BY_NAME,
    CONFIGS,
    OP_MODELS,
    WHOLE_MODELS,
    compiled,
    fast_scratch,
    lowered,
    tosa_graph,
)

pytestmark = pytest.mark.lowering

RUNS = 20
SMOKE_RUNS = 3
U85_PRODUCT = 2

# What each model's stream must contain, so a model Vela lowers differently (or that
# stays on the CPU) is noticed rather than silently testing less.
EXPECTED = {
    "u85_permute": "activation_transpose=ACTIVATION_TRANSPOSE_WCH",
    "u85_permute_hw": "activation_transpose=ACTIVATION_TRANSPOSE_HCW",
    "u85_permute_chw": "activation_transpose=ACTIVATION_TRANSPOSE_CHW",
    # ExecuTorch hands Vela NCHW data as it is: a flip of W reverses the "C" axis, and so on
    "u85_flip_w": "activation_reverse=ACTIVATION_REVERSE_C",
    "u85_flip_h": "activation_reverse=ACTIVATION_REVERSE_W",
    "u85_flip_c": "activation_reverse=ACTIVATION_REVERSE_H",
    "u85_conv3x3_pad": "NPU_OP_CONV",
    "u85_conv_deep": "weight_format=WEIGHT_FORMAT_FWD",
    "u85_depthwise_s2": "NPU_OP_DEPTHWISE",
    "u85_conv_a16w8": "acc_format=ACC_FORMAT_I48",
    "u85_maximum": "elementwise_mode=ELEMENTWISE_MODE_MAX",
    "u85_minimum": "elementwise_mode=ELEMENTWISE_MODE_MIN",
    "u85_mul_scalar": "broadcast_mode=BROADCAST_MODE_SCALAR",
    "u85_avgpool": "pooling_mode=POOLING_MODE_AVERAGE",
    "u85_mean": "ACTIVATION_STORAGE_CHAINED",
    "u85_sigmoid": "activation_function=ACTIVATION_FUNCTION_LUT_S8_S8",
    "u85_sigmoid_a16w8": "ACTIVATION_FUNCTION_LUT_",
    "u85_softmax": "NPU_OP_DMA_START",
    "u85_sum_c": "pooling_mode=POOLING_MODE_REDUCE_SUM",
    "u85_block": "pooling_mode=POOLING_MODE_NONE",
    "u85_conv_sparse": "weight_sparsity=WEIGHT_SPARSITY_SPARSE_2_4",
    "u85_amin_c": "pooling_mode=POOLING_MODE_MIN",
    "u85_where_gt": "elementwise_mode=ELEMENTWISE_MODE_CMP_GT",
    "u85_where_ge": "elementwise_mode=ELEMENTWISE_MODE_CMP_GE",
    "u85_where_eq": "elementwise_mode=ELEMENTWISE_MODE_CMP_EQ",
    "u85_where_not": "elementwise_mode=ELEMENTWISE_MODE_NOT",
    "u85_where_xor": "elementwise_mode=ELEMENTWISE_MODE_XOR",
    "u85_conv_transpose": "acc_input=ACC_INPUT_IFM2",
    "u85_upsample_nearest": "resize_mode=RESIZE_MODE_NEAREST",
    "u85_upsample_bilinear": "resize_mode=RESIZE_MODE_BILINEAR",
    "u85_matmul": "weights_ifm2=1",
    "u85_attention": "weights_ifm2=1",
    "u85_conv_transpose_a16w8": "activation_precision=ACTIVATION_PRECISION_B64",
    "u85_conv_sparse_a16w8": "weight_sparsity=WEIGHT_SPARSITY_SPARSE_2_4",
    "u85_conv_k7_s4": "acc_input=ACC_INPUT_KEEP acc_output=ACC_OUTPUT_DISABLE",
    "u85_maxpool_k5_s4": "acc_input=ACC_INPUT_KEEP acc_output=ACC_OUTPUT_DISABLE",
    "u85_and_i32": "activation_precision=ACTIVATION_PRECISION_B32",
    "u85_conv3d": "acc_input=ACC_INPUT_IFM2",
    "u85_conv3d_a16w8": "acc_input=ACC_INPUT_IFM2",
    "u85_xor_i8": "elementwise_mode=ELEMENTWISE_MODE_XOR",
    "u85_where_ge_i32": "elementwise_mode=ELEMENTWISE_MODE_CMP_GE",
    "u85_upsample_bilinear_ac_a16w8": "activation_precision=ACTIVATION_PRECISION_B64",
    "u85_mul_bcast_both": "broadcast_mode=BROADCAST_MODE_CH",
    "u85_exp_a16w8": "activation_function=ACTIVATION_FUNCTION_LUT_S16_S16",
    "u85_where_ne": "elementwise_mode=ELEMENTWISE_MODE_NOT",
    "u85_index_select": "stride_mode=DMA_STRIDE_MODE_D2 idx_mode=DMA_IDX_MODE_ENABLED",
    "u85_index_select_one": "stride_mode=DMA_STRIDE_MODE_D1 idx_mode=DMA_IDX_MODE_ENABLED",
    "u85_index_select_h": "stride_mode=DMA_STRIDE_MODE_D3 idx_mode=DMA_IDX_MODE_ENABLED",
    "u85_index_put": "DMA_REGION_MODE_EXTERNAL idx_mode=DMA_IDX_MODE_ENABLED",
}


def _blocks(name: str, accel: str, mode: str) -> tuple[VelaBlocks, bytes]:
    model = BY_NAME[name]
    try:
        tosa = tosa_graph(model)
    except ImportError as exc:
        pytest.skip(f"lowering needs torch and executorch: {exc.name} is missing")
    return compiled(model, accel, mode), tosa


def _check(name: str, accel: str, mode: str, runs: int, seed: int = 1234) -> set[int]:
    blocks, tosa = _blocks(name, accel, mode)
    assert (blocks.cop.config >> 28) & 0xF == U85_PRODUCT, f"{name}: not an Ethos-U85 stream"
    rng = np.random.default_rng(seed)
    distinct: set[int] = set()
    with VirtualNpu(blocks.cop.config, blocks.cop.id) as npu:
        for run in range(runs):
            inputs = random_inputs(blocks, rng)
            ours = run_delegate(blocks, inputs, npu, fast_scratch_size=fast_scratch(mode))
            bad = mismatches(ours, tosa_run(tosa, inputs))
            assert bad == 0, (
                f"{name} on {accel} {mode}: input {run}: {bad} values differ "
                "from tosa_reference_model"
            )
            distinct.update(np.unique(ours[0]).tolist())
    return distinct


MODELLED = [m.name for m in (*OP_MODELS, *WHOLE_MODELS)]


@pytest.mark.parametrize("name", MODELLED)
def test_u85_bit_exact_with_tosa_reference(name: str) -> None:
    if name == "u85_mobilenet":
        pytest.skip("the MobileNet-sized model runs in test_u85_mobilenet_sized_model (slow)")
    blocks, _ = _blocks(name, *CONFIGS[0])
    listing = "\n".join(disassemble(blocks.command_stream, U85_PRODUCT))
    if name in EXPECTED:
        assert EXPECTED[name] in listing, f"{name}: stream has no {EXPECTED[name]}"
    distinct: set[int] = set()
    for i, (accel, mode) in enumerate(CONFIGS):
        distinct |= _check(name, accel, mode, RUNS if i < 4 else SMOKE_RUNS)
    # a constant output would compare equal for the wrong reasons
    assert len(distinct) > 2, f"{name}: outputs take only {sorted(distinct)}"


@pytest.mark.slow
def test_u85_mobilenet_sized_model() -> None:
    for accel, mode in CONFIGS[:2]:
        _check("u85_mobilenet", accel, mode, RUNS, seed=7)


def _vela_miscompiled_slice(blocks: VelaBlocks, inputs: list[np.ndarray]) -> np.ndarray:
    """`x[..., 3:7].sum(-1)`: the REDUCE_SUM reads 10 channels from channel 3 (its
    IFM_DEPTH_M1 is 9; no register holds the 4). Zero outside the slice, it cannot tell."""
    assert any("IFM_DEPTH_M1 depth_m1=9" in line for line in disassemble(blocks.command_stream, 2))
    inputs[0][..., :3] = 0
    inputs[0][..., 7:] = 0
    return np.ones(1, dtype=bool)


def _vela_miscompiled_mlp(blocks: VelaBlocks, inputs: list[np.ndarray]) -> np.ndarray:
    """int16 Linear-ReLU-Linear over 16 tokens: the first CONV's OFM is 16x1 but its IFM is
    the second CONV's 4x4 view (4 rows at a 4-token stride, IFM_PAD_BOTTOM 12): only
    token 0 is read where TOSA reads it."""
    assert any("IFM_PAD_BOTTOM pad=12" in line for line in disassemble(blocks.command_stream, 2))
    token0 = np.zeros((16, 32), dtype=bool)
    token0[0] = True
    return token0


def _vela_miscompiled_conv(blocks: VelaBlocks, inputs: list[np.ndarray]) -> np.ndarray:
    """5x5 stride 4, TOSA pad 2 top/left on the 15x15 slice: the 25 split CONVs (kept
    accumulators) carry no IFM_PAD_TOP/LEFT at all, so every output is shifted."""
    listing = disassemble(blocks.command_stream, 2)
    assert sum("NPU_OP_CONV" in line for line in listing) == 25
    assert not any(re.search(r"IFM_PAD_(TOP|LEFT) pad=[1-9]", line) for line in listing)
    return np.zeros(1, dtype=bool)


def _vela_miscompiled_tables(blocks: VelaBlocks, inputs: list[np.ndarray]) -> np.ndarray:
    """`tanh(sigmoid(x) * 3)` int16: both 2048-byte tables are DMAed to lutram address 0
    (the second overwrites the first before the POOL reads it) and the POOL names table 0,
    the chained MUL inheriting it. Compared everywhere, against `_second_table_twice`."""
    listing = disassemble(blocks.command_stream, U85_PRODUCT)
    dst = [line.split("addr=")[1] for line in listing if "NPU_SET_DMA0_DST addr=" in line]
    assert dst == ["0"], dst  # set once, used by both DMA_STARTs
    assert sum("NPU_OP_DMA_START" in line for line in listing) == 2
    tables = [line for line in listing if "NPU_SET_ACTIVATION " in line]
    assert len(tables) == 1 and "LUT_S16_S16 table=0" in tables[0], tables
    return np.ones(1, dtype=bool)


def _second_table_twice(graph: bytes) -> bytes:
    """The graph with its first TABLE's 513 int16 entries replaced by the second's: what a
    stream computes that loads both tables to one lutram address (`_vela_miscompiled_tables`).
    Matching it bit-exactly, rather than only differing from the graph, pins that the
    virtual NPU reads the stream this way and not some other wrong way."""
    import tosa.Op
    import tosa.TosaGraph

    block = tosa.TosaGraph.TosaGraph.GetRootAs(graph, 0).Regions(0).Blocks(0)
    tensors = {t.Name(): t for t in map(block.Tensors, range(block.TensorsLength()))}
    ops = [block.Operators(i) for i in range(block.OperatorsLength())]
    first, second = [
        tensors[op.Inputs(1)].DataAsNumpy().tobytes() for op in ops if op.Op() == tosa.Op.Op.TABLE
    ]
    assert len(first) == 1026 and graph.count(first) == 1 and first != second
    return graph.replace(first, second)


# the graph a miscompiled stream computes, where it is a graph (default: the model's)
STREAM_COMPUTES = {"u85_two_tables_a16w8": _second_table_twice}

# the first Vela that compiles the model right (a pin holds for the versions before it)
VELA_FIXED = {"u85_mlp_relu_a16w8": "5.2.0"}


def _version(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in v.split(".")[:3])


@pytest.mark.parametrize("vela", ["installed", "next"])
@pytest.mark.parametrize(
    ("name", "where_equal"),
    [
        ("u85_slice_sum", _vela_miscompiled_slice),
        ("u85_mlp_relu_a16w8", _vela_miscompiled_mlp),
        ("u85_conv_k5_s4_sliced", _vela_miscompiled_conv),
        ("u85_two_tables_a16w8", _vela_miscompiled_tables),
    ],
)
def test_u85_vela_miscompiles(name: str, where_equal: Any, vela: str) -> None:
    """ethos-u-vela 5.1.0 writes streams that cannot compute these TOSA graphs. The virtual
    NPU runs the stream as written (as the NPU would): it differs from tosa_reference_model
    on random inputs and agrees exactly where the stream has what it needs. Each pin knows
    the Vela it holds for: from VELA_FIXED's version on the stream must be right, bit-exact.
    `installed`: ExecuTorch's Vela (5.1.0 with ExecuTorch 1.5.1); `next`: the 5.2.0 venv
    (tests/vela_next.py). When a pin's first assertion fails, that Vela fixed it: add it
    to VELA_FIXED."""
    if vela == "installed":
        blocks, tosa = _blocks(name, *CONFIGS[0])
        version = importlib.metadata.version("ethos-u-vela")
    else:
        vela_next.vela()
        _, tosa = _blocks(name, *CONFIGS[0])
        blocks, version = vela_next.compiled(BY_NAME[name]), vela_next.VERSION
    rng = np.random.default_rng(5)
    inputs = random_inputs(blocks, rng)
    if name in VELA_FIXED and _version(version) >= _version(VELA_FIXED[name]):
        for run in range(RUNS):
            bad = mismatches(run_delegate(blocks, inputs), tosa_run(tosa, inputs))
            assert bad == 0, f"{name} (Vela {version}): input {run}: {bad} values differ"
            inputs = random_inputs(blocks, rng)
        return
    assert mismatches(run_delegate(blocks, inputs), tosa_run(tosa, inputs)) > 0, (
        f"{name}: Vela {version} compiles it right: add it to VELA_FIXED"
    )
    equal = where_equal(blocks, inputs)
    ours = run_delegate(blocks, inputs)[0]
    tosa = STREAM_COMPUTES.get(name, lambda graph: graph)(tosa)
    ref = np.asarray(tosa_run(tosa, inputs)[0]).reshape(ours.shape)
    mask = np.broadcast_to(equal.reshape(equal.shape if equal.size > 1 else ()), ours.shape)
    assert np.array_equal(ours[mask], ref[mask]), f"{name}: differs where the stream is complete"


def test_simulate_warns_of_a_table_overwritten_unread(capsys: pytest.CaptureFixture[str]) -> None:
    """`simulate` says when a stream loads a table over one no operation has read yet (the
    two-tables pin's stream: one warning line); streams with one table, or two tables in
    two places (the softmaxes), have none."""
    _blocks("u85_two_tables_a16w8", *CONFIGS[0])  # skips without torch
    pte = lowered(BY_NAME["u85_two_tables_a16w8"]) / "model.pte"
    assert main(["simulate", str(pte)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("warning: Ethos-U85 delegate 0: the table "), err
    assert "loaded at command word 9 is overwritten at word 13 before any" in err[0]
    for name in ("u85_sigmoid_a16w8", "u85_exp_a16w8", "u85_softmax", "u85_softmax_a16w8"):
        blocks, _ = _blocks(name, *CONFIGS[0])
        assert unread_tables(blocks.command_stream, U85_PRODUCT) == [], name


def test_u85_embedding_gathers_by_its_index_input() -> None:
    """nn.Embedding fed int32 indices: one gather DMA whose indices are the delegate's input.
    Bit-exact on indices inside the table; outside it (undefined in TOSA) the job stops
    with an error naming the index, never an answer."""
    for accel, mode in CONFIGS[:2]:
        blocks, tosa = _blocks("u85_embedding", accel, mode)
        rng = np.random.default_rng(3)
        for run in range(RUNS):
            (idx,) = random_inputs(blocks, rng)
            inputs = [(np.abs(idx.astype(np.int64)) % 100).astype(idx.dtype)]
            ours = run_delegate(blocks, inputs, fast_scratch_size=fast_scratch(mode))
            bad = mismatches(ours, tosa_run(tosa, inputs))
            assert bad == 0, f"u85_embedding on {accel} {mode}: input {run}: {bad} values differ"
        wild = [np.full_like(idx, 100)]
        with pytest.raises(VnpuError, match=re.escape("index 100 (row 0) outside 0..IDX_MAX 99")):
            run_delegate(blocks, wild, fast_scratch_size=fast_scratch(mode))


# A construct no corpus stream has verified, written into a real stream: the run must stop
# with an error naming it (never an answer). (model, command, new param, error text)
UNMODELLED = [
    ("u85_add", "NPU_OP_ELEMENTWISE", 7, "elementwise_mode 7 (CLZ) is not modelled"),
    ("u85_add", "NPU_OP_ELEMENTWISE", 8, "elementwise_mode 8 (SHR) is not modelled"),
    ("u85_maxpool", "NPU_OP_POOL", 6, "pooling_mode ARGMAX_X is not modelled"),
    ("u85_upsample_bilinear", "NPU_OP_RESIZE", 1, "resize_mode REPLICATE is not modelled"),
    ("u85_conv1x1", "NPU_SET_ACC_FORMAT", 0x0110, "acc_input KEEP with no accumulators kept"),
    ("u85_avgpool", "NPU_SET_ACC_FORMAT", 0x0140, "acc_output DISABLE is not modelled"),
    ("u85_conv1x1", "NPU_SET_OFM_SCALE", 0x2040, "OFM_SCALE dbl_rnd 1 is not modelled"),
    ("u85_index_put", "NPU_SET_DMA0_SRC_REGION", 0x0A01, "index mode on both source and"),
    ("u85_index_select", "NPU_SET_DMA0_SRC_REGION", 0x0B01, "DMA index mode with internal memory"),
]


@pytest.mark.parametrize(("name", "command", "param", "error"), UNMODELLED)
def test_u85_unmodelled_construct_stops_with_named_error(
    name: str, command: str, param: int, error: str
) -> None:
    blocks, _ = _blocks(name, *CONFIGS[0])
    stream = blocks.command_stream
    start = blocks.cmd_data.index(stream)
    lines = disassemble(stream, U85_PRODUCT)
    (offset,) = [int(line.split(" ")[0], 16) for line in lines if line.split(" ")[2] == command][
        -1:
    ]
    cmd = bytearray(blocks.cmd_data)
    cmd[start + offset + 2 : start + offset + 4] = param.to_bytes(2, "little")
    broken = dataclasses.replace(blocks, cmd_data=bytes(cmd))
    rng = np.random.default_rng(0)
    with pytest.raises(VnpuError, match=re.escape(error)):
        run_delegate(
            broken, random_inputs(broken, rng), fast_scratch_size=fast_scratch(CONFIGS[0][1])
        )


# Each wrong rule -> the (model, CONFIGS index) it must show on as wrong output values
CAUGHT_BY: dict[Mutation, list[tuple[str, int]]] = {
    Mutation.NATURAL_FLOOR: [("u85_add", 0)],
    Mutation.NO_BIAS: [("u85_conv1x1", 0)],
    Mutation.U85_NO_SERPENTINE: [("u85_conv3x3_pad", 0), ("u85_depthwise_s2", 1)],
    Mutation.U85_MINMAX_UNSCALED: [("u85_maximum_scaled", 0)],
    Mutation.U85_AVG_FLOOR: [("u85_avgpool", 0)],
    Mutation.U85_TRANSPOSE_SWAP: [("u85_permute", 0)],
    Mutation.U85_FWD_NO_INTERLEAVE: [("u85_conv_big", 1)],  # FWD shared by 2 decoders
    Mutation.U85_SPARSE_AS_DENSE: [("u85_conv_sparse", 0), ("u85_conv_sparse_a16w8", 1)],
    Mutation.U85_CMP_TRUE_ONE: [("u85_where_gt", 0)],
    Mutation.U85_B64_LOW32: [("u85_conv_transpose_a16w8", 0)],
    Mutation.U85_GATHER_NO_INDEX: [("u85_index_select_h", 1), ("u85_index_put", 0)],
    Mutation.U85_ACC_KEEP_AS_RESET: [("u85_conv_k7_s4", 1), ("u85_maxpool_k5_s4", 0)],
    Mutation.U85_CONV_IFM2_IGNORED: [("u85_conv3d", 0), ("u85_conv3d_a16w8", 1)],
}
CAUGHT = [(m, name, config) for m, cases in CAUGHT_BY.items() for name, config in cases]


@pytest.mark.parametrize(
    ("mutation", "name", "config"),
    CAUGHT,
    ids=[f"{m.name}-{name}-{config}" for m, name, config in CAUGHT],
)
def test_u85_wrong_rule_is_caught(mutation: Mutation, name: str, config: int) -> None:
    accel, mode = CONFIGS[config]
    blocks, tosa = _blocks(name, accel, mode)
    rng = np.random.default_rng(99)
    inputs_list = [random_inputs(blocks, rng) for _ in range(3)]
    fast = fast_scratch(mode)

    def bad_values() -> int:
        # each mutation must show as wrong output values against the TOSA reference: a
        # VnpuError (the stream derailed for some other reason) is not the failure the
        # mutation is meant to cause, so it propagates and fails the test
        total = 0
        for inputs in inputs_list:
            ours = run_delegate(blocks, inputs, fast_scratch_size=fast)
            total += mismatches(ours, tosa_run(tosa, inputs))
        return total

    VirtualNpu.set_mutation(mutation)
    try:
        bad = bad_values()
    finally:
        VirtualNpu.set_mutation(Mutation.NONE)
    assert bad > 0, f"{mutation!r} on {name} ({accel} {mode}): the comparison did not notice"
    assert bad_values() == 0
