"""Run one Ethos-U delegate of a .pte on the virtual NPU, as the ExecuTorch delegate would.

The delegate copies each input into the scratch region at its Vela offset, invokes
with base_addr = [weights, scratch(, fast scratch)], and copies the outputs back out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ethosu_kit.errors import KitError
from ethosu_kit.vnpu.npu import VirtualNpu, aligned_bytes

if TYPE_CHECKING:
    from ethosu_kit.model_info import ModelInfo, VelaTensor
    from ethosu_kit.pte import VelaBlocks

IntArray = npt.NDArray[np.signedinteger[Any]]
DTYPES: dict[int, np.dtype[np.signedinteger[Any]]] = {
    1: np.dtype(np.int8),
    2: np.dtype(np.int16),
    4: np.dtype(np.int32),
}


def tensor_dtype(t: VelaTensor) -> np.dtype[np.signedinteger[Any]]:
    try:
        return DTYPES[t.elem_size]
    except KeyError:
        raise KitError(
            f"Vela tensor with element size {t.elem_size} is not an integer tensor"
        ) from None


def tensor_shape(t: VelaTensor, rank: int = 0) -> tuple[int, ...]:
    """The shape of a delegate tensor as the program's tensor has it: the last `rank`
    dimensions of the 6-D Vela shape (padded with leading 1s), batch included; without a
    rank, the Vela shape without its leading 1s (at least 1-D)."""
    shape = list(t.shape)
    if 0 < rank <= len(shape) and all(d == 1 for d in shape[:-rank]):
        return tuple(shape[-rank:])
    while len(shape) > 1 and shape[0] == 1:
        shape.pop(0)
    return tuple(shape)


def io_shapes(blocks: VelaBlocks, kind: str) -> list[tuple[int, ...]]:
    """Shapes of the delegate's "input"s or "output"s, ranks from the delegate call."""
    tensors = blocks.inputs if kind == "input" else blocks.outputs
    ranks = blocks.input_ranks if kind == "input" else blocks.output_ranks
    return [tensor_shape(t, ranks[i] if i < len(ranks) else 0) for i, t in enumerate(tensors)]


# The most bytes the host gives one NPU region (weights, scratch, fast scratch): real
# models use a few MiB; a corrupt scratch_size (a u32) must not become a 4 GiB allocation.
MAX_REGION_BYTES = 512 * 1024 * 1024


def check_blocks(blocks: VelaBlocks, fast_scratch_size: int = 0, source: str = "") -> None:
    """Refuse, naming the delegate and the record, what the virtual NPU must not run:
    IO records outside the scratch (`io_problems`) or regions too large to allocate.
    `source` (the .pte's path) starts the message when given."""
    where = f"method '{blocks.method}' delegate {blocks.delegate_index}"
    where = f"{source}: {where}" if source else where
    problems = blocks.io_problems
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise KitError(
            f"{where}: {problems[0]}{more}",
            hint="the Vela IO records are corrupt or hand-edited: lower the model again",
        )
    for name, size in (
        ("scratch_size", blocks.scratch_size),
        ("weight_data", len(blocks.weight_data)),
        ("fast scratch (region 2)", fast_scratch_size),
    ):
        if size > MAX_REGION_BYTES:
            raise KitError(
                f"{where}: {name} of {size} bytes is more than the virtual NPU allocates "
                f"for a region (MAX_REGION_BYTES = {MAX_REGION_BYTES})"
            )


def random_inputs(blocks: VelaBlocks, rng: np.random.Generator) -> list[IntArray]:
    """Full-range random integers for every input of the delegate."""
    out = []
    for t, shape in zip(blocks.inputs, io_shapes(blocks, "input"), strict=True):
        dt = tensor_dtype(t)
        info = np.iinfo(dt)
        out.append(rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=dt))
    return out


def run_delegate(
    blocks: VelaBlocks,
    inputs: Sequence[IntArray],
    npu: VirtualNpu | None = None,
    fast_scratch_size: int = 0,
) -> list[IntArray]:
    """Outputs of one delegate for these inputs (shapes and dtypes from the Vela IO blocks).

    `fast_scratch_size` > 0 adds region 2, the Dedicated_Sram staging SRAM (its size is
    the memory mode's arena cache size; the .pte does not record it).
    """
    check_blocks(blocks, fast_scratch_size)
    if len(inputs) != len(blocks.inputs):
        raise KitError(
            f"delegate {blocks.delegate_index} takes {len(blocks.inputs)} inputs, got {len(inputs)}"
        )
    weights = aligned_bytes(max(len(blocks.weight_data), 16), blocks.weight_data)
    scratch = aligned_bytes(max(blocks.scratch_size, 16))
    regions = [weights, scratch]
    if fast_scratch_size > 0:
        regions.append(aligned_bytes(fast_scratch_size))
    for i, (t, value) in enumerate(zip(blocks.inputs, inputs, strict=True)):
        if t.region != 1:
            raise KitError(
                f"delegate input {i} lives in region {t.region}; "
                "only region 1 (scratch) is supported"
            )
        data = np.ascontiguousarray(value, dtype=tensor_dtype(t)).reshape(-1).view(np.uint8)
        if len(data) != t.nbytes:
            raise KitError(
                f"delegate input {i} needs {t.nbytes} bytes "
                f"(shape {io_shapes(blocks, 'input')[i]}), got {len(data)}"
            )
        scratch[t.offset : t.offset + len(data)] = data
    own = npu is None
    npu = npu or VirtualNpu(config=blocks.cop.config, npu_id=blocks.cop.id)
    try:
        npu.invoke(blocks.cmd_data, regions)
    finally:
        if own:
            npu.close()
    outputs = []
    for t, shape in zip(blocks.outputs, io_shapes(blocks, "output"), strict=True):
        raw = scratch[t.offset : t.offset + t.nbytes]
        outputs.append(raw.view(tensor_dtype(t)).reshape(shape).copy())
    return outputs


# Vela bounded nothing (plain Dedicated_Sram): on a board the plan gives region 2 the NPU
# SRAM left; off-board the largest built-in NPU SRAM (Corstone-320: 4 MiB) stands in.
UNBOUNDED_FAST_SCRATCH = 4 * 1024 * 1024


def fast_scratch_bytes(model: ModelInfo) -> int:
    """Region 2's size for running `model` off-board, by the memory plan's own rule."""
    from ethosu_kit.memory_plan import PlanOptions
    from ethosu_kit.planner import fast_scratch_size

    size = fast_scratch_size(model, PlanOptions()).size
    return UNBOUNDED_FAST_SCRATCH if size is None else size
