"""One-operation models for the virtual NPU tests, lowered with the TOSA graph kept.

Each `OpModel` is lowered once for its target (ethos-u55-128 / Shared_Sram unless it
says otherwise) with
`dump_dir` set, so the folder holds the .pte and the TOSA graph Vela compiled
(`out.tosa`). Lowered folders are cached on disk (`$ETHOSU_KIT_TEST_CACHE/vnpu`,
else `~/.cache/ethosu-kit/test-models/vnpu`), keyed by the builder's source, the lowering helper's
source and the torch/executorch versions, written to a temporary folder and renamed.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.metadata
import inspect
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ethosu_kit.core.writer import file_lock
from models import lowered_cache_root, lowering_source

REPO = Path(__file__).resolve().parents[1]
TARGET_ACCEL = "ethos-u55-128"
TARGET_MODE = "Shared_Sram"


@dataclass(frozen=True)
class OpModel:
    name: str
    build: Callable[[], Any]  # -> torch.nn.Module
    shapes: tuple[tuple[int, ...], ...]
    activation_bits: int = 8
    accelerator: str = TARGET_ACCEL  # what the test lowers it for (vela --accelerator-config)
    memory_mode: str = TARGET_MODE
    # "int8"/"int32": integer tensors (in [0, 100)) straight into the delegate, by default
    # not quantized (quantize=True: the float weights are, e.g. an embedding's table)
    input_dtype: str = "float32"
    quantize: bool | None = None


def _conv(cin: int, cout: int, k: int | tuple[int, int], **kw: Any) -> Callable[[], Any]:
    def build() -> Any:
        from torch import nn

        return nn.Conv2d(cin, cout, k, **kw)

    return build


def _seq(*make: Callable[[], Any]) -> Callable[[], Any]:
    def build() -> Any:
        from torch import nn

        return nn.Sequential(*(m() for m in make))

    return build


def _fn(name: str, *args: Any, **kw: Any) -> Callable[[], Any]:
    """A module applying torch.<name> (or a tensor method) to its inputs."""

    def build() -> Any:
        import torch

        class Fn(torch.nn.Module):
            def forward(self, *xs: Any) -> Any:
                f = getattr(torch, name)
                return f(*xs, *args, **kw)

        return Fn()

    return build


def _mod(cls: str, *args: Any, **kw: Any) -> Callable[[], Any]:
    def build() -> Any:
        from torch import nn

        return getattr(nn, cls)(*args, **kw)

    return build


def _binary(
    op: str, const_shape: tuple[int, ...] | None = None, reverse: bool = False
) -> Callable[[], Any]:
    def build() -> Any:
        import torch

        class Binary(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                if const_shape is not None:
                    g = torch.Generator().manual_seed(3)
                    self.register_buffer("c", torch.rand(const_shape, generator=g) * 2 - 1)

            def forward(self, x: Any, *rest: Any) -> Any:
                y = rest[0] if rest else self.c
                a, b = (y, x) if reverse else (x, y)
                return getattr(torch, op)(a, b)

        return Binary()

    return build


def _softmax() -> Any:
    import torch

    class Softmax(torch.nn.Module):
        def forward(self, x: Any) -> Any:
            return torch.softmax(x, dim=-1)

    return Softmax()


def _concat() -> Any:
    import torch

    class Concat(torch.nn.Module):
        def forward(self, x: Any, y: Any) -> Any:
            return torch.cat([x, y], dim=1)

    return Concat()


def _permute() -> Any:
    import torch

    class Permute(torch.nn.Module):
        def forward(self, x: Any) -> Any:
            return x.permute(0, 2, 3, 1) * 1.0 + 0.0

    return Permute()


def _mean() -> Any:
    import torch

    class Mean(torch.nn.Module):
        def forward(self, x: Any) -> Any:
            return torch.mean(x, dim=(2, 3), keepdim=True)

    return Mean()


def _clamp() -> Any:
    import torch

    class Clamp(torch.nn.Module):
        def forward(self, x: Any) -> Any:
            return torch.clamp(x, -0.25, 0.5)

    return Clamp()


def _layer_norm() -> Any:
    from torch import nn

    return nn.LayerNorm(32)


def _group_norm() -> Any:
    from torch import nn

    return nn.GroupNorm(2, 8)


def _linear() -> Any:
    from torch import nn

    return nn.Linear(64, 24)


def _block() -> Any:
    """A small residual block: conv, depthwise, add, relu, global pool, linear."""
    import torch
    from torch import nn

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.c1 = nn.Conv2d(3, 16, 3, padding=1)
            self.dw = nn.Conv2d(16, 16, 3, padding=1, groups=16)
            self.pw = nn.Conv2d(16, 16, 1)
            self.fc = nn.Linear(16, 10)

        def forward(self, x: Any) -> Any:
            x = torch.relu(self.c1(x))
            x = x + self.pw(torch.relu(self.dw(x)))
            x = torch.mean(x, dim=(2, 3))
            return self.fc(x)

    return Block()


def _mobilenet() -> Any:
    """MobileNet-V1-sized: 0.5 MB of int8 weights, ~0.8 MB of scratch at 96x96 (one delegate)."""
    from torch import nn

    layers: list[Any] = [nn.Conv2d(3, 32, 3, stride=2, padding=1), nn.ReLU()]
    for cin, cout, stride in (
        (32, 64, 1),
        (64, 128, 2),
        (128, 128, 1),
        (128, 256, 2),
        (256, 256, 1),
        (256, 512, 2),
        (512, 512, 1),
    ):
        layers += [
            nn.Conv2d(cin, cin, 3, stride=stride, padding=1, groups=cin),
            nn.ReLU(),
            nn.Conv2d(cin, cout, 1),
            nn.ReLU(),
        ]
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(512, 10)]
    return nn.Sequential(*layers)


def _tiny_cnn() -> Any:
    """The kit's example model (ethosu_kit.aot.examples), as `ethosu-kit run-example` lowers it."""
    from ethosu_kit.aot.examples import example_model

    return example_model()[0]


def _mlp() -> Any:
    from torch import nn

    return nn.Sequential(
        nn.Linear(48, 64), nn.ReLU(), nn.Linear(64, 32), nn.Sigmoid(), nn.Linear(32, 8)
    )


def _residual_mul() -> Any:
    """Two branches joined by add and mul, a tanh and a max pool: rescaling everywhere."""
    import torch
    from torch import nn

    class ResidualMul(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.a = nn.Conv2d(4, 8, 3, padding=1)
            self.b = nn.Conv2d(4, 8, 1)
            self.pool = nn.MaxPool2d(2)

        def forward(self, x: Any) -> Any:
            a = torch.relu(self.a(x))
            b = torch.tanh(self.b(x))
            return self.pool(a + a * b)

    return ResidualMul()


MOBILENET = OpModel("mobilenet", _mobilenet, ((1, 3, 96, 96),))


def _mobilenet_v2() -> Any:
    """MobileNetV2 (width 1.0) at 224x224: 3.5 M parameters, inverted residuals, ReLU6."""
    from torch import nn

    class InvertedResidual(nn.Module):
        def __init__(self, cin: int, cout: int, stride: int, expand: int) -> None:
            super().__init__()
            hidden = cin * expand
            layers: list[Any] = []
            if expand != 1:
                layers += [
                    nn.Conv2d(cin, hidden, 1, bias=False),
                    nn.BatchNorm2d(hidden),
                    nn.ReLU6(),
                ]
            layers += [
                nn.Conv2d(hidden, hidden, 3, stride, 1, groups=hidden, bias=False),
                nn.BatchNorm2d(hidden),
                nn.ReLU6(),
                nn.Conv2d(hidden, cout, 1, bias=False),
                nn.BatchNorm2d(cout),
            ]
            self.body = nn.Sequential(*layers)
            self.residual = stride == 1 and cin == cout

        def forward(self, x: Any) -> Any:
            return x + self.body(x) if self.residual else self.body(x)

    layers: list[Any] = [nn.Conv2d(3, 32, 3, 2, 1, bias=False), nn.BatchNorm2d(32), nn.ReLU6()]
    cin = 32
    for expand, cout, repeats, stride in (
        (1, 16, 1, 1),
        (6, 24, 2, 2),
        (6, 32, 3, 2),
        (6, 64, 4, 2),
        (6, 96, 3, 1),
        (6, 160, 3, 2),
        (6, 320, 1, 1),
    ):
        for i in range(repeats):
            layers.append(InvertedResidual(cin, cout, stride if i == 0 else 1, expand))
            cin = cout
    layers += [nn.Conv2d(cin, 1280, 1, bias=False), nn.BatchNorm2d(1280), nn.ReLU6()]
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(1280, 1000)]
    return nn.Sequential(*layers)


# the firmware benchmark's model (issue 11): MobileNetV2 224x224, U55-128 Shared_Sram
MOBILENET_V2 = OpModel("mobilenet_v2", _mobilenet_v2, ((1, 3, 224, 224),))
# whole small models compared with the quantized PyTorch graph (test_vnpu_models.py)
WHOLE_MODELS: tuple[OpModel, ...] = (
    OpModel("tiny_cnn", _tiny_cnn, ((1, 3, 16, 16),)),
    OpModel("mlp", _mlp, ((1, 48),)),
    OpModel("residual_mul", _residual_mul, ((1, 4, 12, 12),)),
)

IMG = (1, 8, 10, 10)
SEQ = (1, 16, 32)
OP_MODELS: tuple[OpModel, ...] = (
    OpModel("conv3x3_pad", _conv(8, 16, 3, padding=1), (IMG,)),
    OpModel("conv1x1", _conv(8, 24, 1), (IMG,)),
    OpModel("conv5x5_s2", _conv(8, 8, 5, stride=2, padding=2), (IMG,)),
    OpModel("conv3x3_dil2", _conv(8, 8, 3, dilation=2, padding=2), (IMG,)),
    OpModel("conv_deep", _conv(48, 40, 3, padding=1), ((1, 48, 6, 6),)),
    OpModel("depthwise_s2", _conv(8, 8, 3, stride=2, padding=1, groups=8), (IMG,)),
    OpModel("linear", _linear, ((2, 64),)),
    OpModel("add", _binary("add"), (IMG, IMG)),
    OpModel("add_bcast", _binary("add"), (IMG, (1, 8, 1, 1))),
    OpModel("sub_rev_const", _binary("sub", (1, 8, 1, 10), reverse=True), (IMG,)),
    OpModel("mul_bcast", _binary("mul"), (IMG, (1, 1, 10, 10))),
    OpModel("maximum", _binary("maximum"), (IMG, IMG)),
    OpModel("maxpool", _mod("MaxPool2d", 3, stride=2, padding=1), (IMG,)),
    OpModel("avgpool", _mod("AvgPool2d", 2), (IMG,)),
    OpModel(
        "avgpool_pad", _mod("AvgPool2d", 3, stride=1, padding=1, count_include_pad=False), (IMG,)
    ),
    OpModel("mean", _mean, (IMG,)),
    OpModel("clamp", _clamp, (IMG,)),
    OpModel("sigmoid", _mod("Sigmoid"), (IMG,)),
    OpModel("tanh", _mod("Tanh"), (IMG,)),
    OpModel("softmax", _softmax, ((1, 4, 16),)),
    OpModel("concat", _concat, (IMG, IMG)),
    OpModel("permute", _permute, (IMG,)),
    OpModel("conv_a16w8", _conv(8, 8, 3, padding=1), (IMG,), activation_bits=16),
    OpModel("sigmoid_a16w8", _mod("Sigmoid"), (IMG,), activation_bits=16),
    OpModel("block", _block, ((1, 3, 12, 12),)),
    # int16 and table operations another corpus would hold (issue 11)
    OpModel("elu", _mod("ELU"), (IMG,)),
    OpModel("layer_norm", _layer_norm, (SEQ,)),
    OpModel("group_norm", _group_norm, (IMG,)),
    OpModel("mul_bcast_both", _binary("mul"), ((1, 8, 1, 10), (1, 1, 10, 1))),
    OpModel("bmm", _binary("bmm"), ((2, 8, 16), (2, 16, 12))),
    OpModel("tanh_a16w8", _mod("Tanh"), (IMG,), activation_bits=16),
    OpModel("exp_a16w8", _fn("exp"), (IMG,), activation_bits=16),
    OpModel("gelu_a16w8", _mod("GELU"), (IMG,), activation_bits=16),
    OpModel("softmax_a16w8", _softmax, ((1, 4, 16),), activation_bits=16),
    OpModel("mul_a16w8", _binary("mul"), (IMG, IMG), activation_bits=16),
    OpModel("maxpool_a16w8", _mod("MaxPool2d", 3, stride=2, padding=1), (IMG,), 16),
    OpModel("avgpool_a16w8", _mod("AvgPool2d", 3, stride=1, padding=1), (IMG,), 16),
    OpModel("mean_a16w8", _mean, (IMG,), activation_bits=16),
    OpModel("depthwise_a16w8", _conv(8, 8, 3, padding=1, groups=8), (IMG,), 16),
    OpModel("layer_norm_a16w8", _layer_norm, (SEQ,), activation_bits=16),
)
# the Ethos-U55-32's micro-blocks differ (OFM 4 deep, not 8): its MLW weight order is
# another one, which the U55-128 corpus never reaches (a trial corpus found every
# convolution on it wrong)
U55_32_MODELS: tuple[OpModel, ...] = tuple(
    dataclasses.replace(m, name=f"u55_32_{m.name}", accelerator="ethos-u55-32")
    for m in OP_MODELS
    if m.name in ("conv3x3_pad", "conv_a16w8", "depthwise_s2")
)
BY_NAME = {m.name: m for m in (*OP_MODELS, *WHOLE_MODELS, *U55_32_MODELS, MOBILENET, MOBILENET_V2)}


def cache_root() -> Path:
    return lowered_cache_root() / "vnpu"


def _captured_source(value: object) -> str:
    """A value a builder captured, as text stable across sessions: a nested builder by its
    source, a tuple or list of them item by item (`_seq`'s layers), plain data by repr.
    A repr with a memory address (a function or object's default repr) would change every
    session and re-lower the model each time, so it is refused."""
    if callable(value):
        return _builder_source(value)
    if isinstance(value, tuple | list) and any(callable(v) for v in value):
        return "\n".join(_captured_source(v) for v in value)
    text = repr(value)
    if " at 0x" in text:
        raise ValueError(f"a lowered-model cache key would hold a memory address: {text}")
    return text


def _builder_source(build: Callable[[], Any]) -> str:
    """The builder's own source and what its closure captured (arguments or nested builders)."""
    parts = [inspect.getsource(build)]
    for cell in build.__closure__ or ():
        parts.append(_captured_source(cell.cell_contents))
    return "\n".join(parts)


def cache_key(model: OpModel) -> str:
    """Changes when this model, the lowering helper or the torch/executorch versions change."""
    import ethosu_kit.aot.lowering

    h = hashlib.sha256()
    for part in (
        _builder_source(model.build),
        lowering_source(ethosu_kit.aot.lowering),
        model.name,
        repr(model.shapes),
        str(model.activation_bits),
        model.accelerator,
        model.memory_mode,
        importlib.metadata.version("torch"),
        importlib.metadata.version("executorch"),
        *([model.input_dtype, str(model.quantize)] if model.input_dtype != "float32" else []),
    ):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:16]


def module_and_calibration(model: OpModel) -> tuple[Any, list[tuple[Any, ...]]]:
    """The float module (seeded) and the 4 calibration batches in [-1, 1) it is lowered with."""
    import torch

    torch.manual_seed(0)
    module = model.build().eval()
    g = torch.Generator().manual_seed(1)
    if model.input_dtype != "float32":
        dtype = getattr(torch, model.input_dtype)
        calib = [
            tuple(torch.randint(0, 100, s, generator=g, dtype=dtype) for s in model.shapes)
            for _ in range(4)
        ]
        return module, calib
    calib = [tuple(torch.rand(s, generator=g) * 2 - 1 for s in model.shapes) for _ in range(4)]
    return module, calib


def quantized_graph(model: OpModel) -> Any:
    """The QDQ graph `lowered()` hands to the partitioner (ethosu_kit.aot.lowering's own
    quantize step on the same calibration), so its quantize/dequantize parameters are
    the ones the delegate was compiled with."""
    from ethosu_kit.aot.lowering import Target
    from ethosu_kit.aot.lowering import quantized_graph as lowering_quantized_graph

    module, calib = module_and_calibration(model)
    return lowering_quantized_graph(
        module,
        calib[0],
        Target(accelerator=model.accelerator, memory_mode=model.memory_mode),
        calibration=calib,
        activation_bits=model.activation_bits,
    )


def lowered(model: OpModel) -> Path:
    """Folder with `model.pte` and `out.tosa` for this model (lowered once, then cached)."""
    if os.environ.get("ETHOSU_KIT_TEST_NO_TORCH") == "1":  # as on a machine without torch
        import pytest

        pytest.skip("the vnpu model corpus is lowered with torch (ETHOSU_KIT_TEST_NO_TORCH)")
    folder = cache_root() / f"{model.name}-{cache_key(model)}"
    if (folder / "model.pte").is_file():
        return folder
    with file_lock(folder.with_suffix(".lock")):
        if (folder / "model.pte").is_file():
            return folder
        from ethosu_kit.aot.lowering import Target, lower_to_pte

        module, calib = module_and_calibration(model)
        quantize = model.input_dtype == "float32" if model.quantize is None else model.quantize
        tmp = Path(tempfile.mkdtemp(prefix=f".{model.name}-", dir=folder.parent))
        try:
            lower_to_pte(
                module,
                calib[0],
                Target(accelerator=model.accelerator, memory_mode=model.memory_mode),
                tmp / "model.pte",
                quantize=quantize,
                calibration=calib,
                activation_bits=model.activation_bits,
                dump_dir=tmp / "dump",
            )
            shutil.copy(tmp / "dump" / "out.tosa", tmp / "out.tosa")
            tmp.rename(folder)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return folder
