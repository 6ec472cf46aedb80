"""`ethosu-kit run fw.elf`: run a kit image on the emulator its board's data names.

QEMU for a board with a `[qemu]` machine, an Arm FVP for a board with an `[fvp]` model
when one is found. The UART is shown as it comes; the exit code is the firmware's.
See docs/running.md.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ethosu_kit.qemu import RunResult

HELP = (
    "run a firmware image in QEMU or an Arm FVP (from its board's data); exit code = the firmware's"
)

TIMEOUT_EXIT = 124  # as coreutils' timeout(1)


def _seconds(text: str) -> float:
    from ethosu_kit.process import MAX_TIMEOUT

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not math.isfinite(value) or value <= 0 or value > MAX_TIMEOUT:
        raise argparse.ArgumentTypeError(
            f"{text!r}: must be a number of seconds > 0 and at most {MAX_TIMEOUT:g} (one day)"
        )
    return value


def exit_from_uart(result: RunResult) -> RunResult:
    """An FVP's own exit status need not be the firmware's: the kit's apps print
    `kit: exit <code>` last, and that line wins when it is there."""
    import dataclasses
    import re

    found = re.findall(r"^kit: exit (\d+)\s*$", result.output, re.MULTILINE)
    if found and not result.timed_out:
        return dataclasses.replace(result, exit_code=int(found[-1]))
    return result


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("elf", type=Path, help="the firmware ELF (from ethosu-kit build)")
    parser.add_argument(
        "--timeout",
        type=_seconds,
        default=30.0,
        metavar="S",
        help="seconds before the emulator is stopped (default 30, at most 86400); exit 124",
    )
    parser.add_argument(
        "--emulator",
        choices=("auto", "qemu", "fvp"),
        default="auto",
        help="auto (default): the board's FVP when one is found, else its QEMU machine",
    )
    parser.add_argument(
        "--fvp",
        type=Path,
        metavar="PATH",
        help="the FVP executable to use (implies --emulator fvp)",
    )


def run(args: argparse.Namespace) -> int:
    from ethosu_kit.errors import KitError
    from ethosu_kit.kit_image import identify

    image = identify(args.elf)
    emulator = "fvp" if args.fvp is not None else args.emulator
    if emulator == "auto":
        from ethosu_kit.fvp import find_fvp

        emulator = "fvp" if find_fvp(image, None, required=False) is not None else "qemu"

    def echo(data: bytes) -> None:
        sys.stdout.buffer.write(data.replace(b"\r\n", b"\n"))
        sys.stdout.flush()

    if emulator == "fvp":
        from ethosu_kit.fvp import run_fvp

        result = run_fvp(image, args.timeout, fvp=args.fvp, echo=echo)
        name = "the FVP"
        result = exit_from_uart(result)
    else:
        from ethosu_kit.qemu import run_image, stand_in_line, target_for

        target = target_for(image)
        if target.stand_in:
            print(stand_in_line(image.board, target), file=sys.stderr, flush=True)
        result = run_image(image, args.timeout, echo=echo)
        name = "QEMU"
    lines = len(result.output.splitlines())
    if result.output_overflow:
        raise KitError(
            f"{args.elf}: stopped after {lines} UART lines: the output passed the "
            f"{len(result.output) >> 20} MiB the kit keeps",
            hint="a firmware printing in a loop; fix it or shorten its output",
        )
    if result.timed_out:
        error = KitError(
            f"{args.elf}: no exit after {args.timeout:g} s in {name} "
            f"({lines} UART lines so far, shown above)",
            hint="a firmware must end with exit()/kit_exit(); raise --timeout for long runs",
        )
        error.exit_code = TIMEOUT_EXIT
        raise error
    code = result.exit_code if result.exit_code is not None else 1
    print(f"ethosu-kit run: exit code {code} after {result.seconds:.2f} s", file=sys.stderr)
    return code
