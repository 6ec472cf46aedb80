"""The built-in example model: small enough to lower in seconds, real enough to need the NPU.

Defined in code so nothing is downloaded: a two-conv CNN with a linear head.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ethosu_kit.aot.lowering import Target, lower_to_pte

EXAMPLE_INPUT_SHAPE = (1, 3, 16, 16)


def example_model() -> tuple[Any, tuple[Any, ...]]:
    import torch  # noqa: PLC0415 - optional, slow (lower extra)
    from torch import nn  # noqa: PLC0415 - optional, slow (lower extra)

    class TinyCnn(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
            self.conv2 = nn.Conv2d(8, 16, 3, stride=2, padding=1)
            self.pool = nn.AdaptiveAvgPool2d(1)
            self.fc = nn.Linear(16, 10)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            x = torch.relu(self.conv1(x))
            x = torch.relu(self.conv2(x))
            out: torch.Tensor = self.fc(torch.flatten(self.pool(x), 1))
            return out

    torch.manual_seed(0)
    return TinyCnn(), (torch.rand(EXAMPLE_INPUT_SHAPE),)


def lower_example(out: Path, target: Target) -> bytes:
    import torch  # noqa: PLC0415 - optional, slow (lower extra)

    model, inputs = example_model()
    calibration = [(torch.rand(EXAMPLE_INPUT_SHAPE),) for _ in range(4)]
    return lower_to_pte(model, inputs, target, out, calibration=calibration)
