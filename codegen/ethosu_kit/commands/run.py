"""`ethosu-kit run fw.elf`: run a Corstone-300 image in QEMU; exit with the firmware's code."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HELP = "run a firmware ELF in QEMU (Corstone-300 as mps3-an547); exit code = the firmware's"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("elf", type=Path, help="the firmware ELF (from ethosu-kit build)")
    parser.add_argument(
        "--timeout", type=float, default=30.0, metavar="S", help="seconds before giving up"
    )


def run(args: argparse.Namespace) -> int:
    from ethosu_kit.errors import KitError
    from ethosu_kit.qemu import run_elf

    result = run_elf(args.elf, args.timeout)
    sys.stdout.write(result.output)
    sys.stdout.flush()
    if result.timed_out:
        raise KitError(
            f"{args.elf}: no exit after {args.timeout:g} s in QEMU "
            f"({len(result.output.splitlines())} UART lines so far, shown above)",
            hint="a firmware must end with exit()/kit_exit(); raise --timeout for long runs",
        )
    code = result.exit_code if result.exit_code is not None else 1
    print(f"ethosu-kit run: exit code {code} after {result.seconds:.2f} s", file=sys.stderr)
    return code
