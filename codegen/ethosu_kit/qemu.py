"""Run a Corstone-300 firmware ELF in QEMU's mps3-an547 and return its exit code and UART text.

The firmware leaves through semihosting SYS_EXIT_EXTENDED, so QEMU's exit code is the
firmware's. The board an ELF was built for is read from its `.kit.info` section
(sdk/src/kit_info.c), falling back to `memory_plan.json` in the project folder
around it, so an image for a board QEMU has no model of is refused up front.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from ethosu_kit.elf_check import load_plan, plan_near
from ethosu_kit.errors import KitError

QEMU = "qemu-system-arm"
# machine -> CPU it must be given
QEMU_CPUS = {"mps3-an547": "cortex-m55"}
DEFAULT_TIMEOUT = 30.0


@dataclass(frozen=True)
class RunResult:
    exit_code: int | None  # None when it timed out
    output: str  # UART text
    seconds: float
    timed_out: bool
    command: tuple[str, ...]


def elf_info(elf: Path) -> dict[str, str]:
    """The key=value lines of the ELF's .kit.info section, or {} when it has none."""
    from elftools.common.exceptions import ELFError
    from elftools.elf.elffile import ELFFile

    try:
        with elf.open("rb") as f:
            section = ELFFile(f).get_section_by_name(".kit.info")
            if section is None:
                return {}
            text = section.data().split(b"\0", 1)[0].decode("utf-8", "replace")
    except (OSError, ELFError) as exc:
        raise KitError(f"{elf}: not a readable ELF file ({exc})") from exc
    info = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            info[key.strip()] = value.strip()
    return info


def _plan_near(elf: Path) -> dict[str, str]:
    plan = plan_near(elf)
    if plan is None:
        return {}
    return {"board": load_plan(plan).board.name}


def machine_for(elf: Path) -> str:
    """The QEMU machine for this ELF, or a KitError saying why there is none."""
    info = elf_info(elf) or _plan_near(elf)
    board = info.get("board", "")
    machine = info.get("qemu", "")
    if not machine:
        if board and board != "corstone-300":
            raise KitError(
                f"{elf}: built for {board}, and QEMU has no model of it "
                "(qemu-system-arm only has the Corstone-300 as mps3-an547)",
                hint="check it with `ethosu-kit check-elf`; run it on the board or its Arm FVP",
            )
        machine = "mps3-an547"
    if machine not in QEMU_CPUS:
        raise KitError(f"{elf}: QEMU machine {machine!r} is not one the kit can run")
    return machine


def qemu_command(elf: Path, machine: str) -> tuple[str, ...]:
    return (
        QEMU,
        "-M", machine,
        "-cpu", QEMU_CPUS[machine],
        "-nographic",
        "-monitor", "none",
        "-serial", "stdio",
        "-semihosting-config", "enable=on,target=native",
        "-kernel", str(elf),
    )  # fmt: skip


def run_elf(elf: Path, timeout: float = DEFAULT_TIMEOUT) -> RunResult:
    if not elf.is_file():
        raise KitError(f"{elf}: no such ELF file", hint="build it first: ethosu-kit build DIR")
    machine = machine_for(elf)
    if shutil.which(QEMU) is None:
        raise KitError(
            f"{QEMU} is not installed", hint="apt-get install qemu-system-arm (QEMU >= 7.2)"
        )
    cmd = qemu_command(elf, machine)
    start = time.perf_counter()
    proc = subprocess.Popen(
        cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    try:
        out, _ = proc.communicate(timeout=timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
        timed_out = True
    seconds = time.perf_counter() - start
    text = out.decode("utf-8", "replace").replace("\r\n", "\n")
    return RunResult(
        exit_code=None if timed_out else proc.returncode,
        output=text,
        seconds=seconds,
        timed_out=timed_out,
        command=cmd,
    )
