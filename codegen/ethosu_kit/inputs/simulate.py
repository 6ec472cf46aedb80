"""`ethosu-kit simulate`'s work: a .pte's NPU part, on the host.

Each Ethos-U delegate's Vela command stream runs on the virtual Ethos-U55/U65/U85 (the C
library of drivers/ethosu_virtual; docs/virtual-npu.md) on the given inputs (the delegate's
integers, or the method's float32 inputs quantized as the program's own quantize does, for
the delegate input that quantize feeds and no other), or on full-range random ones, and
its outputs are printed or saved. The outputs are the
delegate's own (quantized, as the NPU sees them), not the method's float tensors.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ethosu_kit.core.errors import KitError
from ethosu_kit.inputs.arrays import NamedArray, conform, load_arrays
from ethosu_kit.pte.ptd import ExternalData
from ethosu_kit.pte.quant import delegate_args
from ethosu_kit.pte.reader import (
    model_from_bytes,
    read_pte_bytes,
    vela_streams_from_bytes,
)
from ethosu_kit.vnpu import run_delegate
from ethosu_kit.vnpu.delegate import (
    check_blocks,
    fast_scratch_bytes,
    io_shapes,
    random_inputs,
    tensor_dtype,
)

if TYPE_CHECKING:
    import numpy as np

    from ethosu_kit.inputs.arrays import NamedArray
    from ethosu_kit.pte import VelaBlocks
    from ethosu_kit.pte.quant import DelegateArg, Quantization


@dataclass(frozen=True)
class DelegateRun:
    """One Ethos-U delegate run on the virtual NPU: what it ran on and what it gave."""

    index: int  # K, as `inspect` lists the delegates
    blocks: VelaBlocks
    inputs: list[np.ndarray[Any, Any]]
    outputs: list[np.ndarray[Any, Any]]
    notes: list[str]  # how given inputs were taken (quantized, reordered)


def simulate(
    pte: str | Path,
    *,
    inputs: Sequence[str | Path] | None = None,
    delegate: int | None = None,
    seed: int = 0,
    external: ExternalData | None = None,
    method: str | None = None,
) -> Iterator[DelegateRun]:
    """Run the .pte's Ethos-U delegates (or only `delegate`) on `inputs` (files: the
    delegate's integers, or the method's float32 inputs, quantized as the program does)
    or on random ones from `seed`, one after the other; `method`: only its delegates
    (K stays the program's numbering). Everything that can be refused
    is refused before the first run."""
    data = read_pte_bytes(pte)
    streams = vela_streams_from_bytes(data, str(pte), external)
    fast = fast_scratch_bytes(model_from_bytes(data, str(pte), external))
    if not streams:
        raise KitError(
            f"{pte}: no Ethos-U delegate to simulate", hint="the model runs on the CPU only"
        )
    selected = list(enumerate(streams))
    if delegate is not None:
        if not 0 <= delegate < len(streams):
            raise KitError(
                f"{pte}: --delegate {delegate} out of range: it has {len(streams)} "
                "Ethos-U delegate(s)"
            )
        selected = [selected[delegate]]
    if method is not None:
        methods = [m.name for m in model_from_bytes(data, str(pte), external).methods]
        if method not in methods:
            raise KitError(
                f"{pte}: no method {method!r}", hint=f"its methods are {', '.join(methods)}"
            )
        selected = [(k, b) for k, b in selected if b.method == method]
        if not selected:
            raise KitError(f"{pte}: method {method!r} has no Ethos-U delegate to simulate")
    given = load_arrays([str(f) for f in inputs]) if inputs else None
    if given is not None and len(selected) != 1:
        raise KitError(
            f"{pte}: --inputs with {len(selected)} delegates is ambiguous",
            hint="pick one with --delegate K",
        )
    made_by = delegate_args(data, str(pte)) if given is not None else {}
    rng = np.random.default_rng(seed)
    for _, blocks in selected:
        check_blocks(blocks, fast, str(pte))  # all before any runs: no half a result
    for k, blocks in selected:
        notes: list[str] = []
        if given is None:
            run_inputs = random_inputs(blocks, rng)
        else:
            made = made_by.get((blocks.method, blocks.delegate_index), [])[: len(blocks.inputs)]
            arrays = _vectors_inputs(given, k, len(blocks.inputs))
            arrays = _method_floats(arrays, made, len(blocks.inputs), notes)
            if len(arrays) != len(blocks.inputs):
                raise KitError(
                    f"{pte}: delegate {k} takes {len(blocks.inputs)} input(s), "
                    f"--inputs gave {len(arrays)}",
                    hint="give one array per input, in order (np.save, or np.savez with "
                    f"them alone), or a vectors file with delegate{k}_input<i> arrays",
                )
            shapes = io_shapes(blocks, "input")
            run_inputs = []
            for i, (t, given_array) in enumerate(zip(blocks.inputs, arrays, strict=True)):
                arg = made[i] if i < len(made) else None
                q = arg.quant if arg is not None else None
                named = given_array
                if named.array.dtype.kind == "f" and arg is not None and arg.method_input is None:
                    # the program makes this input on the CPU (a quantize after a CPU
                    # operator, or a CPU operator's integers): a method input is not it,
                    # and its quantize's scale is not the method input's
                    raise _not_a_method_input(
                        named, (k, i), streams, made_by, dtype=tensor_dtype(t), shape=shapes[i]
                    )
                if named.array.dtype.kind == "f" and q is not None:
                    named = quantize_like_the_program(named, q, tensor_dtype(t))
                    notes.append(
                        f"  input {i}: {named.source} quantized as the program's "
                        f"quantize_per_tensor does (scale {q.scale:.6g}, zero point "
                        f"{q.zero_point})"
                    )
                run_inputs.append(
                    conform(named, tensor_dtype(t), shapes[i], f"delegate {k} input {i}")
                )
        outputs = run_delegate(blocks, run_inputs, fast_scratch_size=fast)
        yield DelegateRun(k, blocks, list(run_inputs), list(outputs), notes)


def _method_floats(
    arrays: list[NamedArray], made: list[DelegateArg], count: int, notes: list[str]
) -> list[NamedArray]:
    """Float arrays are the method's inputs (what `run --inputs` takes): when every input of
    the delegate is the program's quantize of a method input, give it that array (the
    delegate may take them in another order). Anything else is used as given."""
    if not arrays or any(a.array.dtype.kind != "f" for a in arrays):
        return arrays
    if len(made) != count or any(m.quant is None or m.method_input is None for m in made):
        return arrays
    if len(arrays) != made[0].method_inputs:
        return arrays
    picked = [arrays[m.method_input] for m in made if m.method_input is not None]
    if [a.source for a in picked] != [a.source for a in arrays]:
        order = ", ".join(f"{i}: method input {m.method_input}" for i, m in enumerate(made))
        notes.append(f"  inputs: the method's, in the delegate's order ({order})")
    return picked


def _not_a_method_input(
    named: NamedArray,
    where_to: tuple[int, int],
    streams: list[VelaBlocks],
    made_by: dict[tuple[str, int], list[DelegateArg]],
    *,
    dtype: np.dtype[Any],
    shape: tuple[int, ...],
) -> Exception:
    """A float array (a method input) given to delegate k's input i, which the program
    makes on the CPU: the error names where the method's inputs go instead."""
    k, i = where_to
    method = streams[k].method
    feeds: list[str] = []
    to: set[int] = set()
    for other, blocks in enumerate(streams):
        if blocks.method != method:
            continue
        args = made_by.get((blocks.method, blocks.delegate_index), [])[: len(blocks.inputs)]
        for n, a in enumerate(args):
            if a.method_input is not None:
                feeds.append(f"method input {a.method_input} feeds delegate {other} input {n}")
                to.add(other)
    where = ", ".join(feeds) if feeds else "no method input feeds an Ethos-U delegate"
    run_those = (
        f"; simulate this one with --delegate {' or '.join(str(d) for d in sorted(to))}"
        if to
        else ""
    )
    return KitError(
        f"{named.source}: a float array is a method input ({where}), not delegate {k} "
        f"input {i}: the program makes that on the CPU",
        hint=f"give delegate {k} its own {dtype} integers {list(shape)} (delegate{k}_input{i} "
        "of a vectors file: what the program's CPU operators make of the earlier delegates' "
        f"outputs){run_those} (docs/memory.md, Comparing results)",
    )


def quantize_like_the_program(
    named: NamedArray, q: Quantization, dtype: np.dtype[Any]
) -> NamedArray:
    """A float array as the integers the program's quantize_per_tensor makes of it:
    ExecuTorch's kernel computes nearbyint(x * (1.0f / scale)) + zero_point in float32
    (ties to even), clamped to the type."""
    if named.array.dtype != np.float32:
        raise KitError(
            f"{named.source}: is {named.array.dtype}; the program quantizes float32 (its "
            "method's input): float inputs are not cast silently",
            hint="save it as float32, or give the quantized integers the NPU sees",
        )
    x = named.array  # finite: load_arrays refuses NaN and infinity
    inv = np.float32(1.0) / np.float32(q.scale)
    info = np.iinfo(dtype)
    value = np.rint(x * inv).astype(np.float64) + q.zero_point
    return NamedArray(named.source, np.clip(value, info.min, info.max).astype(dtype))


def _vectors_inputs(given: list[NamedArray], k: int, count: int) -> list[NamedArray]:
    """A vectors file (`simulate -o`, `--vectors`: inputs and outputs under
    delegate<K>_input<i> / _output<o>) gives delegate k its own inputs, a `run -o` file
    its input<i> arrays (the method's); else `given`."""
    by_key = {g.source.rpartition("[")[2].rstrip("]"): g for g in given if g.source.endswith("]")}
    picked = [by_key.get(f"delegate{k}_input{i}") for i in range(count)]
    found = [g for g in picked if g is not None]
    if len(found) == count:
        return found
    # a `run -o` file: its input<i> arrays are the method's inputs (its outputs are not)
    method = [by_key[f"input{i}"] for i in range(len(by_key)) if f"input{i}" in by_key]
    return method if method and len(method) < len(given) else given
