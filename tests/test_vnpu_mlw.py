"""The virtual NPU's own MLW weight decoder against Vela's `ethosu.mlw_codec.decode`.

Streams come from two places: Vela's encoder on weight sets shaped to reach every
coding mode (dense, sparse with zero runs, tiny palettes, the full 9-bit range,
slices longer than one), and the real weight streams of the lowered test models
(found through the DMA that stages them from region 0).
"""

from __future__ import annotations

import numpy as np
import pytest

from ethosu_kit.vnpu.npu import disassemble, mlw_decode
from vnpu_models import BY_NAME
from vnpu_support import op_model

mlw_codec = pytest.importorskip("ethosu.mlw_codec", reason="ethos-u-vela is not installed")


def weight_sets() -> list[tuple[str, list[int]]]:
    rng = np.random.default_rng(7)
    sets = [
        ("dense_int8", rng.integers(-128, 128, 3000)),
        ("int9", rng.integers(-255, 256, 777)),
        ("gaussian", np.clip(rng.normal(0, 12, 5000).round(), -128, 127)),
        ("palette4", rng.choice([-3, 0, 5, 90], 4000)),
        ("single_value", np.full(300, -7)),
        ("zeros", np.zeros(1000)),
        ("one_value", np.array([1])),
    ]
    sparse = rng.integers(-128, 128, 20000)
    sparse[rng.random(20000) < 0.9] = 0
    sets.append(("sparse_90pc", sparse))
    long_runs = np.zeros(40000, dtype=np.int64)
    long_runs[::997] = rng.integers(1, 100, len(long_runs[::997]))
    sets.append(("long_zero_runs", long_runs))
    return [(name, [int(v) for v in values]) for name, values in sets]


@pytest.mark.parametrize(("name", "weights"), weight_sets(), ids=[n for n, _ in weight_sets()])
def test_decodes_vela_encoder_output(name: str, weights: list[int]) -> None:
    stream = bytes(mlw_codec.encode(weights))
    reference = list(mlw_codec.decode(bytearray(stream)))
    ours = mlw_decode(stream).tolist()
    assert ours == reference, f"{name}: first difference at {_first_diff(ours, reference)}"
    assert ours[: len(weights)] == weights


def test_rejects_malformed_stream() -> None:
    stream = bytearray(mlw_codec.encode(list(range(-50, 50))))
    stream[0] = (stream[0] & ~7) | 5  # zero-run divisor 5 is not defined
    with pytest.raises(Exception, match="malformed"):
        mlw_decode(bytes(stream))


def _first_diff(a: list[int], b: list[int]) -> int:
    return next(
        (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
    )


def staged_weight_streams(cmd: list[str], weights: bytes) -> list[bytes]:
    """Region-0 weight streams of each CONV/DEPTHWISE, found through the DMA that staged them."""
    regs: dict[str, int] = {}
    dmas: list[tuple[int, int, int]] = []  # (src, dst, len)
    streams = []
    for line in cmd:
        _, _, name, *fields = line.split(" ")
        values = dict(f.split("=", 1) for f in fields)
        if name.startswith("NPU_SET_"):
            key = name[len("NPU_SET_") :]
            raw = values.get("addr", values.get("length", values.get("region", "0")))
            regs[key] = int(raw) if raw.isdigit() else 0
        elif name == "NPU_OP_DMA_START":
            dmas.append((regs["DMA0_SRC"], regs["DMA0_DST"], regs["DMA0_LEN"]))
        elif name in ("NPU_OP_CONV", "NPU_OP_DEPTHWISE"):
            base, length = regs["WEIGHT_BASE"], regs["WEIGHT_LENGTH"]
            if regs["WEIGHT_REGION"] == 0:
                streams.append(weights[base : base + length])
                continue
            for src, dst, n in reversed(dmas):
                if dst <= base < dst + n:
                    start = src + base - dst
                    streams.append(weights[start : start + length])
                    break
    return streams


@pytest.mark.lowering
@pytest.mark.parametrize(
    "name", ["conv3x3_pad", "conv_deep", "depthwise_s2", "conv_a16w8", "block"]
)
def test_decodes_real_weight_streams(name: str) -> None:
    blocks, _ = op_model(BY_NAME[name])
    streams = staged_weight_streams(disassemble(blocks.command_stream), blocks.weight_data)
    assert streams, f"{name}: no weight stream found"
    for stream in streams:
        assert mlw_decode(stream).tolist() == list(mlw_codec.decode(bytearray(stream)))
