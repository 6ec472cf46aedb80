"""`ethosu-kit lower-example -o model.pte`: lower the built-in example CNN for an Ethos-U.

Needs torch and executorch (the only command that does); everything else reads the
.pte it writes.
"""

from __future__ import annotations

import argparse
import os
import re
import tempfile
import warnings
from pathlib import Path

from ethosu_kit.aot.examples import lower_example
from ethosu_kit.aot.lowering import Target
from ethosu_kit.core.errors import KitError
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
        help="Vela memory mode: Sram_Only, Shared_Sram, Dedicated_Sram, Dedicated_Sram_384KB "
        "(default: ExecuTorch's for the accelerator)",
    )
    parser.add_argument(
        "--system-config",
        help="Vela system config from Arm/vela.ini, e.g. Ethos_U55_High_End_Embedded "
        "(default: ExecuTorch's for the accelerator)",
    )


def run(args: argparse.Namespace) -> int:
    if not re.fullmatch(r"ethos-u(55|65|85)-\d+", args.accelerator):
        raise KitError(
            f"--accelerator {args.accelerator!r} is not an Ethos-U configuration",
            hint="use ethos-u55-<32|64|128|256>, ethos-u65-<256|512> or "
            "ethos-u85-<128|256|512|1024|2048>",
        )
    if args.memory_mode is not None:
        try:
            MemoryMode.parse(args.memory_mode)
        except ValueError:
            raise KitError(
                f"--memory-mode {args.memory_mode!r} is not a Vela memory mode",
                hint="use Sram_Only, Shared_Sram or Dedicated_Sram (or Dedicated_Sram_384KB ...)",
            ) from None
    out = Path(args.output)
    if out.is_dir():
        raise KitError(f"{out}: is a directory; -o takes the .pte file to write")
    target = Target(args.accelerator, args.system_config, args.memory_mode)
    # torch's deprecation chatter is not the user's business here
    warnings.filterwarnings("ignore", category=FutureWarning)
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    out.parent.mkdir(parents=True, exist_ok=True)
    # Write beside the target and rename, so a failed lowering leaves no half file.
    fd, tmp_name = tempfile.mkstemp(dir=out.parent, prefix=out.name + ".", suffix=".tmp")
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        try:
            data = lower_example(tmp, target)
        except KitError:
            raise
        except Exception as exc:  # Vela/ExecuTorch reject the target: the user's input
            raise KitError(
                f"lowering for {args.accelerator} failed: {type(exc).__name__}: "
                + (str(exc).splitlines() or [""])[0],
                hint="check --accelerator, --memory-mode and --system-config against "
                "Vela's Arm/vela.ini",
            ) from exc
        tmp.chmod(0o644)
        tmp.replace(out)
    finally:
        tmp.unlink(missing_ok=True)
    print(f"wrote {out} ({len(data):,} bytes, {args.accelerator})")
    return 0
