"""The NPU self-test's data (apps/selftest): what it runs and what it expects.

For each Ethos-U delegate (in the order `ethosu-kit simulate` numbers them, K = 0, 1, …):
where its command stream and weights sit in the placed network (byte offsets into the
.pte, which the firmware holds as it is), where the delegate's inputs and outputs sit in
its scratch (Vela region 1), and one blob of test vectors: every input, then every
expected output, each 16-byte aligned. The plan places that blob (`Role.VECTORS`);
`vectors_size` is the one rule both the planner and the blob follow.

The vectors come from a file (`delegate<K>_input<i>` / `delegate<K>_output<o>`, the
keys `ethosu-kit simulate -o` writes), or from the virtual NPU on the host with seeded
full-range random inputs. A file with a delegate's inputs but none of its outputs gets
the outputs from the virtual NPU too.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ethosu_kit.core.errors import KitError
from ethosu_kit.core.files import MAX_INPUT, MAX_PLAN, read_bytes, read_text
from ethosu_kit.inputs.arrays import load_arrays
from ethosu_kit.pte import read_vela_streams
from ethosu_kit.pte.ptd import ExternalData, load_external
from ethosu_kit.selftest.vectors import SelftestVectors, layout, vectors_size
from ethosu_kit.vnpu.delegate import (
    fast_scratch_bytes,
    io_shapes,
    random_inputs,
    run_delegate,
    tensor_dtype,
    tensor_shape,
)

if TYPE_CHECKING:
    from ethosu_kit.pte.model import ModelInfo, VelaTensor

DEFAULT_SEED = 0


def _starts_with(path: Path, magic: bytes) -> bool:
    """Does a regular file start with `magic`? (reads those bytes only; anything else
    is left to load_arrays, which refuses it with its own message)"""
    try:
        if not path.is_file():
            return False
        with path.open("rb") as f:
            return f.read(len(magic)) == magic
    except OSError:
        return False


def _load(path: Path) -> dict[str, np.ndarray[Any, Any]]:
    """The arrays of a vectors .npz by key, read by the kit's hardened loader."""
    if _starts_with(path, b"\x93NUMPY"):
        raise KitError(
            f"{path}: a single array (.npy); the vectors are a .npz with keys "
            "delegate<K>_input<i> and delegate<K>_output<o>",
            hint="make one: ethosu-kit simulate model.pte -o vectors.npz",
        )
    prefix = f"{path}["
    return {
        named.source.removeprefix(prefix).removesuffix("]"): named.array
        for named in load_arrays([path])
    }


def _checked(
    path: Path, key: str, value: np.ndarray[Any, Any], t: VelaTensor, written: tuple[int, ...]
) -> np.ndarray[Any, Any]:
    """The array, if its dtype and shape are the tensor's (leading 1s do not count).
    `written`: the shape as `simulate -o` writes it (the program's rank), for the message."""
    dtype, shape = tensor_dtype(t), tensor_shape(t)  # without leading 1s, as `given` below
    if value.dtype != dtype:
        raise KitError(
            f"{path}[{key}]: dtype {value.dtype}, the delegate's tensor is {dtype} {list(written)}",
            hint="pass the quantized integers the NPU sees (ethosu-kit simulate -o writes them)",
        )
    given = list(value.shape)
    while len(given) > 1 and given[0] == 1:
        given.pop(0)
    if tuple(given) != shape:
        raise KitError(
            f"{path}[{key}]: shape {list(value.shape)}, the delegate's tensor is {list(written)}"
        )
    return value


def make_vectors(
    pte: Path,
    model: ModelInfo,
    vectors: Path | None = None,
    seed: int = DEFAULT_SEED,
    external: ExternalData | None = None,
) -> SelftestVectors:
    """The self-test's vectors for every Ethos-U delegate of `pte` (external Vela blocks
    from the .ptd files of `external`)."""
    streams = read_vela_streams(pte, external)
    if not streams:
        raise KitError(f"{pte}: no Ethos-U delegate for the NPU self-test")
    delegates = layout(streams)
    source = vectors or Path()
    given = _load(vectors) if vectors is not None else None
    if given is not None:
        known = {t.key for d in delegates for t in (*d.inputs, *d.outputs)}
        unknown = sorted(set(given) - known)
        if unknown:
            raise KitError(
                f"{vectors}: key {unknown[0]} is not an input or output of this model's "
                f"{len(delegates)} Ethos-U delegate(s)",
                hint="keys are delegate<K>_input<i> and delegate<K>_output<o> "
                "(ethosu-kit simulate -o writes them)",
            )
    rng = np.random.default_rng(seed)
    fast = fast_scratch_bytes(model)
    blob = bytearray(vectors_size(model))
    computed = 0
    for d, b in zip(delegates, streams, strict=True):
        if given is None:
            inputs = random_inputs(b, rng)
        else:
            inputs = []
            for st, t, written in zip(d.inputs, b.inputs, io_shapes(b, "input"), strict=True):
                if st.key not in given:
                    raise KitError(f"{vectors}: no {st.key} (delegate {d.index}'s input)")
                inputs.append(_checked(source, st.key, given[st.key], t, written))
        want_keys = [st.key for st in d.outputs]
        if given is not None and any(k in given for k in want_keys):
            outputs = []
            for st, t, written in zip(d.outputs, b.outputs, io_shapes(b, "output"), strict=True):
                if st.key not in given:
                    raise KitError(f"{vectors}: no {st.key} (delegate {d.index}'s output)")
                outputs.append(_checked(source, st.key, given[st.key], t, written))
        else:
            outputs = run_delegate(b, inputs, fast_scratch_size=fast)
            computed += 1
        for st, value in zip((*d.inputs, *d.outputs), (*inputs, *outputs), strict=True):
            raw = np.ascontiguousarray(value).tobytes()
            blob[st.vector_offset : st.vector_offset + st.nbytes] = raw
    if given is None:
        said = f"seeded random inputs (seed {seed}), outputs from the virtual NPU on the host"
    else:
        said = source.name + (
            f" ({computed} delegate(s)' outputs from the virtual NPU on the host)"
            if computed
            else ""
        )
    return SelftestVectors(delegates, bytes(blob), said)


def project_vectors(project: Path, blob_path: Path, header: Path, pte: Path) -> SelftestVectors:
    """The vectors a generated self-test project already has (to re-render it unchanged):
    `blob_path` and `header`, its generated vectors and kit_selftest.h (ProjectDir's)."""
    if not blob_path.is_file() or not header.is_file():
        raise KitError(
            f"{project}: the plan has self-test vectors but {blob_path.name} or "
            f"{header.name} is missing",
            hint="generate the project again with --app selftest",
        )
    found = re.search(
        r'^#define KIT_SELFTEST_VECTORS_SOURCE "(.*)"$', read_text(header, MAX_PLAN), re.M
    )
    source = found.group(1).replace('\\"', '"') if found else blob_path.name
    streams = read_vela_streams(pte, load_external(pte, None))  # a project's .ptd: beside it
    return SelftestVectors(layout(streams), read_bytes(blob_path, MAX_INPUT), source)
