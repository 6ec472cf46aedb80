"""`ethosu-kit inspect model.pte [--ptd FILE ...] [--json]`: what a lowered .pte holds,
without torch; external Vela blocks are followed into the .ptd files given (or found
beside the pte)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ethosu_kit.core.errors import KitError
from ethosu_kit.inputs.compare import links_from_pte
from ethosu_kit.pte import read_pte
from ethosu_kit.pte.describe import describe_model, model_json
from ethosu_kit.pte.ptd import ExternalData, external_blocks, external_lines, load_external
from ethosu_kit.pte.quant import io_quantization
from ethosu_kit.pte.reader import read_vela_streams


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("pte", help="the .pte file (ExecuTorch program, ET12)")
    parser.add_argument(
        "--json", action="store_true", help="print ModelInfo as JSON instead of tables"
    )
    add_ptd_argument(parser)


def add_ptd_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--ptd",
        action="append",
        metavar="FILE",
        help="a .ptd holding the pte's external Vela blocks (repeatable; default: the "
        ".ptd files beside the pte)",
    )


def run(args: argparse.Namespace) -> int:
    external = load_external(args.pte, args.ptd)
    info = read_pte(args.pte, external)
    blocks = external_blocks(read_vela_streams(args.pte, external)) if external.files else []
    if args.json and not external.files:
        print(model_json(info), end="")
    elif args.json:
        data = json.loads(model_json(info))
        data["external_data"] = {
            "files": [
                {"path": f.path, "tag": f.tag, "bytes": len(f.data), "keys": sorted(f.entries)}
                for f in external.files
            ],
            "blocks": [vars(b) for b in blocks],
        }
        print(json.dumps(data, indent=2))
    else:
        text = describe_model(info) + "".join(quantization_lines(args.pte, external))
        print(text + "".join(external_lines(blocks, external)), end="")
    return 0


def quantization_lines(pte: str, external: ExternalData | None = None) -> list[str]:
    """The first method's input and output scales (from the program's own quantize and
    dequantize operators on the CPU) and the Ethos-U delegate tensor each one is: what
    a reference, `simulate --inputs` and `compare --pte` go by."""
    try:
        quant_in, quant_out = io_quantization(pte)
        links = links_from_pte(Path(pte), external) if any(quant_in) or any(quant_out) else {}
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
