"""Running a kit image on the emulator its board's data names: QEMU for a board with a
`[qemu]` machine, an Arm FVP for a board with an `[fvp]` model when one is found. The
exit code is the firmware's (the `kit: exit <code>` line its apps print last); the
tool's own failures (a time limit, a flood of output, no exit line) are `KitError`s
with exit codes of their own, in a range apart from the firmware's
(`npu.exit_codes.RUN_TOOL_EXIT_CODES`). See docs/running.md.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ethosu_kit.core.errors import KitError
from ethosu_kit.firmware.fvp import find_fvp, run_fvp
from ethosu_kit.firmware.image import KitImage
from ethosu_kit.firmware.qemu import (
    QEMU,
    QemuTarget,
    RunResult,
    check_image,
    run_image,
    stand_in_line,
    target_for,
)
from ethosu_kit.firmware.sandbox import BWRAP, Sandbox
from ethosu_kit.npu.exit_codes import RUN_TOOL, exit_lines
from ethosu_kit.plan.apps import App

# run's own failures are in a range of their own, apart from the firmware's codes
# (npu.exit_codes.RUN_TOOL_EXIT_CODES; docs/running.md)
TIMEOUT_EXIT = RUN_TOOL["TIMEOUT"]
NO_EXIT_LINE = RUN_TOOL["NO_EXIT"]  # the emulator ended, the firmware never said how
OUTPUT_FLOOD = RUN_TOOL["FLOOD"]
EMULATORS = ("auto", "qemu", "fvp")

# The kit's apps that take no inputs from the host and send no outputs back, and what
# they run instead. The executor_runner does (docs/running.md); an app folder of the
# user's may, and an image from before .kit.info named its app cannot say: not refused.
NO_HOST_IO: dict[str, tuple[str, str]] = {  # by App (what .kit.info names, a str)
    App.BRINGUP: (
        "checks where the plan's buffers are",
        "to run the program on inputs, build the executor_runner: "
        "ethosu-kit build DIR --app executor_runner",
    ),
    App.SELFTEST: (
        "runs each delegate's command stream on the vectors built into it",
        "give the self-test its inputs as vectors: ethosu-kit simulate model.pte --inputs "
        "x.npy -o vectors.npz, then ethosu-kit build DIR --app selftest --vectors "
        "vectors.npz; the program's own outputs come from the executor_runner",
    ),
}


def exit_from_uart(result: RunResult) -> RunResult:
    """An FVP's own exit status need not be the firmware's: the kit's apps print
    `kit: exit <code>` last, and that line wins when it is there."""
    found = exit_lines(result.output)
    if found and not result.timed_out:
        return dataclasses.replace(result, exit_code=int(found[-1]))
    return result


def require_host_io(elf: Path, image: KitImage, asked: Sequence[str]) -> None:
    """`asked` (--inputs/-o/--print-outputs) of an app that reads and writes no files on
    the host: refused before the emulator starts (else the run passes, then no output
    file is there)."""
    app = image.info.get("app", "")
    if app in NO_HOST_IO and asked:
        what, hint = NO_HOST_IO[app]
        raise KitError(
            f"{elf}: {'/'.join(asked)}: the {app} app takes no inputs from the host and "
            f"sends no outputs back (it {what})",
            hint=hint,
        )


@dataclass(frozen=True)
class Emulator:
    """Where an image runs: "qemu" (with its machine) or "fvp"."""

    name: str
    target: QemuTarget | None = None


def choose_emulator(image: KitImage, emulator: str, fvp: Path | None) -> Emulator:
    """`emulator` ("auto": the board's FVP when one is found, else its QEMU machine; a
    given `fvp` means the FVP). Checked here, before any IO work: a board without a
    machine, an image QEMU cannot run, or no FVP to run it is refused."""
    name = "fvp" if fvp is not None else emulator
    if name == "auto":
        name = "fvp" if find_fvp(image, None, required=False) is not None else "qemu"
    if name != "qemu":
        find_fvp(image, fvp)  # no FVP (or no --fvp file): refused before any IO work
        return Emulator(name)
    target = target_for(image)
    check_image(image, target)
    return Emulator(name, target)


def run_firmware(
    elf: Path,
    image: KitImage,
    emulator: Emulator,
    *,
    timeout: float,
    fvp: Path | None = None,
    cwd: Path | None = None,
    cmd_line: tuple[str, ...] = (),
    echo: Callable[[bytes], None] | None = None,
    notice: Callable[[str], None] | None = None,
    cold_boot: bool = False,
    sandbox: Sandbox | None = None,
) -> RunResult:
    """Run `image` (named `elf`, as the user gave it) to its end; the result's exit code
    is the firmware's. `echo` gets the UART as it comes, `notice` a line about a QEMU
    stand-in machine. KitError when the run was stopped (time limit: TIMEOUT_EXIT; output
    flood: OUTPUT_FLOOD) or ended without the firmware's exit line (NO_EXIT_LINE).
    `cold_boot`: QEMU gets the flash artefacts alone, every RAM poisoned (qemu.run_image);
    `sandbox` confines the emulator to `cwd` (firmware.sandbox)."""
    if cold_boot and emulator.name != "qemu":
        raise KitError(
            f"{elf}: --cold-boot runs in QEMU (its generic loader puts the flash artefacts "
            "in place); the FVP loads the ELF",
            hint="add --emulator qemu",
        )
    if emulator.name == "fvp":
        result = run_fvp(
            image, timeout, fvp=fvp, cwd=cwd, cmd_line=cmd_line, echo=echo, sandbox=sandbox
        )
        result = exit_from_uart(result)
        name = "the FVP"
    else:
        assert emulator.target is not None  # choose_emulator gives QEMU its machine
        if emulator.target.stand_in and notice is not None:
            notice(stand_in_line(image.board, emulator.target))
        result = run_image(
            image, timeout, cwd=cwd, semihosting_args=cmd_line, echo=echo,
            cold_boot=cold_boot, notice=notice, sandbox=sandbox,
        )  # fmt: skip
        name = "QEMU"
    _check_ended(elf, result, name, timeout)
    if not exit_lines(result.output):
        _sandbox_failed(elf, result)
    if emulator.name == "qemu" and not exit_lines(result.output):
        _qemu_failed(elf, image, result)
    if emulator.name == "fvp" and not exit_lines(result.output):
        error = KitError(
            f"{elf}: the FVP ended (status {result.exit_code}) without the "
            "firmware's last line `kit: exit <code>`: the image did not run to its end, "
            "so its exit code is unknown",
            hint="is it the FVP for this board and NPU (--fvp)? its own messages are "
            "above; the same image in QEMU: --emulator qemu; an FVP that cannot start in "
            "run's sandbox: --no-sandbox (docs/running.md)",
        )
        error.exit_code = NO_EXIT_LINE
        raise error
    code = result.exit_code if result.exit_code is not None else 1
    if code == 0 and not exit_lines(result.output) and image.board.console.kind != "none":
        # Exit status 0 alone is not a pass: an app whose console never came up (no
        # kit_platform_init) or that left by another way than kit_app_result is unproven.
        error = KitError(
            f"{elf}: {name} exited with status 0 without the firmware's last line "
            "`kit: exit <code>`: the app never said how it ended",
            hint="a kit app calls kit_platform_init() first and ends through "
            "kit_app_result(code) (docs/apps.md)",
        )
        error.exit_code = NO_EXIT_LINE
        raise error
    return dataclasses.replace(result, exit_code=code)


def _sandbox_failed(elf: Path, result: RunResult) -> None:
    """A KitError when bwrap itself failed (its own `bwrap: ...` message) before the
    emulator ran: its exit status 1 is not the firmware's code 1 (FAIL)."""
    own = [line for line in result.output.splitlines() if line.startswith(f"{BWRAP}:")]
    if own:
        error = KitError(
            f"{elf}: the sandbox did not start the emulator ({own[0][:200]})",
            hint="run unconfined with --no-sandbox (or ETHOSU_KIT_NO_SANDBOX=1) if this "
            "machine cannot confine it (docs/running.md)",
        )
        error.exit_code = RUN_TOOL["REFUSED"]
        raise error


def _qemu_failed(elf: Path, image: KitImage, result: RunResult) -> None:
    """A KitError when QEMU itself failed (its own `qemu-system-arm: ...` message, or a
    signal) rather than the firmware ending: the exit status is then QEMU's, not the
    app's, and must not read as the firmware's code 1 (FAIL)."""
    own = [line for line in result.output.splitlines() if line.startswith(f"{QEMU}:")]
    if own:
        hint = (
            f"board {image.board.name}'s [qemu] machine and cpu must be ones this QEMU "
            f"runs together (`{QEMU} -machine help`, `-cpu help`)"
        )
        if "-device loader" in own[0]:  # a cold boot's flash file, not the machine
            hint = (
                "QEMU could not put that flash file at its address: the file must be "
                "readable and the address inside a memory the machine has (`info mtree` "
                "in QEMU's monitor); rebuild with `ethosu-kit build` if the file is gone"
            )
        error = KitError(
            f"{elf}: QEMU refused to run it ({own[0].removeprefix(f'{QEMU}:').strip()[:200]})",
            hint=hint,
        )
        error.exit_code = RUN_TOOL["REFUSED"]
        raise error
    signal = _signal_of(result)
    if signal is not None:
        error = KitError(
            f"{elf}: QEMU ended on signal {signal} without the firmware's last "
            "line `kit: exit <code>`: its exit code is unknown"
        )
        error.exit_code = NO_EXIT_LINE
        raise error


def _signal_of(result: RunResult) -> int | None:
    """The signal that ended the emulator, None for a normal exit. Under bwrap the
    emulator's death by signal N reaches us as bwrap's exit status 128 + N (the shell's
    convention), not as a negative return code."""
    code = result.exit_code
    if code is None:
        return None
    if code < 0:
        return -code
    sandboxed = bool(result.command) and Path(result.command[0]).name == BWRAP
    return code - 128 if sandboxed and code > 128 else None


def _check_ended(elf: Path, result: RunResult, name: str, timeout: float) -> None:
    """A KitError when the emulator was stopped by the kit (output flood, time limit)."""
    lines = len(result.output.splitlines())
    if result.output_overflow:
        flood = KitError(
            f"{elf}: stopped after {lines} UART lines: the output passed the "
            f"{len(result.output) >> 20} MiB the kit keeps",
            hint="a firmware printing in a loop; fix it or shorten its output",
        )
        flood.exit_code = OUTPUT_FLOOD
        raise flood
    if result.timed_out:
        error = KitError(
            f"{elf}: no exit after {timeout:g} s in {name} "
            f"({lines} UART lines so far, shown above)",
            hint="a firmware must end with exit()/kit_hal_exit(); raise --timeout for long runs",
        )
        error.exit_code = TIMEOUT_EXIT
        raise error
