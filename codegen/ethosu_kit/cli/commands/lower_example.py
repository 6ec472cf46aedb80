"""`ethosu-kit lower-example -o model.pte`: lower the built-in example CNN for an Ethos-U.

Needs torch and executorch (the only command that does); everything else reads the
.pte it writes.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ethosu_kit.aot.write import example_target, write_example
from ethosu_kit.npu.facts import MemoryMode


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-o", "--output", required=True, help="the .pte file to write")
    parser.add_argument(
        "--accelerator",
        default="ethos-u55-128",
        help="Vela accelerator config, e.g. ethos-u55-128, ethos-u65-256, ethos-u85-256 "
        "(default: %(default)s)",
    )
    parser.add_argument(
        "--memory-mode",
        help=f"Vela memory mode: {', '.join(MemoryMode)}, Dedicated_Sram_384KB "
        "(default: ExecuTorch's for the accelerator)",
    )
    parser.add_argument(
        "--system-config",
        help="Vela system config from Arm/vela.ini, e.g. Ethos_U55_High_End_Embedded "
        "(default: ExecuTorch's for the accelerator)",
    )


def run(args: argparse.Namespace) -> int:
    target = example_target(args.accelerator, args.system_config, args.memory_mode)
    out = Path(args.output)
    data = write_example(out, target)
    print(f"wrote {out} ({len(data):,} bytes, {args.accelerator})")
    return 0
