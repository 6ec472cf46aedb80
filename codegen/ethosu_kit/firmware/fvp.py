"""Run a kit image on an Arm Fixed Virtual Platform (FVP), as the board's data says.

The board's `[fvp]` table names the FVP executable per NPU kind and the model's
instance names (the board, the CPU, the NPU); everything else is built here from
the image: the NPU's MAC count (from the image's plan), the UART on stdout, and
semihosting with a working directory and a command line. `--fvp PATH` overrides
the executable; without it the one the board names is looked up on PATH.

The FVPs are not installable in the kit's CI: the command line is tested as a
golden per board and NPU, and its absence is a clear error.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from pathlib import Path

from ethosu_kit.board.checks import FVP_NAME_RE, name_problem
from ethosu_kit.board.model import Fvp
from ethosu_kit.core.errors import KitError
from ethosu_kit.core.process import run_child
from ethosu_kit.firmware.image import KitImage
from ethosu_kit.firmware.qemu import RunResult, result_of
from ethosu_kit.firmware.sandbox import Sandbox


def fvp_table(image: KitImage) -> Fvp:
    """The board's [fvp] table, or a KitError when the board names no FVP."""
    if image.board.qemu_layout:
        raise KitError(
            f"{image.elf}: laid out for {image.board.name}'s QEMU stand-in (gen --qemu-stand-in), "
            "not for the board or its FVP",
            hint="generate the project without --qemu-stand-in for the FVP",
        )
    fvp = image.board.fvp
    if fvp is None:
        raise KitError(
            f"{image.elf}: board {image.board.name} ({image.board.source}) names no FVP "
            "([fvp] table), so the kit does not know which FVP runs it",
            hint="add an [fvp] table to the board.toml (docs/running.md), run it in QEMU, or "
            "on the board through its debug probe (ethosu-kit run --probe openocd|pyocd|jlink)",
        )
    return fvp


def fvp_executable_name(image: KitImage) -> str:
    fvp = fvp_table(image)
    kind = image.npu_kind
    name = str(fvp.models.get(kind, "") or fvp.models.get("", ""))
    if not name:
        kinds = ", ".join(sorted(k for k in fvp.models if k)) or "none"
        raise KitError(
            f"{image.elf}: built for NPU {kind or 'none'!r}; board {image.board.name}'s [fvp] "
            f"models are for {kinds}"
        )
    return name


def find_fvp(image: KitImage, path: Path | None, *, required: bool = True) -> Path | None:
    """The FVP executable: `path` when given, else the board's one on PATH."""
    if path is not None:
        if not path.is_file():
            raise KitError(f"--fvp {path}: no such file", hint="give the FVP executable's path")
        return path
    if image.board.fvp is None or image.board.qemu_layout:
        if required:
            fvp_table(image)
        return None
    name = fvp_executable_name(image)
    if name_problem(name, FVP_NAME_RE, "an FVP name") or "/" in name or "\\" in name:
        # the board data (or a plan read back) names a program: only a NAME looked up on
        # PATH, never a path; --fvp PATH is how a user names an executable
        raise KitError(
            f"board {image.board.name}: fvp.models.{image.npu_kind or 'default'}: {name[:80]!r} "
            "is not an FVP name (the kit runs only an FVP found on PATH or given with --fvp)",
            hint="pass --fvp PATH to run a specific FVP executable",
        )
    found = shutil.which(name)
    if found is None:
        if required:
            raise KitError(
                f"{name} is not on PATH (the FVP that board {image.board.name} names for "
                f"{image.npu_kind or 'its NPU'})",
                hint="install it from Arm (Ecosystem FVPs) and put it on PATH, pass --fvp PATH, "
                "or run in QEMU: --emulator qemu",
            )
        return None
    return Path(found)


def fvp_command(
    image: KitImage,
    executable: Path | str,
    *,
    cwd: Path | None = None,
    cmd_line: Sequence[str] = (),
) -> tuple[str, ...]:
    """The FVP command line for `image` (its board's [fvp] instance names, its NPU)."""
    fvp = fvp_table(image)
    params: list[str] = []

    def p(name: str) -> None:
        params.extend(("-C", name))

    board, cpu, npu = fvp.board, fvp.cpu, fvp.npu
    if image.npu_kind and npu:
        macs = image.npu_macs
        if macs is None:
            raise KitError(
                f"{image.elf}: the image does not say its NPU's MAC count (.kit.info 'macs', "
                "the plan's 'accelerator')",
                hint="rebuild it with this kit version",
            )
        p(f"{npu}.num_macs={macs}")
    p(f"{board}.visualisation.disable-visualisation=1")
    p(f"{board}.telnetterminal0.start_telnet=0")
    p(f"{board}.{fvp.uart}.out_file=-")
    p(f"{board}.{fvp.uart}.unbuffered_output=1")
    p(f"{board}.{fvp.uart}.shutdown_on_eot=1")
    p(f"{cpu}.semihosting-enable=1")
    p(f"{cpu}.semihosting-stack_base=0")
    p(f"{cpu}.semihosting-heap_limit=0")
    if cwd is not None:
        p(f"{cpu}.semihosting-cwd={cwd}")
    if cmd_line:
        p(f"{cpu}.semihosting-cmd_line={' '.join(cmd_line)}")
    for extra in fvp.params:
        p(str(extra))
    return (str(executable), *params, "-a", str(image.elf.resolve()))


def run_fvp(
    image: KitImage,
    timeout: float,
    *,
    fvp: Path | None = None,
    cwd: Path | None = None,
    cmd_line: Sequence[str] = (),
    echo: Callable[[bytes], None] | None = None,
    sandbox: Sandbox | None = None,
) -> RunResult:
    executable = find_fvp(image, fvp)
    assert executable is not None
    cmd = fvp_command(image, executable, cwd=cwd, cmd_line=cmd_line)
    if sandbox is not None:  # as QEMU's (firmware.sandbox): the run's folder, the image
        cmd = sandbox.wrap(cmd, workdir=cwd, files=(image.elf,))
    return result_of(run_child(cmd, timeout, what="the FVP", cwd=cwd, echo=echo), cmd)
