"""Method inputs compiled into the image (`gen-firmware --inputs x.npy [y.npy …] | in.npz`).

The arrays are checked exactly as `ethosu-kit run --inputs` checks them (count, dtype
and shape of the program's first method: `inputs.prepare.prepare_inputs`), then planned as
read-only buffers `input_data_<i>` (flash first, never a TCM, counted by the fit check)
and assembled in from `generated/kit_input_data_<i>.bin`. The executor_runner sets its
inputs from them unless the host sends its own at run time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from ethosu_kit.core.errors import KitError
from ethosu_kit.core.files import MAX_INPUT, read_bytes
from ethosu_kit.inputs.prepare import Tensor, prepare_inputs
from ethosu_kit.plan.types import MemoryPlan, Role
from ethosu_kit.pte.model import ModelInfo


def load_input_data(files: Sequence[str | Path], model: ModelInfo) -> dict[int, bytes]:
    """Raw little-endian bytes per input index of the program's first method."""
    if not model.methods:
        raise KitError(f"{model.path}: the program has no method to give inputs to")
    wants = []
    for i, t in enumerate(model.methods[0].inputs):
        try:
            wants.append(Tensor(np.dtype(t.dtype), tuple(int(d) for d in t.shape)))
        except TypeError:
            raise KitError(
                f"{model.path}: input {i} has dtype {t.dtype!r}, which --inputs cannot carry"
            ) from None
    arrays = prepare_inputs([str(f) for f in files], wants)
    return {i: a.tobytes() for i, a in enumerate(arrays)}


def project_input_data(plan: MemoryPlan, path_of: Callable[[int], Path]) -> dict[int, bytes]:
    """The compiled-in inputs a generated project already has (to re-render it unchanged);
    `path_of(i)`: where the project keeps input i's bytes (ProjectDir.input_data)."""
    out: dict[int, bytes] = {}
    for b in plan.by_role(Role.INPUT_DATA):
        index = b.index
        assert index is not None  # INPUT_DATA is an indexed role
        path = path_of(index)
        if not path.is_file():
            raise KitError(
                f"{path}: missing, but the plan compiles in input {index}",
                hint="generate the project again with --inputs",
            )
        out[index] = read_bytes(path, MAX_INPUT)  # the project folder is the user's
    return out
