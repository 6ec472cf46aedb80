"""A program with two methods (issue 18): `encode` and `decode`, each lowered to Ethos-U,
in one .pte (ExecuTorch's to_edge_transform_and_lower with a dict of programs).

Cached like the other test models (tests/conftest.py: the cache folder, a file lock, a
key of this builder's source, the target and the torch/executorch versions), but kept
out of tests/models.py: the kit's own lowering (ethosu_kit.aot.lowering) lowers one
method, and changing it would re-key every cached model.
"""

from __future__ import annotations

import hashlib
import inspect
from pathlib import Path

from conftest import _versions, cached_pte
from ethosu_kit.aot.lowering import Target

SHAPE = (1, 3, 16, 16)
METHODS = ("encode", "decode")


def _lower(target: Target) -> bytes:
    import torch
    from executorch.backends.arm.ethosu import EthosUCompileSpec, EthosUPartitioner
    from executorch.exir import EdgeCompileConfig, to_edge_transform_and_lower
    from torch import nn

    from ethosu_kit.aot.lowering import quantized_graph

    class Encode(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.c = nn.Conv2d(3, 8, 3, padding=1)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.relu(self.c(x))

    class Decode(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.c = nn.Conv2d(3, 8, 1)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.sigmoid(self.c(x))

    g = torch.Generator().manual_seed(3)
    calib = [(torch.rand(SHAPE, generator=g) * 2 - 1,) for _ in range(4)]
    torch.manual_seed(0)
    programs = {}
    for name, module in zip(METHODS, (Encode().eval(), Decode().eval()), strict=True):
        graph = quantized_graph(module, calib[0], target, calibration=calib)
        programs[name] = torch.export.export(graph, calib[0], strict=True)
    spec = EthosUCompileSpec(
        target.accelerator, system_config=target.system_config, memory_mode=target.memory_mode
    )
    edge = to_edge_transform_and_lower(
        programs,
        partitioner=[EthosUPartitioner(spec)],
        compile_config=EdgeCompileConfig(_check_ir_validity=False),
    )
    data: bytes = edge.to_executorch().buffer
    return data


def two_method_pte(target: Target) -> Path:
    """The cached two-method .pte for `target`, lowering it first if needed."""
    h = hashlib.sha256()
    for part in (inspect.getsource(_lower), repr(target), *_versions()):
        h.update(part.encode() + b"\0")
    return cached_pte(f"two_methods-{h.hexdigest()[:20]}.pte", lambda: _lower(target))
