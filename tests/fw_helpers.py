"""Shared by the firmware tests (test_fw_*, test_elf_*, bench_fw): generate a project
from a real .pte with the real generator, build it with the real cross compiler, and
cache the result per session so each configuration is built once."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from ethosu_kit.firmware.build import build_project
from projects import make_project

REPO = Path(__file__).resolve().parents[1]
_built: dict[tuple[str, str, str, str, str, str], Built] = {}


@dataclass(frozen=True)
class Built:
    project: Path
    elf: Path
    plan: Path


def need_cross_gcc() -> None:
    if shutil.which("arm-none-eabi-gcc") is None:
        pytest.skip("arm-none-eabi-gcc is not installed (apt-get install gcc-arm-none-eabi)")
    if shutil.which("cmake") is None or shutil.which("ninja") is None:
        pytest.skip("cmake and ninja are needed to build firmware")


def host_cc() -> str:
    """The host's C compiler (gcc, else cc); the test is skipped without one."""
    cc = shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        pytest.skip("no host C compiler")
    return cc


def need_qemu() -> None:
    if shutil.which("qemu-system-arm") is None:
        pytest.skip("qemu-system-arm is not installed (apt-get install qemu-system-arm)")


def built(
    pte: Path, board: str, mode: str, root: Path, *, toolchain: str = "gcc", app: str = "bringup"
) -> Built:
    """Generate + build once per session for (pte, board, mode, toolchain, app, root): every
    argument that changes the ELF or where it is is in the key, so a caller asking for
    another app or folder never gets an earlier caller's ELF."""
    key = (str(pte), board, mode, toolchain, app, str(root))
    if key not in _built:
        need_cross_gcc()
        project = root / f"{pte.stem}-{board}-{mode}-{toolchain}-{app}"
        if not (project / "CMakePresets.json").is_file():
            make_project(pte, project, board=board, mode=mode, app=app)
        elf = build_project(project, app=app, toolchain=toolchain)
        _built[key] = Built(project, elf, project / "memory_plan.json")
    return _built[key]


def link_command(b: Built) -> str:
    """The exact link command ninja used for this ELF (to relink with another script)."""
    build_dir = b.elf.parent
    out = subprocess.run(
        ["ninja", "-t", "commands", b.elf.name],
        cwd=build_dir, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return out.stdout.strip().splitlines()[-1]


@dataclass(frozen=True)
class QemuRun:
    exit_code: int | None  # None: timed out
    output: str


def qemu_run(elf: Path, timeout: float = 30.0) -> QemuRun:
    """Run an ELF as `ethosu-kit run` does: on the QEMU machine and CPU of its board's data."""
    from ethosu_kit.firmware.qemu import run_elf

    need_qemu()
    result = run_elf(elf, timeout=timeout)
    return QemuRun(result.exit_code, result.output)


def qemu_direct(elf: Path, machine: str, cpu: str, timeout: float = 30.0) -> QemuRun:
    """qemu-system-arm with `run`'s flags, for an image `run` cannot identify on its own
    (a team's tree keeps no memory_plan.json beside the ELF)."""
    need_qemu()
    cmd = [
        "qemu-system-arm", "-M", machine, "-cpu", cpu, "-nographic", "-monitor", "none",
        "-serial", "stdio", "-semihosting-config", "enable=on,target=native",
        "-kernel", str(elf),
    ]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, timeout=timeout, check=False)
    text = (proc.stdout + proc.stderr).decode("utf-8", "replace").replace("\r\n", "\n")
    return QemuRun(proc.returncode, text)


def elf_symbols(elf: Path) -> set[str]:
    """Names of the ELF's symbols (to tell which implementation of a hook was linked)."""
    from elftools.elf.elffile import ELFFile
    from elftools.elf.sections import SymbolTableSection

    with elf.open("rb") as f:
        symtab = ELFFile(f).get_section_by_name(".symtab")
        assert isinstance(symtab, SymbolTableSection)
        return {s.name for s in symtab.iter_symbols() if s.name}


def without_app_line(b: Built) -> Built:
    """A copy of `b`'s image, beside it (the same plan is its own), whose .kit.info has no
    `app` line: how `run` sees an image of a user's app folder, or one from before the
    line, so the host-side IO checks are reached (`run` refuses the kit's own bring-up
    and self-test by name before those)."""
    import dataclasses

    elf = b.elf.with_name("no_app.elf")
    info = b.elf.with_name("no_app.kit.info")
    objcopy = shutil.which("arm-none-eabi-objcopy") or "arm-none-eabi-objcopy"
    subprocess.run([objcopy, f"--dump-section=.kit.info={info}", str(b.elf), str(elf)],
                   check=True)  # fmt: skip
    lines = info.read_bytes().split(b"\0", 1)[0].decode().splitlines()
    info.write_bytes("".join(f"{x}\n" for x in lines if not x.startswith("app=")).encode() + b"\0")
    subprocess.run([objcopy, f"--update-section=.kit.info={info}", str(b.elf), str(elf)],
                   check=True)  # fmt: skip
    return dataclasses.replace(b, elf=elf)
