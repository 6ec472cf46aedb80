"""`ethosu-kit run fw.elf`: run a kit image on the emulator its board's data names.

QEMU for a board with a `[qemu]` machine, an Arm FVP for a board with an `[fvp]` model
when one is found. The UART is shown as it comes; the exit code is the firmware's.
See docs/running.md.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import re
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ethosu_kit.core.errors import KitError
from ethosu_kit.core.process import MAX_TIMEOUT
from ethosu_kit.firmware import host_io
from ethosu_kit.firmware.fvp import find_fvp, run_fvp
from ethosu_kit.firmware.image import identify
from ethosu_kit.firmware.qemu import check_image, run_image, stand_in_line, target_for
from ethosu_kit.inputs.arrays import check_output_path, save_npz
from ethosu_kit.inputs.prepare import prepare_inputs
from ethosu_kit.npu.exit_codes import describe

if TYPE_CHECKING:
    from ethosu_kit.firmware.image import KitImage
    from ethosu_kit.firmware.qemu import RunResult


TIMEOUT_EXIT = 124  # as coreutils' timeout(1)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not math.isfinite(value) or value <= 0 or value > MAX_TIMEOUT:
        raise argparse.ArgumentTypeError(
            f"{text!r}: must be a number of seconds > 0 and at most {MAX_TIMEOUT:g} (one day)"
        )
    return value


NO_EXIT_LINE = 125  # the emulator ended, the firmware never said how (coreutils: 125)


def exit_from_uart(result: RunResult) -> RunResult:
    """An FVP's own exit status need not be the firmware's: the kit's apps print
    `kit: exit <code>` last, and that line wins when it is there."""
    found = _exit_lines(result.output)
    if found and not result.timed_out:
        return dataclasses.replace(result, exit_code=int(found[-1]))
    return result


def _exit_lines(output: str) -> list[str]:
    return re.findall(r"^kit: exit (\d+)\s*$", output, re.MULTILINE)


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
    parser.add_argument(
        "--plan",
        type=Path,
        metavar="FILE",
        help="the memory_plan.json of the image's project, for an ELF copied away from it "
        "(default: <elf name>.memory_plan.json beside the ELF, else the project around it)",
    )
    parser.add_argument(
        "--inputs",
        nargs="+",
        metavar="FILE",
        help="the program's inputs: one .npy per input, or an .npz (exact dtype and shape); "
        "the firmware reads them over semihosting (executor_runner, docs/running.md)",
    )
    parser.add_argument(
        "-o",
        "--output",
        type=Path,
        metavar="OUT.npz",
        help="save every output the firmware wrote (and the inputs) to this .npz",
    )
    parser.add_argument(
        "--print-outputs",
        action="store_true",
        help="print every value of every output (the firmware's UART print is short)",
    )


# The kit's apps that take no inputs from the host and send no outputs back, and what
# they run instead. The executor_runner does (docs/running.md); an app folder of the
# user's may, and an image from before .kit.info named its app cannot say: not refused.
NO_HOST_IO = {
    "bringup": (
        "checks where the plan's buffers are",
        "to run the program on inputs, build the executor_runner: "
        "ethosu-kit build DIR --app executor_runner",
    ),
    "selftest": (
        "runs each delegate's command stream on the vectors built into it",
        "give the self-test its inputs as vectors: ethosu-kit simulate model.pte --inputs "
        "x.npy -o vectors.npz, then ethosu-kit build DIR --app selftest --vectors "
        "vectors.npz; the program's own outputs come from the executor_runner",
    ),
}


def _require_host_io(args: argparse.Namespace, image: KitImage) -> None:
    """--inputs/-o/--print-outputs on an app that reads and writes no files on the host:
    refused before the emulator starts (else the run passes, then no output file is there)."""
    app = image.info.get("app", "")
    asked = [
        flag
        for flag, given in (
            ("--inputs", bool(args.inputs)),
            ("-o", args.output is not None),
            ("--print-outputs", args.print_outputs),
        )
        if given
    ]
    if app in NO_HOST_IO and asked:
        what, hint = NO_HOST_IO[app]
        raise KitError(
            f"{args.elf}: {'/'.join(asked)}: the {app} app takes no inputs from the host and "
            f"sends no outputs back (it {what})",
            hint=hint,
        )


def run(args: argparse.Namespace) -> int:
    image = identify(args.elf, args.plan)
    _require_host_io(args, image)
    emulator = "fvp" if args.fvp is not None else args.emulator
    if emulator == "auto":
        emulator = "fvp" if find_fvp(image, None, required=False) is not None else "qemu"
    if emulator == "qemu":
        target = target_for(image)  # refuses a board without a machine before any IO work
        check_image(image, target)
    io = IoRequest.from_args(args, image)
    with tempfile.TemporaryDirectory(prefix="ethosu-kit-run-") as tmp:
        workdir = Path(tmp)
        io.write(workdir)
        if emulator == "fvp":
            result = run_fvp(
                image, args.timeout, fvp=args.fvp, cwd=workdir, cmd_line=io.cmd_line, echo=_echo
            )
            result = exit_from_uart(result)
            name = "the FVP"
        else:
            if target.stand_in:
                print(stand_in_line(image.board, target), file=sys.stderr, flush=True)
            result = run_image(
                image, args.timeout, cwd=workdir, semihosting_args=io.cmd_line, echo=_echo
            )
            name = "QEMU"
        _check_ended(args, result, name)
        if emulator == "fvp" and not _exit_lines(result.output):
            error = KitError(
                f"{args.elf}: the FVP ended (status {result.exit_code}) without the "
                "firmware's last line `kit: exit <code>`: the image did not run to its end, "
                "so its exit code is unknown",
                hint="is it the FVP for this board and NPU (--fvp)? its own messages are "
                "above; the same image in QEMU: --emulator qemu",
            )
            error.exit_code = NO_EXIT_LINE
            raise error
        code = result.exit_code if result.exit_code is not None else 1
        if code == 0 and not _exit_lines(result.output) and image.board.console.kind != "none":
            # Exit status 0 alone is not a pass: an app whose console never came up (no
            # kit_platform_init) or that left by another way than kit_app_result is unproven.
            error = KitError(
                f"{args.elf}: {name} exited with status 0 without the firmware's last line "
                "`kit: exit <code>`: the app never said how it ended",
                hint="a kit app calls kit_platform_init() first and ends through "
                "kit_app_result(code) (docs/apps.md)",
            )
            error.exit_code = NO_EXIT_LINE
            raise error
        if code == 0:
            io.collect(workdir)

    print(
        f"ethosu-kit run: exit code {describe(code)} after {result.seconds:.2f} s",
        file=sys.stderr,
    )
    return code


def _echo(data: bytes) -> None:
    sys.stdout.buffer.write(data.replace(b"\r\n", b"\n"))
    sys.stdout.flush()


def _check_ended(args: argparse.Namespace, result: RunResult, name: str) -> None:
    """A KitError when the emulator was stopped by the kit (output flood, time limit)."""
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
            hint="a firmware must end with exit()/kit_hal_exit(); raise --timeout for long runs",
        )
        error.exit_code = TIMEOUT_EXIT
        raise error


class IoRequest:
    """What `--inputs`, `-o` and `--print-outputs` ask of the firmware (firmware.host_io)."""

    def __init__(self, args: argparse.Namespace, image: KitImage) -> None:
        self.args = args
        self.image = image
        self.inputs: list[Any] = []  # the arrays of --inputs
        self.input_tensors: list[Any] = []  # the program's inputs (inputs.prepare.Tensor)
        self.outputs: list[Any] = []  # the program's outputs (inputs.prepare.Tensor)
        self.wants_outputs = bool(args.output is not None or args.print_outputs)
        self.cmd_line: tuple[str, ...] = ()

    @classmethod
    def from_args(cls, args: argparse.Namespace, image: KitImage) -> IoRequest:
        """Everything checked before the emulator starts (arrays vs the program, -o)."""
        io = cls(args, image)
        if not (args.inputs or io.wants_outputs):
            return io
        ins, outs = host_io.program_tensors(image)
        io.input_tensors = ins
        io.outputs = outs
        if args.output is not None:
            args.output = check_output_path(args.output)
        words = [image.elf.name]
        if args.inputs:
            io.inputs = prepare_inputs(args.inputs, ins)
            words.append(host_io.INPUTS_FLAG)
        if io.wants_outputs:
            words.append(host_io.OUTPUTS_FLAG)
        io.cmd_line = tuple(words)
        return io

    def write(self, folder: Path) -> None:
        host_io.write_inputs(folder, self.inputs)

    def collect(self, folder: Path) -> None:
        if not self.wants_outputs:
            return
        outputs = host_io.read_outputs(folder, self.outputs, self.image.elf)
        if self.args.print_outputs:
            sys.stdout.write(host_io.format_outputs(outputs))
        if self.args.output is not None:
            inputs: list[Any] | None = self.inputs
            if not self.args.inputs:
                # the inputs the firmware chose (compiled in, or ones), as it sent them back
                inputs = host_io.read_inputs(folder, self.input_tensors, self.image.elf)
                if inputs is None:
                    print(
                        f"ethosu-kit run: note: {self.image.elf} sent back no inputs (an "
                        f"image built before the kit asked for them): {self.args.output} "
                        "holds the outputs only; rebuild it, or pass --inputs",
                        file=sys.stderr,
                    )
            arrays = {f"input{i}": a for i, a in enumerate(inputs or [])}
            arrays.update({f"output{o}": a for o, a in enumerate(outputs)})
            written = save_npz(self.args.output, arrays)
            print(f"ethosu-kit run: wrote {written}", file=sys.stderr)
