"""Run a kit firmware image in QEMU, on the machine its board's data names.

The board comes from the image itself (firmware.image.identify: `.kit.info` plus the
project's board file); the machine, the CPU model and whether the machine is only a
stand-in for the board come from that board's data (`[qemu]` in board.toml). A board
without a QEMU machine is refused with the reason; nothing ever runs on a default
machine. The firmware leaves through semihosting SYS_EXIT_EXTENDED, so QEMU's exit
code is the firmware's. A cold boot (`run --cold-boot`, a board with [boot] from = "nv")
gives QEMU the flash artefacts alone, through its generic loader, and garbage in every
RAM region: the image must come up from its vectors in non-volatile memory as on the
part. QEMU runs under process.run_child: its own process group,
killed and reaped on every exit path.
"""

from __future__ import annotations

import functools
import random
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ethosu_kit.board.loader import stand_in_board
from ethosu_kit.board.model import Board, MemoryRegion
from ethosu_kit.core.errors import KitError
from ethosu_kit.core.process import ChildResult, run_child
from ethosu_kit.firmware.flash import flash_images, manifest_path, read_manifest, run_extents
from ethosu_kit.firmware.image import KitImage, check_fits, identify
from ethosu_kit.firmware.sandbox import Sandbox
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


def runnable_target(image: KitImage) -> QemuTarget:
    """The board's machine for `image`, refused as `run` refuses it: no machine, bytes
    where the machine has no memory, no QEMU, a machine or CPU this QEMU lacks."""
    target = target_for(image)
    check_image(image, target)
    if shutil.which(QEMU) is None:
        raise KitError(
            f"{QEMU} is not installed", hint="apt-get install qemu-system-arm (QEMU >= 7.2)"
        )
    check_target(image.board, target)
    return target


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
    elf: Path,
    target: QemuTarget,
    semihosting_args: Sequence[str] = (),
    blobs: Sequence[Blob] = (),
) -> tuple[str, ...]:
    """QEMU's command line: the ELF as -kernel, or (a cold boot) only `blobs`, each put
    in memory by QEMU's generic loader before the core's reset reads its vectors."""
    config = "enable=on,target=native"
    for arg in semihosting_args:
        if "," in arg:
            raise KitError(f"semihosting argument {arg!r} contains ',' (QEMU cannot pass it)")
        config += f",arg={arg}"
    load: tuple[str, ...] = ("-kernel", str(elf))
    if blobs:
        load = tuple(arg for b in blobs for arg in ("-device", b.device))
    return (
        QEMU,
        "-M", target.machine,
        *(("-cpu", target.cpu) if target.cpu else ()),
        "-nographic",
        "-monitor", "none",
        "-serial", "stdio",
        "-semihosting-config", config,
        *load,
    )  # fmt: skip


@dataclass(frozen=True)
class Blob:
    """A file QEMU's generic loader puts at `address` before reset, byte for byte."""

    address: int
    path: Path

    @property
    def device(self) -> str:
        # absolute: QEMU runs in `run`'s working folder (inside the sandbox, another
        # one), so a path relative to where the user typed the ELF's finds nothing.
        # QEMU's option syntax: a ',' in a value is written ',,'
        file = str(self.path.resolve()).replace(",", ",,")
        return f"loader,file={file},addr=0x{self.address:x},force-raw=on"


# RAM is filled with this garbage before a cold boot: the same every run, so that a
# failure reproduces, and nothing like the zeros QEMU starts RAM with.
POISON_SEED = 0x6B6974
# QEMU's loader takes a raw file of at most the machine's RAM size (16 MiB on the MPS2
# machines): a region is poisoned in chunks of this size, from one file.
POISON_CHUNK = 1 << 20
# A region up to this size is poisoned whole; of a larger one (the 2 GiB DDR of an
# mps3-an524, as QEMU's map gives it) only the span the image uses, from the region's
# base: QEMU keeps a copy of every loader blob (4 GiB of host memory for that DDR) and
# each blob is two arguments (the sandbox's bwrap takes at most 9000).
POISON_WHOLE = 16 << 20


def cold_boot_blobs(image: KitImage, folder: Path) -> tuple[list[Blob], str]:
    """What QEMU gets for a cold boot of `image` (`run --cold-boot`): the flash artefacts
    `build` wrote beside the ELF, checked to be this ELF's, and a poison blob over every
    volatile region of the board (files written in `folder`); and the line that says so."""
    board = image.board
    if not board.cold_boot:
        raise KitError(
            f"{image.elf}: --cold-boot: board {board.name} ({board.source}) boots loaded "
            '([boot] from = "loader"): nothing but a loader puts its image in memory',
            hint='a board that boots from flash or MRAM says [boot] from = "nv" '
            "(docs/boards.md); run without --cold-boot",
        )
    manifest_file = manifest_path(image.elf)
    if not manifest_file.is_file():
        raise KitError(
            f"{image.elf}: --cold-boot: no {manifest_file.name} beside it: the flash "
            "artefacts are written by `ethosu-kit build`",
            hint=f"rebuild the project, or copy {manifest_file.name} and its .bin files "
            "along with the ELF",
        )
    manifest = read_manifest(manifest_file)
    expected, left_out = flash_images(image.elf, board)
    if left_out:
        raise KitError(
            f"{image.elf}: --cold-boot: the image stores {left_out[0]}, which no flasher "
            "writes and nothing fills at reset",
            hint=f"ethosu-kit check-elf {image.elf} names every such segment",
        )
    blobs = []
    have = {f.region: f for f in manifest.files}
    for want in expected:
        f = have.get(want.region)
        path = manifest_file.parent / f.bin if f else None
        if (
            f is None
            or path is None
            or f.address != want.address
            or not path.is_file()
            or path.read_bytes() != want.data
        ):
            raise KitError(
                f"{manifest_file}: the flash file for {want.region} is missing or is not "
                f"what {image.elf.name} stores there (0x{want.address:08x}, "
                f"{len(want.data)} B)",
                hint="rebuild the project with `ethosu-kit build`: its flash artefacts "
                "are from another build",
            )
        blobs.append(Blob(want.address, path))
    chunk = random.Random(POISON_SEED).randbytes(POISON_CHUNK)
    poisoned: list[str] = []
    untouched: list[str] = []
    extents = run_extents(image.elf)
    for r in board.regions:
        if not r.volatile:
            continue
        end = r.end
        if r.size > POISON_WHOLE:
            used = [a + n for a, n in extents if r.base <= a < r.end]
            end = min(r.end, max(used, default=r.base))
            end = min(r.end, r.base + -(-(end - r.base) // POISON_CHUNK) * POISON_CHUNK)
            if end == r.base:
                untouched.append(f"{r.name} ({r.size >> 20} MiB) holds nothing of the image")
                continue
            poisoned.append(f"{r.name} (the first {(end - r.base) >> 20} MiB: what the image uses)")
        else:
            poisoned.append(r.name)
        for at in range(r.base, end, POISON_CHUNK):
            size = min(POISON_CHUNK, end - at)
            blob = folder / f"poison-{size}.bin"
            if not blob.is_file():
                blob.write_bytes(chunk[:size])
            blobs.append(Blob(at, blob))
    flashed = ", ".join(f"{b.path.name} at 0x{b.address:08x}" for b in blobs[: len(expected)])
    line = (
        f"ethosu-kit run: cold boot: QEMU gets only {flashed}; "
        f"RAM {', '.join(poisoned) or '(none)'} filled with garbage before reset"
        + "".join(f"; {u}: not filled" for u in untouched)
    )
    return blobs, line


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
    cold_boot: bool = False,
    notice: Callable[[str], None] | None = None,
    sandbox: Sandbox | None = None,
) -> RunResult:
    """Run `image` in QEMU in `cwd`; `cold_boot`: from its flash artefacts alone, RAM
    poisoned (cold_boot_blobs; `notice` gets the line that says what QEMU was given);
    `sandbox` (firmware.sandbox) confines QEMU to `cwd` (`run` passes one: its image is
    untrusted; None: the kit's own images)."""
    target = runnable_target(image)
    with tempfile.TemporaryDirectory(prefix="ethosu-kit-cold-") as tmp:
        blobs: list[Blob] = []
        if cold_boot:
            blobs, line = cold_boot_blobs(image, Path(tmp))
            if notice is not None:
                notice(line)
        cmd = qemu_command(image.elf.resolve(), target, semihosting_args, blobs)
        if sandbox is not None:
            files = (image.elf, *(b.path for b in blobs))
            cmd = sandbox.wrap(cmd, workdir=cwd, files=files)
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


def run_elf(elf: Path, timeout: float = DEFAULT_TIMEOUT, *, cold_boot: bool = False) -> RunResult:
    """Identify `elf` (kit image, board) and run it in QEMU; see run_image."""
    return run_image(identify(elf), timeout, cold_boot=cold_boot)
