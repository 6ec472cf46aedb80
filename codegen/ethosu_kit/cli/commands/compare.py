"""`ethosu-kit compare A.npz B.npz [--pte model.pte] [--lsb N]`: within N LSB?"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from ethosu_kit.core.errors import KitError
from ethosu_kit.inputs.compare import compare, links_from_pte, load, other_delegates, tensor_shapes
from ethosu_kit.pte.quant import io_quantization


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("a", type=Path, help="first .npz (or .npy)")
    parser.add_argument("b", type=Path, help="second .npz (or .npy)")
    parser.add_argument(
        "--pte",
        type=Path,
        help="the model: each input's and output's scale and zero point (needed for float "
        "values, and to compare run's floats with simulate's integers)",
    )
    parser.add_argument(
        "--method",
        metavar="NAME",
        help="the method of the program the results are of (default: its first): its "
        "inputs' and outputs' scales (run --method, simulate --method)",
    )
    parser.add_argument(
        "--lsb",
        type=float,
        default=0.0,
        metavar="N",
        help="allowed difference in LSB of each tensor's scale (default 0: bit-exact)",
    )


def run(args: argparse.Namespace) -> int:
    if not math.isfinite(args.lsb) or args.lsb < 0:
        # inf would pass every difference, NaN none
        raise KitError(f"--lsb {args.lsb}: must be a finite number >= 0")
    quant = None
    links = None
    shapes = None
    if args.pte is not None:
        quant = io_quantization(args.pte, args.method)
        links = links_from_pte(args.pte)
        shapes = tensor_shapes(args.pte, args.method)
    elif args.method is not None:
        raise KitError("--method names a method of --pte: give the program too")
    names = (args.a.name, args.b.name)
    unpaired: list[str] = []
    results = compare(
        load(args.a),
        load(args.b),
        quant,
        args.lsb,
        names,
        links=links,
        unpaired=unpaired,
        shapes=shapes,
        pte=args.pte.name if args.pte is not None else "the program",
    )
    for key in unpaired:
        elsewhere = other_delegates(links or {}, key)
        if elsewhere:
            # a model with CPU operators between delegates: simulate -o of one delegate
            # holds that delegate's tensors only
            print(f"{key}: not compared: it is {elsewhere}, which the files do not hold")
            continue
        print(
            f"{key}: not compared: the program makes it on the CPU from the delegate's "
            "tensors (or feeds it through a CPU operator), so no delegate tensor is it "
            "(ethosu-kit inspect: quantization)"
        )
    bad = 0
    for r in results:
        ok = r.ok(args.lsb)
        bad += not ok
        print(
            f"{names[0]}[{r.pair.a}] vs {names[1]}[{r.pair.b}]: max {r.max_lsb:.3g} {r.unit}, "
            f"{r.beyond} of {r.count} beyond {args.lsb:g}: {'OK' if ok else 'DIFFERENT'}"
        )
    skipped = f"; {len(unpaired)} not compared: {', '.join(unpaired)}" if unpaired else ""
    print(
        f"COMPARE {'PASS' if bad == 0 else 'FAIL'} ({len(results) - bad} of {len(results)}"
        f"{skipped})"
    )
    return 0 if bad == 0 else 1
