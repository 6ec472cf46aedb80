"""`ethosu-kit run fw.elf`: run a kit image on the emulator its board's data names.

QEMU for a board with a `[qemu]` machine, an Arm FVP for a board with an `[fvp]` model
when one is found. The UART is shown as it comes; the exit code is the firmware's, and
run's own failures have codes of their own (64..78, npu.exit_codes.RUN_TOOL_EXIT_CODES):
a KitError's CLI code (2, 3, 4) would read as the firmware's PROGRAM_LOAD, METHOD_LOAD,
INPUTS. See docs/running.md.
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ethosu_kit.core.errors import KitError
from ethosu_kit.core.process import MAX_TIMEOUT
from ethosu_kit.firmware import host_io, sandbox
from ethosu_kit.firmware.image import identify
from ethosu_kit.firmware.probe import run_on_probe
from ethosu_kit.firmware.probe_kind import ProbeSpec, parse_probe
from ethosu_kit.firmware.run import EMULATORS, choose_emulator, require_host_io, run_firmware
from ethosu_kit.inputs.arrays import check_output_path, save_npz
from ethosu_kit.inputs.prepare import prepare_inputs
from ethosu_kit.npu.exit_codes import FIRMWARE_MAX, RUN_TOOL, describe

if TYPE_CHECKING:
    from ethosu_kit.firmware.image import KitImage


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


def _probe(text: str) -> ProbeSpec:
    try:
        return parse_probe(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.usage_exit = RUN_TOOL["USAGE"]  # type: ignore[attr-defined]  # cli.app._Parser
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
        choices=EMULATORS,
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
        "--cold-boot",
        action="store_true",
        help='a board that boots from flash ([boot] from = "nv"): QEMU gets only the flash '
        "artefacts `build` wrote beside the ELF, and every RAM region is filled with garbage "
        "before reset (docs/running.md)",
    )
    parser.add_argument(
        "--probe",
        type=_probe,
        metavar="KIND[:HOST:PORT]",
        help="run on a board through its debug probe's GDB server (gdb-multiarch): pyocd, "
        "openocd, jlink (default localhost:3333, :3333, :2331), qemu:HOST:PORT (a QEMU "
        "gdbstub), or qemu alone (the kit starts the board's QEMU with its gdbstub)",
    )
    parser.add_argument(
        "--serial",
        metavar="DEVICE|URL",
        help="with --probe: the board's console UART (pyserial: /dev/ttyACM0, socket://host:port)",
    )
    parser.add_argument(
        "--baud",
        type=int,
        metavar="N",
        help="with --serial: the UART's baud rate (default: the board's [console] baud)",
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
        "--program",
        metavar="NAME",
        help="an image of several programs: run this one only (default: every one in turn); "
        "--inputs/-o need it",
    )
    parser.add_argument(
        "--method",
        metavar="NAME",
        help="run this method of the program only (default: every method, or the one the "
        "project names)",
    )
    parser.add_argument(
        "--no-sandbox",
        action="store_true",
        help="run the emulator unconfined (default: confined with bwrap to the run's own "
        f"folder, no network; also {sandbox.ENV_OPT_OUT}=1; docs/running.md)",
    )
    parser.add_argument(
        "--print-outputs",
        action="store_true",
        help="print every value of every output (the firmware's UART print is short)",
    )


def run(args: argparse.Namespace) -> int:
    """The firmware's exit code; a failure of run's own raises with a code of run's range."""
    try:
        return _run(args)
    except KitError as exc:
        if exc.exit_code <= FIRMWARE_MAX:  # the CLI's 2/3/4; signals (128 + N) stay
            exc.exit_code = RUN_TOOL["REFUSED"]
        raise
    except OSError as exc:
        if exc.filename is None:
            raise
        # as cli.app words it, with run's code for it
        where = str(exc.filename) + (f" -> {exc.filename2}" if exc.filename2 else "")
        error = KitError(f"{where}: {exc.strerror or exc}")
        error.exit_code = RUN_TOOL["IO"]
        raise error from exc


def _run(args: argparse.Namespace) -> int:
    image = identify(args.elf, args.plan)
    asked = [
        flag
        for flag, given in (
            ("--inputs", bool(args.inputs)),
            ("-o", args.output is not None),
            ("--print-outputs", args.print_outputs),
        )
        if given
    ]
    require_host_io(args.elf, image, asked)
    _check_probe_options(args)
    emulator = None if args.probe else choose_emulator(image, args.emulator, args.fvp)
    io = IoRequest.from_args(args, image)
    # through a probe, GDB serves the firmware's files and reaches the server over TCP
    confine = sandbox.choose(no_sandbox=args.no_sandbox, network=args.probe is not None)
    if not confine.confined:
        _notice(confine.warning())
    with tempfile.TemporaryDirectory(prefix="ethosu-kit-run-") as tmp:
        workdir = Path(tmp)
        io.write(workdir)
        if emulator is None:  # a board through its probe (firmware.probe)
            result = run_on_probe(
                args.elf, image, args.probe, timeout=args.timeout, cwd=workdir,
                cmd_line=io.cmd_line, serial=args.serial, baud=args.baud, echo=_echo,
                notice=_notice, confine=confine,
            )  # fmt: skip
        else:
            result = run_firmware(
                args.elf, image, emulator, timeout=args.timeout, fvp=args.fvp, cwd=workdir,
                cmd_line=io.cmd_line, echo=_echo, notice=_notice, cold_boot=args.cold_boot,
                sandbox=confine,
            )  # fmt: skip
        code = result.exit_code if result.exit_code is not None else 1
        if code == 0:
            try:
                io.collect(workdir)
            except KitError as exc:  # the firmware passed: what it wrote is at fault
                exc.exit_code = RUN_TOOL["OUTPUTS"]
                raise

    print(
        f"ethosu-kit run: exit code {describe(code)} after {result.seconds:.2f} s",
        file=sys.stderr,
    )
    return code


def _check_probe_options(args: argparse.Namespace) -> None:
    """--probe runs on a board, not on an emulator; --serial/--baud belong to it."""
    wrong = ""
    if args.probe is not None and (args.emulator != "auto" or args.fvp is not None):
        wrong = "--probe runs on a board: it takes no --emulator or --fvp"
    elif args.probe is not None and args.cold_boot:
        wrong = (
            "--probe loads the build's flash artefacts itself and starts a cold-boot image "
            "by a reset: it takes no --cold-boot (a QEMU run's)"
        )
    elif args.probe is None and (args.serial is not None or args.baud is not None):
        wrong = "--serial and --baud read a board's UART: they need --probe"
    elif args.baud is not None and not 0 < args.baud <= 100_000_000:
        wrong = f"--baud {args.baud}: not a baud rate"
    if wrong:
        error = KitError(wrong, hint="ethosu-kit run --help; docs/running.md")
        error.exit_code = RUN_TOOL["USAGE"]
        raise error


def _notice(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _echo(data: bytes) -> None:
    sys.stdout.buffer.write(data.replace(b"\r\n", b"\n"))
    sys.stdout.flush()


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
        wants_io = bool(args.inputs or io.wants_outputs)
        selection = host_io.select(image, args.program, args.method, wants_io)
        if selection.words:
            io.cmd_line = (image.elf.name, *selection.words)
        if not wants_io:
            return io
        ins, outs = host_io.program_tensors(image, selection)
        io.input_tensors = ins
        io.outputs = outs
        if args.output is not None:
            args.output = check_output_path(args.output)
        words = [image.elf.name, *selection.words]
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
