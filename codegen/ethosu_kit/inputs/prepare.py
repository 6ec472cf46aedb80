"""The user's input arrays checked against the program's inputs (count, dtype, shape),
the one rule for `run --inputs` (firmware.host_io) and `gen --inputs` (inputs.compiled).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ethosu_kit.core.errors import KitError
from ethosu_kit.inputs.arrays import load_arrays

Array = npt.NDArray[Any]


@dataclass(frozen=True)
class Tensor:
    dtype: np.dtype[Any]
    shape: tuple[int, ...]

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize

    def __str__(self) -> str:
        return f"{self.dtype} {list(self.shape)}"


def _ordered(named: list[Any]) -> list[Any]:
    """An .npz's arrays named input<i> / input_<i> go by that index, others in file order.
    A `run -o` file (input<i> and output<o>) gives its inputs only."""
    keys = [re.search(r"\[input_?(\d{1,6})\]\Z", n.source) for n in named]
    inputs = [(int(k.group(1)), n) for k, n in zip(keys, named, strict=True) if k]
    rest = [n for k, n in zip(keys, named, strict=True) if not k]
    if inputs and all(re.search(r"\[output_?\d{1,6}\]\Z", n.source) for n in rest):
        return [n for _, n in sorted(inputs, key=lambda pair: pair[0])]
    return named


def prepare_inputs(files: Sequence[str], wants: list[Tensor]) -> list[Array]:
    """The user's arrays, one per program input, exactly its dtype and shape."""
    named = _ordered(load_arrays(files))
    if len(named) != len(wants):
        vectors = any("]" in n.source and "[delegate" in n.source for n in named)
        raise KitError(
            f"--inputs: {len(named)} array(s) given ({', '.join(n.source for n in named)}), "
            f"the program takes {len(wants)}: "
            + "; ".join(f"input {i}: {t}" for i, t in enumerate(wants)),
            hint="that is a vectors file (simulate -o, the self-test's --vectors): it holds "
            "the delegate's integers; run --inputs takes the method's own inputs"
            if vectors
            else None,
        )
    arrays = []
    for i, (n, want) in enumerate(zip(named, wants, strict=True)):
        a = n.array
        if a.dtype != want.dtype or tuple(a.shape) != want.shape:
            raise KitError(
                f"{n.source}: input {i} is {a.dtype} {list(a.shape)}, the program wants {want}",
                hint=f"save it as np.asarray(x, dtype=np.{want.dtype}).reshape({list(want.shape)})",
            )
        arrays.append(np.ascontiguousarray(a, dtype=want.dtype.newbyteorder("<")))
    return arrays
