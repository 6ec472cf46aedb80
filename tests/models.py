"""The test models, defined in code so nothing is downloaded.

Each `TestModel` says what to build (a function returning the module, example inputs
and calibration batches) and how to lower it (target, delegate or not, quantize or
not). `tests/conftest.py` lowers each once per session and caches the .pte on disk,
keyed by this file's source of the builder (under `lowered_cache_root()`), the target and
the executorch version.

The builders import torch inside the function, so importing this module is cheap.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from ethosu_kit.aot.lowering import Target
from ethosu_kit.vnpu.build import cache_root as _kit_cache_root

# The lowering code's text as it read before the package moved into subpackages (issue
# 16): the lowered-model caches are keyed by it, and a move is not a change to what is
# lowered. Keeping the keys keeps every cached pte, which matters beyond speed: a model
# (big_input) does not lower to the same bytes twice, and tests/test_golden.py compares
# generated files for the pte's exact bytes.
_MOVED_TEXT = (
    ("from ethosu_kit.core.errors import", "from ethosu_kit.errors import"),
    ("from ethosu_kit.aot.lowering import", "from ethosu_kit.lowering import"),
    ("  # noqa: PLC0415 - optional, slow (lower extra)", ""),
)


def lowering_source(module: ModuleType) -> str:
    """The source of a lowering module (ethosu_kit.aot.*) for a cache key."""
    text = inspect.getsource(module)
    for new, old in _MOVED_TEXT:
        text = text.replace(new, old)
    return text


def lowered_cache_root() -> Path:
    """Where lowered test models are kept: $ETHOSU_KIT_TEST_CACHE, else the kit's user cache
    (~/.cache/ethosu-kit/test-models). Outside the repository, so a fresh clone on the same
    machine reuses them; every entry is keyed by what made it."""
    env = os.environ.get("ETHOSU_KIT_TEST_CACHE")
    return Path(env) if env else _kit_cache_root() / "test-models"


# (module, example inputs, calibration batches)
Built = tuple[Any, tuple[Any, ...], list[tuple[Any, ...]]]


def _calibration(shape: tuple[int, ...], n: int = 4) -> list[tuple[Any, ...]]:
    import torch

    g = torch.Generator().manual_seed(1)
    return [(torch.rand(shape, generator=g) * 2 - 1,) for _ in range(n)]


def small_cnn() -> Built:
    """The kit's own example CNN (two convs, a pool, a linear head): the everyday model."""
    from ethosu_kit.aot.examples import EXAMPLE_INPUT_SHAPE, example_model

    module, inputs = example_model()
    return module, inputs, _calibration(EXAMPLE_INPUT_SHAPE)


BIG_INPUT_SHAPE = (1, 3, 256, 256)  # float32: 768 KiB, more than Corstone-300's 512 KiB ITCM


def big_input() -> Built:
    """A strided conv and a pool over a 768 KiB float input: compiled-in inputs of this
    size overflowed the ITCM when they were plain .rodata."""
    import torch
    from torch import nn

    class BigInput(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv = nn.Conv2d(3, 4, 3, stride=4, padding=1)
            self.pool = nn.AdaptiveAvgPool2d(1)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.pool(torch.relu(self.conv(x)))

    x = torch.rand(BIG_INPUT_SHAPE) * 2 - 1
    return BigInput().eval(), (x,), _calibration(BIG_INPUT_SHAPE, 2)


def cnn_argmax() -> Built:
    """The small CNN followed by argmax, which the Ethos-U partitioner leaves on the CPU."""
    import torch
    from torch import nn

    class CnnArgmax(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv = nn.Conv2d(3, 8, 3, padding=1)
            self.fc = nn.Linear(8 * 8 * 8, 10)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            x = torch.relu(self.conv(x))
            x = self.fc(torch.flatten(x, 1))
            return torch.argmax(x, dim=1)

    torch.manual_seed(0)
    shape = (1, 3, 8, 8)
    return CnnArgmax(), (torch.rand(shape),), _calibration(shape)


def conv_sort_conv() -> Built:
    """A sort between two convs: the partitioner cuts there, giving two Ethos-U delegates
    with different scratch sizes around a CPU `aten::sort.values`."""
    import torch
    from torch import nn

    class ConvSortConv(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
            self.conv2 = nn.Conv2d(8, 8, 3, padding=1)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            x = torch.relu(self.conv1(x))
            return self.conv2(torch.sort(x, dim=3)[0])

    torch.manual_seed(0)
    shape = (1, 3, 8, 8)
    return ConvSortConv(), (torch.rand(shape),), _calibration(shape)


def float_mlp() -> Built:
    """A float MLP for a CPU-only program: portable kernels only, no NPU, no quantization."""
    import torch
    from torch import nn

    class FloatMlp(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc1 = nn.Linear(16, 32)
            self.fc2 = nn.Linear(32, 4)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.fc2(torch.relu(self.fc1(x)))

    torch.manual_seed(0)
    shape = (1, 16)
    return FloatMlp(), (torch.rand(shape),), _calibration(shape)


def wide_conv() -> Built:
    """A conv whose 3 MiB int8 output cannot fit Corstone-300's 2 MiB SRAM scratch.

    A strided conv after it (on the NPU, unlike a large average pool) keeps the
    model's output and the CPU-side planned buffers small, so only the NPU scratch
    is too big.
    """
    import torch
    from torch import nn

    class WideConv(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv = nn.Conv2d(3, 48, 3, padding=1)
            self.down = nn.Conv2d(48, 4, 4, stride=4)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.down(torch.relu(self.conv(x)))

    torch.manual_seed(0)
    shape = (1, 3, 256, 256)
    return WideConv(), (torch.rand(shape),), _calibration(shape, n=1)


def linear_stack() -> Built:
    """Two 512x512 linear layers: ~0.5 MB of int8 weights, for the benchmarks."""
    import torch
    from torch import nn

    class LinearStack(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc1 = nn.Linear(512, 512)
            self.fc2 = nn.Linear(512, 512)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.fc2(torch.relu(self.fc1(x)))

    torch.manual_seed(0)
    shape = (1, 512)
    return LinearStack(), (torch.rand(shape),), _calibration(shape)


RESIDUAL_SHAPE = (1, 3, 48, 48)


def residual_cnn() -> Built:
    """A stem conv, two residual blocks of 16 channels at 48x48 and a linear head: a
    model whose activations (~36 KiB int8 each) outweigh the runtime's fixed statics,
    for the RAM benchmark (tests/bench_runner.py)."""
    import torch
    from torch import nn

    def conv(cin: int) -> nn.Module:
        return nn.Conv2d(cin, 16, 3, padding=1)

    class Residual(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.stem = conv(3)
            self.blocks = nn.ModuleList(nn.Sequential(conv(16), nn.ReLU(), conv(16)) for _ in "ab")
            self.head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 10))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            x = torch.relu(self.stem(x))
            for block in self.blocks:
                x = torch.relu(x + block(x))
            out: torch.Tensor = self.head(x)
            return out

    torch.manual_seed(0)
    return Residual().eval(), (torch.rand(RESIDUAL_SHAPE),), _calibration(RESIDUAL_SHAPE)


def two_io() -> Built:
    """Two inputs, three outputs, in an order the delegate does not keep: its inputs and
    outputs are numbered otherwise than the method's (tools must pair them by the
    program's quantize/dequantize, not by index)."""
    import torch
    from torch import nn

    class TwoIo(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.c = nn.Conv2d(4, 4, 1)
            self.d = nn.Conv2d(4, 2, 1)

        def forward(self, a: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, ...]:
            y = self.c(b)  # computed first: the delegate's output 0
            z = self.d(a)
            return torch.relu(z), y, torch.sigmoid(a[:, :2])

    g = torch.Generator().manual_seed(2)
    shape = (1, 4, 8, 8)
    calib = [
        (torch.rand(shape, generator=g) * 2 - 1, torch.rand(shape, generator=g) * 3 - 1)
        for _ in range(4)
    ]
    torch.manual_seed(0)
    return TwoIo().eval(), calib[0], calib


def cpu_map() -> Built:
    """A float `map` over the rows of its input (CPU only): control flow, which the
    emitter writes with ExecuTorch's primitive ops (`aten::sym_size.int`,
    `executorch_prim::add.Scalar`, `et_copy_index`, ...), the ops a static program
    otherwise never has."""
    import torch
    from torch import nn
    from torch._higher_order_ops.map import map as map_rows

    class CpuMap(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bias = nn.Parameter(torch.linspace(-1, 1, 4))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            out: torch.Tensor = map_rows(lambda row, b: torch.relu(row) + b, x, self.bias)
            return out

    torch.manual_seed(0)
    shape = (3, 4)
    return CpuMap().eval(), (torch.rand(shape),), _calibration(shape)


def conv_relu6_conv() -> Built:
    """A relu6 between two convs: on the Ethos-U55 the partitioner leaves the hardtanh on
    the CPU, so the program dequantizes delegate 0's output, clamps it and quantizes it
    again (a scale of its own) for delegate 1. Delegate 1's input has the method input's
    shape, so a float method input could pass for it by size."""
    import torch
    from torch import nn

    class ConvRelu6Conv(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv1 = nn.Conv2d(4, 4, 3, padding=1)
            self.conv2 = nn.Conv2d(4, 4, 3, padding=1)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.conv2(nn.functional.relu6(self.conv1(x)))

    torch.manual_seed(0)
    shape = (1, 4, 6, 6)
    return ConvRelu6Conv().eval(), (torch.rand(shape),), _calibration(shape)


@dataclass(frozen=True)
class TestModel:
    """One fixture's model and how to lower it."""

    __test__ = False  # not a pytest test class despite the name

    name: str
    build: Callable[[], Built]
    target: Target
    delegate: bool = True
    quantize: bool = True


U55 = "ethos-u55-128"
U65 = "ethos-u65-256"
U85 = "ethos-u85-256"

# fixture name (without the "pte_" prefix) -> model
MODELS: dict[str, TestModel] = {
    m.name: m
    for m in (
        TestModel("u55_shared", small_cnn, Target(U55, memory_mode="Shared_Sram")),
        TestModel("u55_sram_only", small_cnn, Target(U55, memory_mode="Sram_Only")),
        TestModel("u85_dedicated", small_cnn, Target(U85, memory_mode="Dedicated_Sram_384KB")),
        TestModel("u85_shared", small_cnn, Target(U85, memory_mode="Shared_Sram")),
        # Corstone-300 with an Ethos-U65: Vela's U65 system config, 384 KiB fast scratch
        TestModel(
            "u65_dedicated",
            small_cnn,
            Target(U65, system_config="Ethos_U65_High_End", memory_mode="Dedicated_Sram_384KB"),
        ),
        TestModel("cpu_op", cnn_argmax, Target(U55, memory_mode="Shared_Sram")),
        TestModel("two_delegates", conv_sort_conv, Target(U55, memory_mode="Shared_Sram")),
        TestModel("cpu_only", float_mlp, Target(U55, memory_mode="Shared_Sram"), False, False),
        TestModel("too_big", wide_conv, Target(U55, memory_mode="Shared_Sram")),
        TestModel("half_mb", linear_stack, Target(U55, memory_mode="Shared_Sram")),
        TestModel("big_input", big_input, Target(U55, memory_mode="Shared_Sram")),
        TestModel("two_io", two_io, Target(U55, memory_mode="Shared_Sram")),
        TestModel("cpu_between", conv_relu6_conv, Target(U55, memory_mode="Shared_Sram")),
    )
}

# Models only the benchmarks and one test each use: fixtures like the others
# (pte_<name>), but not in MODELS, so the tests that run over every model (any_pte) do
# not lower or run them.
BENCH_MODELS: dict[str, TestModel] = {
    m.name: m
    for m in (
        TestModel("u55_residual", residual_cnn, Target(U55, memory_mode="Shared_Sram")),
        # the executor_runner links ExecuTorch's prim ops only for a program that uses one
        TestModel("cpu_map", cpu_map, Target(U55, memory_mode="Shared_Sram"), False, False),
        # a second program for U85 Dedicated_Sram images of several programs (issue 18)
        TestModel("u85_dedicated_io", two_io, Target(U85, memory_mode="Dedicated_Sram_384KB")),
    )
}
