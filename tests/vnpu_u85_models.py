"""The Ethos-U85 development corpus of the virtual NPU tests.

Each model is lowered once with torch + ExecuTorch for ethos-u85-256 / Shared_Sram
(`vnpu_models.lowered`: cached outside the repository, keyed by what made it), which
keeps the TOSA graph Vela compiled. Lowering is the slow part; the other MAC
configurations and memory modes come from compiling that same TOSA graph again with
Vela (`compiled`), the way the ExecuTorch backend does (`vela_compile`), also cached.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import importlib.metadata
import io
import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ethosu_kit.core.writer import file_lock
from ethosu_kit.pte import VelaBlocks
from vnpu_models import (
    BY_NAME as U55_MODELS,
)
from vnpu_models import (
    IMG,
    SEQ,
    OpModel,
    _binary,
    _conv,
    _fn,
    _mod,
    _seq,
    lowered,
)

U85 = "ethos-u85-256"
SYSTEM_CONFIG = "Ethos_U85_SYS_DRAM_Mid"
# (MAC configuration, memory mode) every corpus model runs on; the first is what it is lowered for
CONFIGS: tuple[tuple[str, str], ...] = (
    ("ethos-u85-256", "Shared_Sram"),
    ("ethos-u85-512", "Dedicated_Sram"),
    ("ethos-u85-128", "Dedicated_Sram"),
    ("ethos-u85-2048", "Shared_Sram"),
    ("ethos-u85-1024", "Sram_Only"),
)
# off-board region 2 (Dedicated_Sram's fast scratch): what the planner gives an unbounded mode
FAST_SCRATCH = 4 * 1024 * 1024


def _u85(base: OpModel, name: str | None = None) -> OpModel:
    return OpModel(
        f"u85_{name or base.name}",
        base.build,
        base.shapes,
        base.activation_bits,
        accelerator=U85,
        memory_mode="Shared_Sram",
    )


def _new(
    name: str, build: Callable[[], Any], shapes: tuple[tuple[int, ...], ...], bits: int = 8
) -> OpModel:
    return OpModel(f"u85_{name}", build, shapes, bits, accelerator=U85, memory_mode="Shared_Sram")


def _permute(*dims: int) -> Callable[[], Any]:
    def build() -> Any:
        import torch

        class Permute(torch.nn.Module):
            def forward(self, x: Any) -> Any:
                return x.permute(*dims) + 0.0

        return Permute()

    return build


def _flip(*dims: int) -> Callable[[], Any]:
    def build() -> Any:
        import torch

        class Flip(torch.nn.Module):
            def forward(self, x: Any) -> Any:
                return torch.flip(x, dims=list(dims))

        return Flip()

    return build


def _unary(fn: Callable[[Any], Any]) -> Callable[[], Any]:
    """A module applying `fn` to its input."""

    def build() -> Any:
        import torch

        class Unary(torch.nn.Module):
            def forward(self, x: Any) -> Any:
                return fn(x)

        return Unary()

    return build


def _binary_fn(fn: Callable[[Any, Any], Any]) -> Callable[[], Any]:
    """A module applying `fn` to its two inputs."""

    def build() -> Any:
        import torch

        class BinaryFn(torch.nn.Module):
            def forward(self, x: Any, y: Any) -> Any:
                return fn(x, y)

        return BinaryFn()

    return build


def _pad(x: Any) -> Any:
    import torch.nn.functional as F

    return F.pad(x, (1, 2, 0, 1))


def _chunk_cat(x: Any) -> Any:
    import torch

    return torch.cat(x.chunk(2, dim=1)[::-1], dim=1)


def _two_tables(x: Any) -> Any:
    import torch

    return torch.tanh(torch.sigmoid(x) * 3.0)


def _reduce(op: str, dim: int) -> Callable[[], Any]:
    def build() -> Any:
        import torch

        class Reduce(torch.nn.Module):
            def forward(self, x: Any) -> Any:
                return getattr(torch, op)(x, dim=dim, keepdim=True)

        return Reduce()

    return build


def _sparse_conv() -> Any:
    """A convolution whose weights are 2:4 sparse along the input channels (Vela may encode
    them SPARSE_2_4)."""
    import torch
    from torch import nn

    conv = nn.Conv2d(32, 16, 3, padding=1)
    with torch.no_grad():
        w = conv.weight.view(16, 8, 4, 3, 3)
        w[:, :, 1::2] = 0  # two of every four input channels
    return conv


def _maximum_scaled() -> Any:
    """maximum of two operands with very different scales: the IFM scales matter."""
    import torch

    class MaximumScaled(torch.nn.Module):
        def forward(self, x: Any, y: Any) -> Any:
            return torch.maximum(x * 0.1, y * 3.0)

    return MaximumScaled()


def _where(cmp: str) -> Callable[[], Any]:
    """torch.where on a comparison: Vela makes it a compare and a bitwise select."""

    def build() -> Any:
        import torch

        class Where(torch.nn.Module):
            def forward(self, x: Any, y: Any) -> Any:
                return torch.where(getattr(torch, cmp)(x, y), x, y * 0.5)

        return Where()

    return build


def _where_not(x: Any, y: Any) -> Any:
    import torch

    return torch.where(torch.logical_not(x > y), x, y * 0.5)


def _where_xor(x: Any, y: Any) -> Any:
    import torch

    return torch.where(torch.logical_xor(x > 0.1, y > 0.2), x, y * 0.5)


def _where_or(x: Any, y: Any) -> Any:
    import torch

    return torch.where(torch.logical_or(x > 0, y < 0.1), x, y * 0.5)


def _index_select(dim: int, *index: int) -> Callable[[], Any]:
    """x.index_select with constant indices: Vela makes it a gather DMA (DMA index mode)."""

    def build() -> Any:
        import torch

        class IndexSelect(torch.nn.Module):
            def forward(self, x: Any) -> Any:
                return x.index_select(dim, torch.tensor(index))

        return IndexSelect()

    return build


def _index_put(*index: int) -> Callable[[], Any]:
    """x[:, index] = y: Vela makes it a copy and a scatter DMA (destination index mode)."""

    def build() -> Any:
        import torch

        class IndexPut(torch.nn.Module):
            def forward(self, x: Any, y: Any) -> Any:
                x = x.clone()
                x[:, torch.tensor(index)] = y
                return x

        return IndexPut()

    return build


def _where_ge_int(x: Any, y: Any) -> Any:
    import torch

    return torch.where(x >= y, x & 255, y)


def _conv_scales() -> Any:
    """A 1x1 convolution whose output channels' weights span eight decades (10^-4 .. 10^3),
    the last one all zero: extreme per-channel scales and an empty channel."""
    import torch
    from torch import nn

    conv = nn.Conv2d(8, 9, 1)
    with torch.no_grad():
        for i in range(8):
            conv.weight[i].mul_(10.0 ** (i - 4))
        conv.weight[8].zero_()
        conv.bias[8] = 0.0
    return conv


def _embedding() -> Any:
    from torch import nn

    return nn.Embedding(100, 16)


def _int_op(model: OpModel, input_dtype: str) -> OpModel:
    """Integer tensors straight into the NPU (no quantization): bitwise and compare paths."""
    return dataclasses.replace(model, input_dtype=input_dtype)


def _residual_cnn() -> Any:
    import torch
    from torch import nn

    class ResidualCnn(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.stem = nn.Conv2d(3, 16, 3, padding=1)
            self.a1 = nn.Conv2d(16, 16, 3, padding=1)
            self.a2 = nn.Conv2d(16, 16, 3, padding=1)
            self.down = nn.Conv2d(16, 32, 3, stride=2, padding=1)
            self.b1 = nn.Conv2d(32, 32, 3, padding=1)
            self.head = nn.Linear(32, 10)

        def forward(self, x: Any) -> Any:
            x = torch.relu(self.stem(x))
            x = torch.relu(x + self.a2(torch.relu(self.a1(x))))
            x = torch.relu(self.down(x))
            x = torch.relu(x + self.b1(x))
            return self.head(torch.mean(x, dim=(2, 3)))

    return ResidualCnn()


def _dw_separable() -> Any:
    from torch import nn

    def block(cin: int, cout: int, stride: int) -> list[Any]:
        return [
            nn.Conv2d(cin, cin, 3, stride=stride, padding=1, groups=cin),
            nn.ReLU6(),
            nn.Conv2d(cin, cout, 1),
            nn.ReLU6(),
        ]

    return nn.Sequential(
        nn.Conv2d(3, 16, 3, stride=2, padding=1),
        nn.ReLU6(),
        *block(16, 24, 1),
        *block(24, 32, 2),
        *block(32, 48, 1),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(48, 8),
    )


def _attention() -> Any:
    """One self-attention block over 16 tokens of 32 features: q/k/v, softmax, projection."""
    import torch
    from torch import nn

    class Attention(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.q = nn.Linear(32, 32)
            self.k = nn.Linear(32, 32)
            self.v = nn.Linear(32, 32)
            self.o = nn.Linear(32, 32)

        def forward(self, x: Any) -> Any:
            q, k, v = self.q(x), self.k(x), self.v(x)
            att = torch.softmax(torch.matmul(q, k.transpose(1, 2)) * 0.17, dim=-1)
            return x + self.o(torch.matmul(att, v))

    return Attention()


def _transformer_layer() -> Any:
    """torch's own encoder layer: multi-head attention, layer norms, a ReLU feed-forward."""
    from torch import nn

    return nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, batch_first=True)


def _se_block() -> Any:
    """A MobileNetV3 block: expand, 5x5 depthwise, hardswish, squeeze-excite, project, add."""
    import torch
    from torch import nn
    from torch.nn import functional as F

    class SeBlock(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.expand = nn.Conv2d(16, 64, 1)
            self.dw = nn.Conv2d(64, 64, 5, padding=2, groups=64)
            self.squeeze = nn.Conv2d(64, 16, 1)
            self.excite = nn.Conv2d(16, 64, 1)
            self.project = nn.Conv2d(64, 16, 1)

        def forward(self, x: Any) -> Any:
            y = F.hardswish(self.dw(F.hardswish(self.expand(x))))
            w = self.excite(torch.relu(self.squeeze(F.adaptive_avg_pool2d(y, 1))))
            return x + self.project(y * F.hardsigmoid(w))

    return SeBlock()


def _kws_dscnn() -> Any:
    """A keyword-spotting DS-CNN (MLPerf Tiny's shape): a 10x4 stride-2 stem on 49x10 MFCCs."""
    from torch import nn

    layers: list[Any] = [nn.Conv2d(1, 32, (10, 4), stride=2, padding=(5, 1)), nn.ReLU()]
    for _ in range(3):
        layers += [
            nn.Conv2d(32, 32, 3, padding=1, groups=32),
            nn.ReLU(),
            nn.Conv2d(32, 32, 1),
            nn.ReLU(),
        ]
    return nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 12))


def _decoder() -> Any:
    """An upsampling decoder: conv, 2x nearest upsampling, conv, 2x upsampling, conv."""
    from torch import nn

    return nn.Sequential(
        nn.Conv2d(16, 16, 3, padding=1),
        nn.ReLU(),
        nn.Upsample(scale_factor=2, mode="nearest"),
        nn.Conv2d(16, 8, 3, padding=1),
        nn.ReLU(),
        nn.Upsample(scale_factor=2, mode="nearest"),
        nn.Conv2d(8, 4, 3, padding=1),
    )


# one-operation models: the U55 list (lowered for the U85) and what the U85 adds
OP_MODELS: tuple[OpModel, ...] = (
    *(
        _u85(U55_MODELS[n])
        for n in (
            "conv3x3_pad",
            "conv1x1",
            "conv5x5_s2",
            "conv3x3_dil2",
            "conv_deep",
            "depthwise_s2",
            "linear",
            "add",
            "add_bcast",
            "sub_rev_const",
            "mul_bcast",
            "maximum",
            "maxpool",
            "avgpool",
            "avgpool_pad",
            "mean",
            "clamp",
            "sigmoid",
            "tanh",
            "softmax",
            "concat",
            "permute",
            "conv_a16w8",
            "sigmoid_a16w8",
            "elu",
            "layer_norm",
            "group_norm",
            "mul_bcast_both",
            "bmm",
            "tanh_a16w8",
            "exp_a16w8",
            "softmax_a16w8",
            "mul_a16w8",
            "maxpool_a16w8",
            "avgpool_a16w8",
            "mean_a16w8",
            "depthwise_a16w8",
            "layer_norm_a16w8",
        )
    ),
    _new("permute_hw", _permute(0, 1, 3, 2), (IMG,)),
    _new("permute_chw", _permute(0, 3, 1, 2), ((1, 8, 6, 10),)),
    _new("flip_w", _flip(3), (IMG,)),
    _new("flip_h", _flip(2), (IMG,)),
    _new("flip_c", _flip(1), (IMG,)),
    _new("abs", _unary(lambda x: x.abs()), (IMG,)),
    _new("minimum", _binary("minimum"), (IMG, IMG)),
    _new("maximum_scaled", _maximum_scaled, (IMG, IMG)),
    _new("minimum_bcast", _binary("minimum"), (IMG, (1, 1, 10, 1))),
    _new("leaky_relu", _mod("LeakyReLU", 0.1), (IMG,)),
    _new("hardswish", _mod("Hardswish"), (IMG,)),
    _new("gelu", _mod("GELU"), (IMG,)),
    _new("silu", _mod("SiLU"), (IMG,)),
    _new("mul_scalar", _unary(lambda x: x * 0.37), (IMG,)),
    _new("add_scalar", _unary(lambda x: x + 0.5), (IMG,)),
    _new("conv_grouped", _conv(8, 16, 3, padding=1, groups=2), (IMG,)),
    _new("conv_1x7", _conv(8, 8, (1, 7), padding=(0, 3)), (IMG,)),
    _new("conv9x9", _conv(4, 8, 9, padding=4), ((1, 4, 12, 12),)),
    _new("conv_s2_1x1", _conv(8, 16, 1, stride=2), (IMG,)),
    _new("conv_wide_in", _conv(96, 16, 1), ((1, 96, 6, 6),)),
    _new("depthwise5x5", _conv(16, 16, 5, padding=2, groups=16), ((1, 16, 9, 9),)),
    _new("depthwise_mult2", _conv(8, 16, 3, padding=1, groups=8), (IMG,)),
    _new("maxpool2", _mod("MaxPool2d", 2), (IMG,)),
    _new("sum_c", _reduce("sum", 1), (IMG,)),
    _new("amax_c", _reduce("amax", 1), (IMG,)),
    _new("linear_a16w8", _mod("Linear", 32, 16), ((4, 32),), bits=16),
    _new("add_a16w8", _binary("add"), (IMG, IMG), bits=16),
    _new("softmax_c", _fn("softmax", dim=1), ((1, 8, 4, 4),)),
    _new("conv_transpose", _mod("ConvTranspose2d", 8, 8, 2, stride=2), ((1, 8, 5, 5),)),
    _new("upsample_nearest", _mod("Upsample", scale_factor=2, mode="nearest"), (IMG,)),
    _new("upsample_bilinear", _mod("Upsample", scale_factor=2, mode="bilinear"), (IMG,)),
    _new("matmul", _binary("matmul"), ((1, 8, 16), (1, 16, 12))),
    _new("conv_sparse", _sparse_conv, ((1, 32, 8, 8),)),
    _new("conv_big", _conv(64, 96, 3, padding=1), ((1, 64, 6, 6),)),
    _new("amin_c", _reduce("amin", 1), (IMG,)),
    _new("where_gt", _where("gt"), (IMG, IMG)),
    _new("where_ge", _where("ge"), (IMG, IMG)),
    _new("where_eq", _where("eq"), (IMG, IMG)),
    _new("where_not", _binary_fn(_where_not), (IMG, IMG)),
    _new("where_xor", _binary_fn(_where_xor), (IMG, IMG)),
    _new("slice_stride", _unary(lambda x: x[:, :, ::2, :] + 0.0), (IMG,)),
    _new("pad", _unary(_pad), (IMG,)),
    _new("repeat", _unary(lambda x: x.repeat(1, 1, 2, 1)), (IMG,)),
    _new("div", _binary_fn(lambda x, y: x / (y.abs() + 1.0)), (IMG, IMG)),
    _new("rsqrt", _unary(lambda x: (x.abs() + 0.1).rsqrt()), (IMG,)),
    _new("chunk_cat", _unary(_chunk_cat), (IMG,)),
    # what another corpus would hold (issue 11): table operations, norms, both-sided
    # broadcasts, batched matrix products, pool and convolution geometry, int16 everywhere
    _new("exp", _unary(lambda x: x.exp()), (IMG,)),
    _new("log", _unary(lambda x: (x.abs() + 0.1).log()), (IMG,)),
    _new("mul", _binary("mul"), (IMG, IMG)),
    _new("sub", _binary("sub"), (IMG, IMG)),
    _new("avgpool_incl_pad", _mod("AvgPool2d", 3, stride=2, padding=1), (IMG,)),
    _new("adaptive_avg3", _mod("AdaptiveAvgPool2d", 3), (IMG,)),
    _new("maxpool_ceil", _mod("MaxPool2d", 3, stride=2, ceil_mode=True), (IMG,)),
    _new("maxpool_dil", _mod("MaxPool2d", 3, stride=1, dilation=2), (IMG,)),
    _new("mean_c", _reduce("mean", 1), (IMG,)),
    _new("var", _unary(lambda x: x.var(dim=1, keepdim=True)), (IMG,)),
    _new("matmul_4d", _binary("matmul"), ((1, 2, 8, 16), (1, 2, 16, 8))),
    _new("linear_3d", _mod("Linear", 32, 20), ((2, 5, 32),)),
    _new("conv_dil_s2", _conv(8, 8, 3, stride=2, dilation=2, padding=2), ((1, 8, 13, 13),)),
    _new("conv_s3", _conv(8, 8, 3, stride=3), ((1, 8, 11, 11),)),
    _new("conv_same_even", _conv(8, 8, 4, padding="same"), (IMG,)),
    _new("conv1d", _mod("Conv1d", 8, 16, 3, padding=1), ((1, 8, 20),)),
    _new("conv_batch2", _conv(8, 16, 3, padding=1), ((2, 8, 10, 10),)),
    _new("conv_transpose_k3", _mod("ConvTranspose2d", 8, 8, 3, 2, 1, 1), ((1, 8, 5, 5),)),
    _new("upsample_bilinear_ac", _mod("Upsample", None, 2, "bilinear", True), (IMG,)),
    _new("where_lt", _where("lt"), (IMG, IMG)),
    _new("where_ne", _where("ne"), (IMG, IMG)),
    _new("where_or", _binary_fn(_where_or), (IMG, IMG)),
    _new("masked_fill", _binary_fn(lambda x, y: x.masked_fill(y > 0.3, -0.5)), (IMG, IMG)),
    _new("cumsum", _unary(lambda x: x.cumsum(dim=3)), (IMG,)),
    _new("log_softmax", _fn("log_softmax", dim=-1), ((1, 4, 16),)),
    _new("scale_big", _unary(lambda x: x * 100.0), (IMG,)),
    _new("add_scales", _binary_fn(lambda x, y: x * 0.01 + y * 50.0), (IMG, IMG)),
    _new("index_select", _index_select(1, 0, 3, 5), (IMG,)),
    _new("index_select_one", _index_select(1, 6), (IMG,)),
    _new("index_select_h", _index_select(2, 9, 0, 4, 4), (IMG,)),
    _new("index_select_a16w8", _index_select(1, 0, 3, 5), (IMG,), 16),
    _new("index_put", _index_put(1, 5), (IMG, (1, 2, 10, 10))),
    _new("index_put_one", _index_put(3), (IMG, (1, 1, 10, 10))),
    _new("index_put_a16w8", _index_put(1, 5), (IMG, (1, 2, 10, 10)), 16),
    _new("conv_k7_s4", _conv(8, 8, 7, stride=4, padding=3), ((1, 8, 23, 23),)),
    _new("conv_k5_s4", _conv(8, 8, 5, stride=4, padding=2), ((1, 8, 17, 17),)),
    _new("conv3d", _mod("Conv3d", 4, 8, 3, padding=1), ((1, 4, 4, 6, 6),)),
    _new("conv3d_a16w8", _mod("Conv3d", 4, 8, 3, padding=1), ((1, 4, 4, 6, 6),), 16),
    _new("conv_scales", _conv_scales, (IMG,)),
    _new("conv_scales_a16w8", _conv_scales, (IMG,), 16),
    _new("maxpool_k5_s4", _mod("MaxPool2d", 5, stride=4, padding=2), ((1, 8, 17, 17),)),
    _new("conv_k7_s4_a16w8", _conv(8, 8, 7, stride=4, padding=3), ((1, 8, 23, 23),), 16),
    _new("conv_sparse_a16w8", _sparse_conv, ((1, 32, 8, 8),), 16),
    _new("upsample_bilinear_ac_a16w8", _mod("Upsample", None, 2, "bilinear", True), (IMG,), 16),
    _int_op(_new("and_i32", _binary_fn(lambda x, y: x & y), (IMG, IMG)), "int32"),
    _int_op(_new("xor_i8", _binary_fn(lambda x, y: x ^ y), (IMG, IMG)), "int8"),
    _int_op(_new("maximum_i32", _binary("maximum"), (IMG, IMG)), "int32"),
    _int_op(_new("where_ge_i32", _binary_fn(_where_ge_int), (IMG, IMG)), "int32"),
    _new("conv_transpose_a16w8", _mod("ConvTranspose2d", 8, 8, 2, stride=2), ((1, 8, 5, 5),), 16),
    _new("conv_transpose_k3_a16w8", _mod("ConvTranspose2d", 8, 8, 3, 2, 1, 1), ((1, 8, 5, 5),), 16),
    _new("conv_deep_a16w8", _conv(48, 40, 3, padding=1), ((1, 48, 6, 6),), 16),
    _new("matmul_a16w8", _binary("matmul"), ((1, 8, 16), (1, 16, 12)), 16),
    _new("upsample_bilinear_a16w8", _mod("Upsample", scale_factor=2, mode="bilinear"), (IMG,), 16),
    _new("where_gt_a16w8", _where("gt"), (IMG, IMG), 16),
)

WHOLE_MODELS: tuple[OpModel, ...] = (
    _new("residual_cnn", _residual_cnn, ((1, 3, 16, 16),)),
    _new("dw_separable", _dw_separable, ((1, 3, 32, 32),)),
    _new("attention", _attention, ((1, 16, 32),)),
    _new("decoder", _decoder, ((1, 16, 6, 6),)),
    _u85(U55_MODELS["mobilenet"]),
    _u85(U55_MODELS["block"]),
    _u85(U55_MODELS["tiny_cnn"]),
    _u85(U55_MODELS["residual_mul"]),
    _new("transformer_layer", _transformer_layer, (SEQ,)),
    _new("se_block", _se_block, ((1, 16, 12, 12),)),
    _new("kws_dscnn", _kws_dscnn, ((1, 1, 49, 10),)),
    _new("residual_cnn_a16w8", _residual_cnn, ((1, 3, 16, 16),), 16),
)
# Vela miscompiles these (not in the corpus; test_u85_vela_miscompiles): a slice of the
# innermost axis folded into the reduction that follows keeps the unsliced depth; an int16
# Linear-ReLU-Linear over tokens reads its input through the second Linear's 4x4 view; a
# padded 5x5 stride-4 convolution after ExecuTorch's slice (16x16 -> 15x15) loses its padding;
# two int16 table operations in a row load both tables to lutram 0 (one table used twice)
SLICE_SUM = _new("slice_sum", _unary(lambda x: x[..., 3:7].sum(dim=3, keepdim=True)), (IMG,))
MLP_RELU_A16W8 = _new(
    "mlp_relu_a16w8",
    _seq(_mod("Linear", 32, 64), _mod("ReLU"), _mod("Linear", 64, 32)),
    (SEQ,),
    16,
)
CONV_K5_S4_SLICED = _new(
    "conv_k5_s4_sliced", _conv(8, 8, 5, stride=4, padding=2), ((1, 8, 16, 16),)
)
TWO_TABLES_A16W8 = _new("two_tables_a16w8", _unary(_two_tables), ((1, 8, 6, 6),), 16)
MISCOMPILED = (SLICE_SUM, MLP_RELU_A16W8, CONV_K5_S4_SLICED, TWO_TABLES_A16W8)
# an int32 index input (a gather DMA whose indices the caller gives): only [0, 100) is defined
EMBEDDING = dataclasses.replace(
    _new("embedding", _embedding, ((1, 8),)), input_dtype="int32", quantize=True
)
BY_NAME = {m.name: m for m in (*OP_MODELS, *WHOLE_MODELS, *MISCOMPILED, EMBEDDING)}


def vela_flags(accelerator: str, memory_mode: str) -> list[str]:
    """What ExecuTorch's EthosUCompileSpec passes Vela for this target (default system config)."""
    return [
        f"--accelerator-config={accelerator}",
        "--config=Arm/vela.ini",
        "--output-format=raw",
        f"--system-config={SYSTEM_CONFIG}",
        f"--memory-mode={memory_mode}",
    ]


def tosa_graph(model: OpModel) -> bytes:
    """The TOSA graph of the model's (single) Ethos-U partition."""
    return (lowered(model) / "out.tosa").read_bytes()


@contextlib.contextmanager
def _stdout_to(path: Path) -> Iterator[None]:
    """Send file descriptor 1 to `path`: regor prints its register listing from C++."""
    sys.stdout.flush()
    saved = os.dup(1)
    with path.open("wb") as f:
        os.dup2(f.fileno(), 1)
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                yield
        finally:
            sys.stdout.flush()
            os.dup2(saved, 1)
            os.close(saved)


def compiled(model: OpModel, accelerator: str, memory_mode: str) -> VelaBlocks:
    """The delegate payload Vela makes of the model's TOSA graph for this target (cached)."""
    from ethosu_kit.pte.vela import parse_vela_blocks

    out = _compiled_path(model, accelerator, memory_mode)
    return parse_vela_blocks(out.read_bytes(), str(out), "forward", 0, lambda key: None)


def vela_listing(model: OpModel, accelerator: str, memory_mode: str) -> str:
    """Vela's --verbose-register-command-stream of that compilation (the decoder's oracle)."""
    return _compiled_path(model, accelerator, memory_mode).with_suffix(".lst").read_text()


def _compiled_path(model: OpModel, accelerator: str, memory_mode: str) -> Path:
    folder = lowered(model)
    h = hashlib.sha256()
    for part in (accelerator, memory_mode, importlib.metadata.version("ethos-u-vela")):
        h.update(part.encode() + b"\0")
    out = folder / f"vela-{accelerator}-{memory_mode}-{h.hexdigest()[:12]}.bin"
    if out.is_file():
        return out
    with file_lock(out.with_suffix(".lock")):
        if out.is_file():
            return out
        from executorch.backends.arm.arm_vela import vela_compile

        tosa = (folder / "out.tosa").read_bytes()
        flags = [*vela_flags(accelerator, memory_mode), "--verbose-register-command-stream"]
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".vela-")
        os.close(fd)
        listing = Path(tmp + ".lst")
        try:
            with _stdout_to(listing):
                result = vela_compile(tosa, flags)
            Path(tmp).write_bytes(result.processed_bytes)
            listing.replace(out.with_suffix(".lst"))
            Path(tmp).replace(out)
        finally:
            Path(tmp).unlink(missing_ok=True)
            listing.unlink(missing_ok=True)
    return out


def fast_scratch(memory_mode: str) -> int:
    return FAST_SCRATCH if memory_mode.startswith("Dedicated_Sram") else 0
