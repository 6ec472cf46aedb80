"""Compare two result files within N LSB of each tensor's quantization scale.

One command for "runner vs simulate vs reference": `ethosu-kit run … -o runner.npz`
(method tensors `input<i>` / `output<o>`, float when the program dequantizes on the
CPU), `ethosu-kit simulate … -o sim.npz` (the delegate's own integers,
`delegate<K>_input<i>` / `delegate<K>_output<o>`) and a reference from the quantized
PyTorch model (any keys you choose). Pairs are the keys both files have; with none in
common, `output<o>` pairs with `delegate<K>_output<o>` (and inputs likewise) when one
delegate K is in the file. With the .pte, each method input/output's scale and zero
point come from the program's own quantize/dequantize operators, so an integer side
is dequantized and differences are counted in LSB (multiples of the scale); without
it, integer arrays compare in integer steps and float arrays need --pte.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ethosu_kit.core.errors import KitError
from ethosu_kit.inputs.arrays import load_arrays
from ethosu_kit.pte.ptd import ExternalData, load_external
from ethosu_kit.pte.quant import Quantization, delegate_args
from ethosu_kit.pte.reader import (
    model_from_bytes,
    read_pte_bytes,
    vela_streams_from_bytes,
)
from ethosu_kit.vnpu.delegate import io_shapes

Array = npt.NDArray[Any]
_METHOD = re.compile(r"(input|output)_?(\d{1,6})")
_DELEGATE = re.compile(r"delegate(\d{1,6})_(input|output)(\d{1,6})")


@dataclass(frozen=True)
class Pair:
    a: str
    b: str
    kind: str  # "input" / "output" / "" (unknown: no quantization)
    index: int


@dataclass(frozen=True)
class PairResult:
    pair: Pair
    unit: str  # "LSB (scale 0.0023)" or "integer steps"
    max_lsb: float
    beyond: int
    count: int

    def ok(self, lsb: float) -> bool:
        # `beyond` counts with the float tolerance of a dequantized value (a float32
        # difference of exactly one LSB is 1.0000001 LSB): the verdict is the count
        return self.beyond == 0


def load(path: Path) -> dict[str, Array]:
    out = {}
    for named in load_arrays([path]):
        key = named.source
        if key.startswith(f"{path}[") and key.endswith("]"):
            key = key[len(str(path)) + 1 : -1]
        else:
            key = path.stem
        out[key] = named.array
    return out


def _role(key: str) -> tuple[str, int, int | None]:
    """("input"|"output"|"", index, delegate or None) of a key."""
    m = _METHOD.fullmatch(key)
    if m:
        return m.group(1), int(m.group(2)), None
    d = _DELEGATE.fullmatch(key)
    if d:
        return d.group(2), int(d.group(3)), int(d.group(1))
    return "", -1, None


# delegate K -> (kind, method index) -> the delegate's own index of that tensor
Links = dict[int, dict[tuple[str, int], int]]


def pairs(
    a: dict[str, Array],
    b: dict[str, Array],
    links: Links | None = None,
    unpaired: list[str] | None = None,
) -> list[Pair]:
    """`links` (from the .pte): which delegate input/output each method input/output is;
    a method tensor the program makes on the CPU from the delegate's (or feeds to it
    through a CPU operator) is not one of the delegate's and is left out, named in
    `unpaired`. Without links, method index o pairs with the delegate's o."""
    common = [k for k in a if k in b]
    if common:
        return [Pair(k, k, *_role(k)[:2]) for k in common]
    out = []
    for x, y, swap in ((a, b, False), (b, a, True)):
        delegates = {_role(k)[2] for k in y} - {None}
        if len(delegates) != 1:
            continue
        (k,) = delegates
        known = (links or {}).get(k) if k is not None else None
        left: list[str] = []
        for key in x:
            kind, index, delegate = _role(key)
            if not kind or delegate is not None:
                continue
            if known is not None and (kind, index) not in known:
                left.append(key)
                continue
            other = f"delegate{k}_{kind}{known[(kind, index)] if known else index}"
            if other in y:
                out.append(Pair(other, key, kind, index) if swap else Pair(key, other, kind, index))
        if out or left:
            if unpaired is not None:
                unpaired.extend(left)
            return out
    return out


def other_delegates(links: Links, key: str) -> str:
    """Which delegate tensors a method key (`input0`) is, as `delegate 0 input 0` (or
    "" when none is): a method tensor left unpaired may be another delegate's."""
    kind, index, delegate = _role(key)
    if not kind or delegate is not None:
        return ""
    found = [
        f"delegate {k} {kind} {table[(kind, index)]}"
        for k, table in sorted(links.items())
        if (kind, index) in table
    ]
    return " and ".join(found)


def compare(
    a: dict[str, Array],
    b: dict[str, Array],
    quant: tuple[list[Quantization | None], list[Quantization | None]] | None,
    lsb: float,
    names: tuple[str, str] = ("a", "b"),
    *,
    links: Links | None = None,
    unpaired: list[str] | None = None,
    shapes: Shapes | None = None,
    pte: str = "the program",
) -> list[PairResult]:
    """`shapes` (from the .pte, `tensor_shapes`): each array paired with a program tensor
    must have its shape, or the program (its scales) is not the one the files are of."""
    found = pairs(a, b, links, unpaired)
    if not found and unpaired:
        raise KitError(
            f"{names[0]} and {names[1]}: {', '.join(unpaired)} the program makes on the CPU "
            "from the delegate's tensors: no delegate tensor is it, nothing to compare",
            hint="compare the method's outputs with a reference of the method (the quantized "
            "PyTorch model), or simulate's with simulate's",
        )
    if not found:
        raise KitError(
            f"{names[0]} and {names[1]} have no arrays to compare: keys {sorted(a)} and "
            f"{sorted(b)}",
            hint="name them alike, or use the keys run -o (output<o>) and simulate -o "
            "(delegate<K>_output<o>) write",
        )
    results = []
    for p in found:
        x, y = a[p.a], b[p.b]
        for name, key, value in ((names[0], p.a, x), (names[1], p.b, y)):
            kind, index, delegate = _role(key)  # `output_0` is `output0` too
            canonical = (
                f"{kind}{index}" if delegate is None else f"delegate{delegate}_{kind}{index}"
            )
            want = (shapes or {}).get(canonical) if kind else None
            if want is not None and _squeezed(value.shape) != _squeezed(want):
                # another model's --pte: its scales on these arrays would be a FAIL
                # (or a PASS) about nothing
                raise KitError(
                    f"{name}[{key}] has shape {list(value.shape)}, {pte}'s "
                    f"{_tensor_name(key)} is {list(want)}: not this program's tensor",
                    hint="pass the .pte the files come from (ethosu-kit inspect shows its "
                    "inputs and outputs)",
                )
        if x.size != y.size:
            raise KitError(
                f"{names[0]}[{p.a}] has shape {list(x.shape)}, {names[1]}[{p.b}] "
                f"{list(y.shape)}: not the same tensor"
            )
        q = None
        if quant is not None and p.kind and p.index >= 0:
            table = quant[0] if p.kind == "input" else quant[1]
            q = table[p.index] if p.index < len(table) else None
        floats = x.dtype.kind == "f" or y.dtype.kind == "f"
        if q is None and (x.dtype.kind == "f") != (y.dtype.kind == "f"):
            # a float and an integer side are the same tensor only through its scale and
            # zero point: without them any difference means nothing
            raise KitError(
                f"{names[0]}[{p.a}] is {x.dtype}, {names[1]}[{p.b}] {y.dtype}: a float "
                "and an integer tensor compare only through the tensor's scale and zero point",
                hint="pass --pte model.pte (the program's quantize/dequantize give them)"
                if quant is None
                else f"{pte} has no quantize or dequantize for this tensor: compare it with "
                "an array of the same kind",
            )
        if floats and q is None and lsb > 0:
            raise KitError(
                f"{names[0]}[{p.a}] / {names[1]}[{p.b}]: float values need the tensor's "
                "quantization scale to count LSB",
                hint="pass --pte model.pte (the program's quantize/dequantize operators "
                "give each input's and output's scale)",
            )

        diff_of: Callable[[Array, Array], Array]
        if q is not None and (x.dtype.kind == "f") != (y.dtype.kind == "f"):
            # float vs integer: quantize the float side as the program does (round, clip)
            ints = y if x.dtype.kind == "f" else x
            info = np.iinfo(ints.dtype)
            diff_of = partial(_quantized_diff, q=(q.scale, q.zero_point, info.min, info.max))
            pair = (x, y) if x.dtype.kind == "f" else (y, x)
            unit = f"LSB (scale {q.scale:.6g}, the float side quantized)"
        elif q is not None and floats:
            diff_of, pair = partial(_scaled_diff, scale=q.scale), (x, y)
            unit = f"LSB (scale {q.scale:.6g})"
        else:
            diff_of, pair = _plain_diff, (x, y)
            unit = "(float, no scale: exact only)" if floats else "integer steps"
        worst, beyond, size = _chunked(*pair, diff_of, lsb)
        results.append(PairResult(p, unit, worst, beyond, size))
    return results


# elements compared at a time: the float64 differences of one chunk (8 MiB), never a
# widened copy of a whole array (a 250 MiB int8 array would be 2 GiB as float64)
_CHUNK = 1 << 20


def _quantized_diff(fx: Array, ix: Array, q: tuple[float, int, int, int]) -> Array:
    scale, zero, low, high = q
    qf = np.clip(np.round(fx.astype(np.float64) / scale) + zero, low, high)
    out: Array = np.abs(qf - ix.astype(np.float64))
    return out


def _scaled_diff(fx: Array, fy: Array, scale: float) -> Array:
    out: Array = np.abs(fx.astype(np.float64) - fy) / scale
    return out


def _plain_diff(fx: Array, fy: Array) -> Array:
    out: Array = np.abs(fx.astype(np.float64) - fy.astype(np.float64))
    return out


def _chunked(
    x: Array, y: Array, diff_of: Callable[[Array, Array], Array], lsb: float
) -> tuple[float, int, int]:
    """(largest difference, how many are beyond `lsb`, how many) over x and y, by chunks."""
    xs, ys = x.reshape(-1), y.reshape(-1)
    worst, beyond = 0.0, 0
    for start in range(0, xs.size, _CHUNK):
        diff = diff_of(xs[start : start + _CHUNK], ys[start : start + _CHUNK])
        worst = max(worst, float(diff.max()))
        # float32 rounding of a dequantized value must not count as a step
        beyond += int(np.count_nonzero(diff > lsb + 1e-3))
    return worst, beyond, int(xs.size)


# a key (`input0`, `output1`, `delegate0_input0`) -> the program tensor's shape
Shapes = dict[str, tuple[int, ...]]


def _squeezed(shape: tuple[int, ...]) -> tuple[int, ...]:
    """A shape without its leading 1s (a reference may drop the batch dimension)."""
    out = list(shape)
    while out and out[0] == 1:
        out.pop(0)
    return tuple(out)


def _tensor_name(key: str) -> str:
    """`input0` -> `input 0`, `delegate1_output0` -> `delegate 1 output 0`."""
    kind, index, delegate = _role(key)
    return f"{kind} {index}" if delegate is None else f"delegate {delegate} {kind} {index}"


def tensor_shapes(path: Path, method: str | None = None) -> Shapes:
    """The shape of every tensor a result file may hold of this program: the first
    method's (or `method`'s) inputs and outputs (`run -o`) and each Ethos-U delegate's
    (`simulate -o`)."""
    data = read_pte_bytes(path)
    out: Shapes = {}
    external = load_external(path, None)  # external Vela blocks: the .ptd files beside it
    methods = model_from_bytes(data, str(path), external).methods
    if method is not None:
        methods = tuple(m for m in methods if m.name == method)
    if methods:
        for kind, tensors in (("input", methods[0].inputs), ("output", methods[0].outputs)):
            for i, t in enumerate(tensors):
                out[f"{kind}{i}"] = tuple(int(d) for d in t.shape)
    for k, blocks in enumerate(vela_streams_from_bytes(data, str(path), external)):
        for kind in ("input", "output"):
            for i, shape in enumerate(io_shapes(blocks, kind)):
                out[f"delegate{k}_{kind}{i}"] = shape
    return out


def links_from_pte(path: Path, external: ExternalData | None = None) -> Links:
    """For each Ethos-U delegate K (simulate's numbering), which of its inputs and outputs
    each method input and output is: through the program's quantize (input) and
    dequantize (output) operators, or as it is."""
    data = read_pte_bytes(path)
    args = delegate_args(data, str(path))
    if external is None:  # a program with external Vela blocks: its .ptd files beside it
        external = load_external(path, None)
    out: Links = {}
    for k, blocks in enumerate(vela_streams_from_bytes(data, str(path), external)):
        made = args.get((blocks.method, blocks.delegate_index), [])
        n_in = len(blocks.inputs)
        if len(made) != n_in + len(blocks.outputs):
            continue  # the call's arguments do not line up with the Vela IO
        table: dict[tuple[str, int], int] = {}
        for i, arg in enumerate(made[:n_in]):
            if arg.method_input is not None:
                table.setdefault(("input", arg.method_input), i)
        for o, arg in enumerate(made[n_in:]):
            if arg.method_output is not None:
                table.setdefault(("output", arg.method_output), o)
        out[k] = table
    return out
