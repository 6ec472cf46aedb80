"""Run one Ethos-U delegate of a .pte on the virtual NPU, as the ExecuTorch delegate would.

The delegate copies each input into the scratch region at its Vela offset, invokes
with base_addr = [weights, scratch(, fast scratch)], and copies the outputs back out.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import numpy.typing as npt

from ethosu_kit.core.errors import KitError
from ethosu_kit.npu.facts import NPU_ALIGN, VELA_REGION_SCRATCH
from ethosu_kit.pte.vela_config import fast_scratch_size
from ethosu_kit.vnpu.npu import Job, VirtualNpu, VnpuError, aligned_bytes

if TYPE_CHECKING:
    from ethosu_kit.pte import VelaBlocks
    from ethosu_kit.pte.model import ModelInfo, VelaTensor

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


@dataclass(frozen=True)
class _Plan:
    """What every inference of one delegate on one NPU reuses: the scratch, the job that
    runs the stream (copying the weights in, zeroing the scratch and fast scratch, then
    copying the inputs from their buffers into the scratch, in one library call), each
    input's buffer and each output as a typed view of the scratch."""

    scratch: npt.NDArray[np.uint8]
    job: Job
    inputs: tuple[IntArray, ...]  # the buffers the job copies in: the delegate's dtypes, shapes
    outputs: tuple[IntArray, ...]  # views of the scratch
    run: Callable[[], None]  # runs the job (VirtualNpu.runner)


# The plans an NPU keeps (one per delegate and fast-scratch size it ran last).
_PLANS_PER_NPU = 8


def _view(scratch: npt.NDArray[np.uint8], t: VelaTensor, shape: tuple[int, ...]) -> IntArray:
    """The bytes of tensor `t` in the scratch as an array of its dtype and `shape`."""
    data = scratch[t.offset : t.offset + t.nbytes].view(tensor_dtype(t))
    return cast(IntArray, data.reshape(shape))


def _plan(blocks: VelaBlocks, npu: VirtualNpu, fast_scratch_size: int) -> _Plan:
    """The plan `npu` keeps for this delegate (made on its first run)."""
    key = (id(blocks), fast_scratch_size)
    found = npu.plans.get(key)
    if found is not None and found[0] is blocks:
        return cast(_Plan, found[1])
    plan = _new_plan(blocks, npu, fast_scratch_size)
    if len(npu.plans) >= _PLANS_PER_NPU:
        npu.plans.clear()
    npu.plans[key] = (blocks, plan)
    return plan


def _new_plan(blocks: VelaBlocks, npu: VirtualNpu, fast_scratch_size: int) -> _Plan:
    check_blocks(blocks, fast_scratch_size)
    for i, t in enumerate(blocks.inputs):
        if t.region != VELA_REGION_SCRATCH:
            raise KitError(
                f"delegate input {i} lives in region {t.region}; "
                "only region 1 (scratch) is supported"
            )
    # never empty: a region's base must be a real NPU_ALIGN-aligned address
    weights = aligned_bytes(max(len(blocks.weight_data), NPU_ALIGN))
    scratch = aligned_bytes(max(blocks.scratch_size, NPU_ALIGN))
    regions = [weights, scratch]
    if fast_scratch_size > 0:
        regions.append(aligned_bytes(fast_scratch_size))
    weight_data = np.frombuffer(blocks.weight_data, dtype=np.uint8)
    places = tuple(
        # flat where the shape does not cover the bytes (then every input takes _copy_in)
        _view(scratch, t, shape if math.prod(shape) * t.elem_size == t.nbytes else (-1,))
        for t, shape in zip(blocks.inputs, io_shapes(blocks, "input"), strict=True)
    )
    buffers = tuple(np.zeros_like(place) for place in places)
    # every run starts from the .pte's weights, a zeroed scratch (region 1) and fast
    # scratch (region 2), then the inputs: the zeroing and the copies inside the one call
    job = npu.prepare(
        blocks.cmd_data,
        regions,
        weight_data,
        zero_regions=0b110,
        copy_in=tuple(zip(buffers, places, strict=True)),
    )
    return _Plan(
        scratch=scratch,
        job=job,
        inputs=buffers,
        outputs=tuple(
            _view(scratch, t, shape)
            for t, shape in zip(blocks.outputs, io_shapes(blocks, "output"), strict=True)
        ),
        run=npu.runner(job),
    )


def _copy_in(plan: _Plan, blocks: VelaBlocks, inputs: Sequence[IntArray]) -> None:
    """Each input into its buffer, as the delegate's dtype (any shape of the right element
    count)."""
    for i, (view, value) in enumerate(zip(plan.inputs, inputs, strict=True)):
        data = np.ascontiguousarray(value, dtype=view.dtype).reshape(-1)
        if data.nbytes != view.nbytes:
            raise KitError(
                f"delegate input {i} needs {view.nbytes} bytes "
                f"(shape {io_shapes(blocks, 'input')[i]}), got {data.nbytes}"
            )
        view.reshape(-1)[:] = data


def _set_inputs(plan: _Plan, blocks: VelaBlocks, inputs: Sequence[IntArray]) -> None:
    if len(inputs) != len(plan.inputs):
        raise KitError(
            f"delegate {blocks.delegate_index} takes {len(blocks.inputs)} inputs, got {len(inputs)}"
        )
    # the common case in one numpy call: an array of the delegate's dtype and shape
    for buffer, value in zip(plan.inputs, inputs, strict=True):
        if (
            type(value) is not np.ndarray
            or value.dtype != buffer.dtype
            or value.shape != buffer.shape
        ):
            _copy_in(plan, blocks, inputs)
            return
        buffer[...] = value  # (np.copyto's own call costs more than this copy)


class PreparedDelegate:
    """One delegate on one NPU, ready for many inferences (what `run_delegate` reuses), for
    a caller that runs it repeatedly. Call it with the inputs for fresh output arrays (or
    `out=`: arrays of the outputs' dtypes and shapes to fill), or write `inputs[i]` (the
    buffers each run copies in) in place and call `run()`, then read `outputs[i]` (views
    of the scratch, valid until the next run). Every run starts from zeroed scratch and
    the .pte's weights, as `run_delegate`.

    An input array passed again (the same object, of the buffer's dtype and shape, C
    contiguous) is read by the library itself at the next run, not copied into its buffer
    first: the plan is this object's own (not the NPU's shared one) so that no other
    caller sees its copies point elsewhere. Until a `run()` without arguments, which uses
    `inputs[i]` again."""

    __slots__ = (
        "_addr",
        "_blocks",
        "_direct",
        "_dtypes",
        "_npu",
        "_plan",
        "_run_job",
        "_seen",
        "inputs",
        "outputs",
    )

    def __init__(self, blocks: VelaBlocks, npu: VirtualNpu, fast_scratch_size: int = 0) -> None:
        self._blocks = blocks
        self._plan = _new_plan(blocks, npu, fast_scratch_size)
        self.inputs = self._plan.inputs
        self.outputs = self._plan.outputs
        n = len(self.inputs)
        # per input: the array copied into the buffer last time, and the array the
        # library reads directly (None: the buffer)
        self._seen: list[object] = [None] * n
        self._direct: list[object] = [None] * n
        self._dtypes = tuple(buffer.dtype for buffer in self.inputs)
        # the library call inlined in __call__ (not the plan's `run`): one Python call fewer
        self._npu = npu
        self._run_job, self._addr = npu.native_run(self._plan.job)

    def run(self) -> None:
        """Run on what `inputs[i]` hold."""
        for i, held in enumerate(self._direct):
            if held is not None:
                self._read_buffer(i)
        self._plan.run()

    def _read_buffer(self, i: int) -> None:
        self._plan.job.set_copy_source(i, self.inputs[i].ctypes.data)
        self._direct[i] = None

    def _take(self, i: int, value: object) -> bool:
        """Input i for the next run: read directly if `value` was copied last time too
        (the caller reuses its array), else copied into the buffer; False if it is not
        an array of the buffer's dtype and shape (the caller converts it)."""
        buffer = self.inputs[i]
        if (
            type(value) is not np.ndarray
            or value.dtype is not buffer.dtype
            or value.shape != buffer.shape
        ):
            return False
        if (
            value is self._seen[i]
            and value.flags.c_contiguous
            # not the NPU's own memory (an output fed back): the run zeroes it first
            and not any(np.may_share_memory(value, r) for r in self._plan.job.regions)
        ):
            self._plan.job.set_copy_source(i, value.ctypes.data)
            self._direct[i] = value  # held: its memory stays valid
            return True
        if self._direct[i] is not None:
            self._read_buffer(i)
        buffer[...] = value  # (np.copyto's own call costs more than this copy)
        self._seen[i] = value
        return True

    def __call__(
        self, inputs: Sequence[IntArray], out: Sequence[IntArray] | None = None
    ) -> list[IntArray]:
        # the common case with the fewest Python operations (a small model's whole run is
        # a few microseconds): the arrays of the last call again, their dtypes and shapes
        # unchanged (numpy's dtype objects of the integer types are singletons)
        # (an array read directly keeps its bytes whatever shape it is given in place)
        direct = self._direct
        dtypes = self._dtypes
        if len(inputs) != len(direct):
            _set_inputs(self._plan, self._blocks, inputs)  # raises
        if len(direct) == 1:  # (no loop: most delegates take one input)
            value = inputs[0]
            if (value is not direct[0] or value.dtype is not dtypes[0]) and not self._take(
                0, value
            ):
                self._convert(inputs)
        else:
            for i, value in enumerate(inputs):
                if (value is not direct[i] or value.dtype is not dtypes[i]) and not self._take(
                    i, value
                ):
                    self._convert(inputs)
                    break
        npu = self._npu
        if npu.closed:
            raise VnpuError("the virtual NPU is closed")
        rc = self._run_job(self._addr)
        if rc != 0:
            npu.failed(rc)
        outputs = self.outputs
        if out is None:
            if len(outputs) == 1:  # (a list comprehension is a call of its own)
                return [outputs[0].copy()]
            return [value.copy() for value in outputs]
        if len(out) != len(self.outputs):
            raise KitError(f"out= needs {len(self.outputs)} arrays, got {len(out)}")
        for i, (dest, value) in enumerate(zip(out, self.outputs, strict=True)):
            if dest.shape != value.shape or dest.dtype != value.dtype:
                raise KitError(
                    f"out[{i}] must be {value.dtype} of shape {value.shape}, "
                    f"got {dest.dtype} of shape {dest.shape}"
                )
            dest[...] = value
        return list(out)

    def _convert(self, inputs: Sequence[IntArray]) -> None:
        """Every input through its buffer, converted as `run_delegate` does."""
        for i in range(len(self.inputs)):
            if self._direct[i] is not None:
                self._read_buffer(i)
            self._seen[i] = None
        _set_inputs(self._plan, self._blocks, inputs)


def run_delegate(
    blocks: VelaBlocks,
    inputs: Sequence[IntArray],
    npu: VirtualNpu | None = None,
    fast_scratch_size: int = 0,
) -> list[IntArray]:
    """Outputs of one delegate for these inputs (shapes and dtypes from the Vela IO blocks).

    `fast_scratch_size` > 0 adds region 2, the Dedicated_Sram staging SRAM (its size is
    the memory mode's arena cache size; the .pte does not record it). With an `npu`, what
    does not change between inferences (regions, job, IO layout) is prepared on its first
    run and reused: every run still starts from zeroed scratch and the .pte's weights.
    (`PreparedDelegate` holds that preparation for a caller that runs one delegate often.)
    """
    if len(inputs) != len(blocks.inputs):
        check_blocks(blocks, fast_scratch_size)
        raise KitError(
            f"delegate {blocks.delegate_index} takes {len(blocks.inputs)} inputs, got {len(inputs)}"
        )
    own = npu is None
    npu = npu or VirtualNpu(config=blocks.cop.config, npu_id=blocks.cop.id)
    try:
        plan = _plan(blocks, npu, fast_scratch_size)
        _set_inputs(plan, blocks, inputs)
        plan.run()
    finally:
        if own:
            npu.close()
    return list(map(np.ndarray.copy, plan.outputs))


# Vela bounded nothing (plain Dedicated_Sram): on a board the plan gives region 2 the NPU
# SRAM left; off-board the largest built-in NPU SRAM (Corstone-320: 4 MiB) stands in.
UNBOUNDED_FAST_SCRATCH = 4 * 1024 * 1024


def fast_scratch_bytes(model: ModelInfo) -> int:
    """Region 2's size for running `model` off-board, by the memory plan's own rule."""
    size = fast_scratch_size(model).size
    return UNBOUNDED_FAST_SCRATCH if size is None else size
