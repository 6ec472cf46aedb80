"""`ethosu-kit inspect model.pte [--json]`: what a lowered .pte holds, without torch."""

from __future__ import annotations

import argparse
from pathlib import Path

from ethosu_kit.core.errors import KitError
from ethosu_kit.inputs.compare import links_from_pte
from ethosu_kit.pte import read_pte
from ethosu_kit.pte.describe import describe_model, model_json
from ethosu_kit.pte.reader import io_quantization


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("pte", help="the .pte file (ExecuTorch program, ET12)")
    parser.add_argument(
        "--json", action="store_true", help="print ModelInfo as JSON instead of tables"
    )


def run(args: argparse.Namespace) -> int:
    info = read_pte(args.pte)
    if args.json:
        print(model_json(info), end="")
    else:
        print(describe_model(info) + "".join(quantization_lines(args.pte)), end="")
    return 0


def quantization_lines(pte: str) -> list[str]:
    """The first method's input and output scales (from the program's own quantize and
    dequantize operators on the CPU) and the Ethos-U delegate tensor each one is: what
    a reference, `simulate --inputs` and `compare --pte` go by."""
    try:
        quant_in, quant_out = io_quantization(pte)
        links = links_from_pte(Path(pte)) if any(quant_in) or any(quant_out) else {}
    except KitError:  # read_pte took the file: what it cannot say here is left out
        return []
    if not any(quant_in) and not any(quant_out):
        return []
    lines = ["quantization (the program's quantize/dequantize on the CPU, method 0):\n"]
    for kind, table, arrow in (("input", quant_in, "->"), ("output", quant_out, "<-")):
        for i, q in enumerate(table):
            where = [f"delegate {k} {kind} {t[(kind, i)]}" for k, t in links.items()
                     if (kind, i) in t]  # fmt: skip
            text = f"scale {q.scale:.9g}, zero point {q.zero_point}" if q else "not quantized"
            tail = f" {arrow} {', '.join(where)}" if where else ""
            if not where and links:
                tail = " (through a CPU operator: no delegate tensor is it)"
            lines.append(f"  {kind} {i}: {text}{tail}\n")
    return lines
