"""`ethosu-kit simulate model.pte [--inputs ...] [-o out.npz]`: the NPU part, on the host.

Each Ethos-U delegate's Vela command stream runs on the virtual Ethos-U55 (the C
library of drivers/ethosu_virtual) on the given integer inputs, or on full-range
random ones, and its outputs are printed or saved. The inputs and outputs are the
delegate's own (quantized, as the NPU sees them), not the method's float tensors.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

HELP = "run each Ethos-U delegate of a .pte on the virtual NPU (given or random integer inputs)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("pte", help="the .pte file")
    parser.add_argument(
        "--inputs",
        nargs="+",
        metavar="FILE",
        help="inputs of the delegate: one .npy per input, or one .npz (arrays in order); "
        "needs a single delegate or --delegate",
    )
    parser.add_argument(
        "--delegate", type=int, metavar="K", help="run only Ethos-U delegate K (from 0)"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the random inputs (0)")
    parser.add_argument("-o", "--output", type=Path, help="save inputs and outputs to this .npz")


def _load_inputs(files: list[str]) -> list[tuple[str, np.ndarray[Any, Any]]]:
    """(where it came from, for error messages: `x.npy` or `in.npz[key]`, array), in order."""
    import numpy as np

    from ethosu_kit.errors import KitError

    arrays: list[tuple[str, np.ndarray[Any, Any]]] = []
    for name in files:
        path = Path(name)
        if not path.is_file():
            raise KitError(f"{path}: input file not found")
        try:
            loaded = np.load(path, allow_pickle=False)
        except (ValueError, OSError) as exc:
            raise KitError(f"{path}: not a .npy/.npz file ({exc})") from None
        if isinstance(loaded, np.ndarray):
            arrays.append((str(path), loaded))
        else:
            with loaded:
                arrays.extend((f"{path}[{key}]", loaded[key]) for key in loaded.files)
    return arrays


def run(args: argparse.Namespace) -> int:
    import numpy as np

    from ethosu_kit.errors import KitError
    from ethosu_kit.pte import read_pte, read_vela_streams
    from ethosu_kit.vnpu import run_delegate
    from ethosu_kit.vnpu.delegate import (
        fast_scratch_bytes,
        io_shapes,
        random_inputs,
        tensor_dtype,
    )

    streams = read_vela_streams(args.pte)
    fast = fast_scratch_bytes(read_pte(args.pte))
    if not streams:
        raise KitError(
            f"{args.pte}: no Ethos-U delegate to simulate", hint="the model runs on the CPU only"
        )
    selected = list(enumerate(streams))
    if args.delegate is not None:
        if not 0 <= args.delegate < len(streams):
            raise KitError(
                f"{args.pte}: --delegate {args.delegate} out of range: it has {len(streams)} "
                "Ethos-U delegate(s)"
            )
        selected = [selected[args.delegate]]
    given = _load_inputs(args.inputs) if args.inputs else None
    if given is not None and len(selected) != 1:
        raise KitError(
            f"{args.pte}: --inputs with {len(selected)} delegates is ambiguous",
            hint="pick one with --delegate K",
        )
    rng = np.random.default_rng(args.seed)
    saved: dict[str, np.ndarray[Any, Any]] = {}
    for k, blocks in selected:
        if given is None:
            inputs = random_inputs(blocks, rng)
        else:
            if len(given) != len(blocks.inputs):
                raise KitError(
                    f"{args.pte}: delegate {k} takes {len(blocks.inputs)} input(s), "
                    f"--inputs gave {len(given)}"
                )
            inputs = []
            shapes = io_shapes(blocks, "input")
            for i, (t, (source, value)) in enumerate(zip(blocks.inputs, given, strict=True)):
                dtype, shape = tensor_dtype(t), shapes[i]
                if value.size != int(np.prod(shape)):
                    raise KitError(
                        f"{source}: delegate {k} input {i}: needs shape {shape} "
                        f"({int(np.prod(shape))} values), the file has {value.shape}"
                    )
                info = np.iinfo(dtype)
                if value.size and (value.min() < info.min or value.max() > info.max):
                    raise KitError(
                        f"{source}: delegate {k} input {i}: values outside {dtype} "
                        f"[{info.min}, {info.max}]",
                        hint="pass the quantized integers the NPU sees",
                    )
                inputs.append(value.astype(dtype).reshape(shape))
        outputs = run_delegate(blocks, inputs, fast_scratch_size=fast)
        print(
            f"delegate {k} ({blocks.method}): {len(blocks.cmd_data)} B commands, "
            f"{len(blocks.weight_data)} B weights, {blocks.scratch_size} B scratch"
        )
        for i, x in enumerate(inputs):
            saved[f"delegate{k}_input{i}"] = x
            print(f"  input {i}: {x.dtype} {list(x.shape)}")
        for i, y in enumerate(outputs):
            saved[f"delegate{k}_output{i}"] = y
            flat = y.reshape(-1)
            head = " ".join(str(v) for v in flat[:16]) + (" ..." if flat.size > 16 else "")
            print(
                f"  output {i}: {y.dtype} {list(y.shape)} min {flat.min()} max {flat.max()}: {head}"
            )
    if args.output is not None:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        np.savez(args.output, **saved)
        print(f"saved {len(saved)} arrays to {args.output}")
    return 0
