"""Run a kit firmware image in QEMU, on the machine its board's data names.

The board comes from the image itself (firmware.image.identify: `.kit.info` plus the
project's board file); the machine, the CPU model and whether the machine is only a
stand-in for the board come from that board's data (`[qemu]` in board.toml). A board
without a QEMU machine is refused with the reason; nothing ever runs on a default
machine. The firmware leaves through semihosting SYS_EXIT_EXTENDED, so QEMU's exit
code is the firmware's. QEMU runs under process.run_child: its own process group,
killed and reaped on every exit path.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ethosu_kit.board.loader import stand_in_board
from ethosu_kit.board.model import Board, MemoryRegion
from ethosu_kit.core.errors import KitError
from ethosu_kit.core.process import ChildResult, run_child
from ethosu_kit.firmware.image import KitImage, check_fits, identify
from ethosu_kit.layout.link_layout import link_layout
from ethosu_kit.plan.fill import region_fill
from ethosu_kit.plan.types import MemoryPlan

QEMU = "qemu-system-arm"
DEFAULT_TIMEOUT = 30.0


@dataclass(frozen=True)
class QemuTarget:
    machine: str  # -M
    cpu: str  # -cpu ("" = the machine's own)
    stand_in: str  # non-empty: QEMU models another machine; said on every run
    # the memory the machine has for the board's images (empty: the board's own regions)
    regions: tuple[MemoryRegion, ...] = ()


@dataclass(frozen=True)
class RunResult:
    exit_code: int | None  # None when it timed out
    output: str  # UART text
    seconds: float
    timed_out: bool
    command: tuple[str, ...]
    stand_in: str = ""
    output_overflow: bool = False


def qemu_target(board: Board) -> QemuTarget | None:
    """The board data's QEMU machine ([qemu] machine/cpu/stand_in), or None."""
    q = board.qemu  # schema 1's qemu_machine is read into it too
    if q is None or not q.machine:
        return None
    if q.layout is not None:  # the memory the stand-in has: the board laid onto it
        return QemuTarget(q.machine, q.cpu, q.stand_in, stand_in_board(board).regions)
    return QemuTarget(q.machine, q.cpu, q.stand_in)


def target_for(image: KitImage) -> QemuTarget:
    target = qemu_target(image.board)
    if target is None:
        raise KitError(
            f"{image.elf}: built for {image.board.name} ({image.board.source}), whose data "
            "names no QEMU machine ([qemu] machine), so QEMU cannot run it",
            hint="run it on the board through its debug probe (ethosu-kit run --probe "
            "openocd|pyocd|jlink), on an Arm FVP (--fvp PATH), or add a [qemu] table to the "
            "board.toml (docs/running.md)",
        )
    return target


def check_image(image: KitImage, target: QemuTarget) -> None:
    """Refuse an image with bytes where the machine has no memory for its board."""
    layout = image.board.qemu is not None and image.board.qemu.layout is not None
    check_fits(
        image,
        target.regions or image.board.regions,
        f"QEMU's {target.machine} has for {image.board.name}",
        "generate the project with `gen --qemu-stand-in` to lay it onto the stand-in machine"
        if layout and not image.board.qemu_layout
        else "the image was linked for another memory map: regenerate its project for this board",
    )


def why_not_in_qemu(plan: MemoryPlan) -> str:
    """Why QEMU cannot run an image of `plan`, or "" when it can: the test `run` applies
    to a built image (target_for, check_image), made on the plan before anything is built
    (gen --stack auto). The image's sections lie in the regions the plan's link layout
    names (code, data, vectors, every buffer); each must be where the machine has memory
    for the board (its own regions, or its stand-in's laid-out ones)."""
    board = plan.board
    target = qemu_target(board)
    if target is None:
        return f"board {board.name} ({board.source}) names no QEMU machine ([qemu] machine)"
    if target.regions:
        used = {u.region.name: u.used for u in region_fill(plan)}
        names = {n for _, vma, lma in link_layout(plan).image_sections for n in (vma, lma)}
        for region in board.regions:
            span = max(1, used.get(region.name, 0))
            if region.name in names and not any(
                r.contains(region.base, span) for r in target.regions
            ):
                return (
                    f"its {region.name} at 0x{region.base:08x} is outside the memory QEMU's "
                    f"{target.machine} has for {board.name}"
                )
    if shutil.which(QEMU) is None:
        return f"{QEMU} is not installed"
    return ""


@functools.cache
def _qemu_list(option: str) -> frozenset[str]:
    """The names `qemu-system-arm <option> help` lists (machines or CPUs); empty when
    QEMU cannot say (then QEMU itself reports a wrong name)."""
    try:
        out = subprocess.run(
            [QEMU, option, "help"], capture_output=True, text=True, timeout=30, check=False
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return frozenset()
    lines = out.splitlines()[1:]  # "Supported machines are:" / "Available CPUs:"
    return frozenset(line.split()[0] for line in lines if line.strip())


def check_target(board: Board, target: QemuTarget) -> None:
    """Refuse a machine or CPU this QEMU does not have, naming the board file's key.

    Without it QEMU exits 1 at start-up, which reads as the firmware's own exit code 1
    (FAIL) although nothing ran.
    """
    for key, option, name in (("machine", "-machine", target.machine), ("cpu", "-cpu", target.cpu)):
        known = _qemu_list(option)
        if name and known and name not in known:
            close = sorted(n for n in known if n.startswith(name.split("-")[0]))[:12]
            raise KitError(
                f"{board.source}: qemu.{key} {name!r}: {QEMU} has no such {key}",
                hint=(f"it has {', '.join(close)}; " if close else "")
                + f"`{QEMU} {option} help` lists them all",
            )


def qemu_command(
    elf: Path, target: QemuTarget, semihosting_args: Sequence[str] = ()
) -> tuple[str, ...]:
    config = "enable=on,target=native"
    for arg in semihosting_args:
        if "," in arg:
            raise KitError(f"semihosting argument {arg!r} contains ',' (QEMU cannot pass it)")
        config += f",arg={arg}"
    return (
        QEMU,
        "-M", target.machine,
        *(("-cpu", target.cpu) if target.cpu else ()),
        "-nographic",
        "-monitor", "none",
        "-serial", "stdio",
        "-semihosting-config", config,
        "-kernel", str(elf),
    )  # fmt: skip


def stand_in_line(board: Board, target: QemuTarget) -> str:
    """The one line every stand-in run prints."""
    return (
        f"ethosu-kit run: QEMU {target.machine}"
        f"{f' ({target.cpu})' if target.cpu else ''} stands in for {board.name}: "
        f"{target.stand_in}"
    )


def run_image(
    image: KitImage,
    timeout: float = DEFAULT_TIMEOUT,
    *,
    cwd: Path | None = None,
    semihosting_args: Sequence[str] = (),
    echo: Callable[[bytes], None] | None = None,
) -> RunResult:
    target = target_for(image)
    check_image(image, target)
    if shutil.which(QEMU) is None:
        raise KitError(
            f"{QEMU} is not installed", hint="apt-get install qemu-system-arm (QEMU >= 7.2)"
        )
    check_target(image.board, target)
    cmd = qemu_command(image.elf.resolve(), target, semihosting_args)
    child = run_child(cmd, timeout, what="QEMU", cwd=cwd, echo=echo)
    return result_of(child, cmd, stand_in_line(image.board, target) if target.stand_in else "")


def result_of(child: ChildResult, cmd: tuple[str, ...], stand_in: str = "") -> RunResult:
    """An emulator's ChildResult as a RunResult (UART text with \\n line ends)."""
    return RunResult(
        exit_code=child.returncode,
        output=child.output.decode("utf-8", "replace").replace("\r\n", "\n"),
        seconds=child.seconds,
        timed_out=child.timed_out,
        command=cmd,
        stand_in=stand_in,
        output_overflow=child.output_overflow,
    )


def run_elf(elf: Path, timeout: float = DEFAULT_TIMEOUT) -> RunResult:
    """Identify `elf` (kit image, board) and run it in QEMU; see run_image."""
    return run_image(identify(elf), timeout)
