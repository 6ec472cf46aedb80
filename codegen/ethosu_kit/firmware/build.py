"""Configure and build a generated project with plain CMake presets.

`build_project()` runs exactly what a user can type in the project folder:
`cmake --preset <toolchain> -DETHOSU_KIT_APP=<app> -DETHOSU_KIT_NPU=<npu>` then
`cmake --build --preset <toolchain>`. Quiet on success; on failure the KitError
carries the gist of the CMake, compiler or linker output on one line.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from ethosu_kit.board.toolchain import TOOLCHAINS, Toolchain
from ethosu_kit.core.errors import KitError
from ethosu_kit.firmware.flash import manifest_path, write_flash_artefacts
from ethosu_kit.firmware.project import ProjectDir
from ethosu_kit.firmware.stages import keeps_virtual_workspace, needs_virtual_npu, regenerate
from ethosu_kit.plan.apps import App
from ethosu_kit.plan.types import NpuLibrary

GIST_LINES = 6
BUILD_JOBS = 2


_BUILD_ERROR = re.compile(
    r"error|multiple definition|undefined reference|overflowed|not found", re.IGNORECASE
)
_BUILD_NOISE = re.compile(r"^(collect2: error: ld returned|ninja: build stopped|FAILED: )")


def gist(output: str, lines: int = GIST_LINES) -> str:
    """What a failed CMake configure or build says, on one line (the error line must stay
    one line: a newline would print as an escape). CMake's own `CMake Error` messages
    (wrapped over lines: joined) up to their call stack; else the compiler's and linker's
    error lines; else the last lines. Parts are joined with ' | '."""
    text = output.rstrip().splitlines()
    messages: list[str] = []
    current: list[str] | None = None
    for line in text:
        if line.startswith("CMake Error"):
            current = [line.strip()]
            messages.append("")
        elif current is not None:
            if line.startswith("Call Stack") or line.startswith("-- "):
                current = None
                continue
            current.append(line.strip())
        if current is not None:
            messages[-1] = " ".join(" ".join(current).split())
    parts = messages or [
        " ".join(line.split())
        for line in text
        if _BUILD_ERROR.search(line) and not _BUILD_NOISE.match(line)
    ]
    parts = parts or [" ".join(line.split()) for line in text[-lines:]]
    return " | ".join(parts[:lines])


def _run(cmd: list[str], cwd: Path, what: str) -> None:
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        output = gist(proc.stdout + proc.stderr)
        raise KitError(
            f"{cwd}: {what} failed (exit {proc.returncode}): {' '.join(cmd)}: {output}",
            hint=f"rerun by hand in {cwd} to see everything: {' '.join(cmd)}",
        )


def elf_path(project: Path, toolchain: str, app: str) -> Path:
    return ProjectDir(project).elf(toolchain, app)


def _require_npu_facts(project: Path) -> None:
    """The Ethos-U driver at an address or IRQ the board file leaves TODO would fault or
    wait forever: refuse before CMake, naming the keys (the plan holds the board)."""
    plan = ProjectDir(project).plan_if_any()
    if plan is None:
        return  # configure will say what is wrong with the project
    board = plan.board
    todo = [k for k in board.todo if k.startswith("npu.")]
    if todo:
        raise KitError(
            f"{board.source}: {', '.join(todo)} still TODO, and --npu driver needs them "
            "(the Ethos-U driver would fault or wait for an IRQ that never comes)",
            hint="write them in the board file and run gen again; until then build with "
            "--npu virtual or --app bringup",
        )


def project_npu(project: Path) -> str:
    """The NPU library `project` links by default: what gen's `--npu` chose (its
    memory_plan.json, which the generated CMakeLists.txt's ETHOSU_KIT_NPU was rendered
    from), "none" for a program with no Ethos-U delegate (as that CMakeLists.txt says).

    `cmake --preset` alone would take the cache's value, which an earlier build's `-D`
    may have changed; so `build` always passes this one. Not a generated project (no
    plan): "driver", and configure says what is wrong."""
    plan = ProjectDir(project).plan_if_any()
    if plan is None:
        return NpuLibrary.DRIVER
    return NpuLibrary.NONE if plan.accelerator is None else plan.options.npu


def build_project(
    project: Path,
    app: str = App.BRINGUP,
    toolchain: str = Toolchain.GCC,
    npu: str | None = None,
    force: bool = False,
) -> Path:
    """Configure + build; return the ELF path. `npu` None: the project's own (project_npu)."""
    if npu is None:
        npu = project_npu(project)
    if toolchain not in TOOLCHAINS:
        raise KitError(f"unknown toolchain {toolchain!r}", hint=f"one of {', '.join(TOOLCHAINS)}")
    presets = project / "CMakePresets.json"
    if not presets.is_file():
        raise KitError(
            f"{project}: no CMakePresets.json, so not a generated project",
            hint="generate one first: gen-firmware --pte model.pte -o DIR",
        )
    if npu == NpuLibrary.DRIVER and app != App.BRINGUP:  # bring-up never touches the NPU
        _require_npu_facts(project)
    if shutil.which("cmake") is None:
        raise KitError("cmake is not installed", hint="apt-get install cmake ninja-build")
    compiler = Toolchain(toolchain).compiler
    if shutil.which(compiler) is None and not (
        toolchain == Toolchain.CLANG and shutil.which("clang")
    ):
        raise KitError(
            f"{compiler} is not installed, so the {toolchain} preset cannot build",
            hint="apt-get install gcc-arm-none-eabi libnewlib-arm-none-eabi (gcc), "
            "clang-19 lld-19 (clang); Arm Compiler 6 comes from Arm (armclang)",
        )
    if npu == NpuLibrary.VIRTUAL and needs_virtual_npu(project):
        # a project generated for the Ethos-U driver has no buffer for the virtual NPU's
        # working memory: plan it (fit-checked like every other buffer) before CMake
        regenerate(project, npu=NpuLibrary.VIRTUAL, force=force)
    elif npu == NpuLibrary.DRIVER and keeps_virtual_workspace(project):
        # a project last planned for the virtual NPU: its working memory (tens of KiB)
        # would be linked into the image for the real NPU, which never touches it
        regenerate(project, npu=NpuLibrary.DRIVER, force=force)
    _run(
        ["cmake", "--preset", toolchain, f"-DETHOSU_KIT_APP={app}", f"-DETHOSU_KIT_NPU={npu}"],
        project,
        "configure",
    )
    _run(
        ["cmake", "--build", "--preset", toolchain, "--parallel", str(BUILD_JOBS)],
        project,
        "build",
    )
    elf = elf_path(project, toolchain, Path(app).name)
    if not elf.is_file():
        found = sorted(
            ProjectDir(project).build_dir(toolchain).glob("*.elf"), key=lambda p: p.stat().st_mtime
        )
        if not found:
            raise KitError(f"{project}: the build succeeded but left no .elf in build/{toolchain}")
        elf = found[-1]
    plan = ProjectDir(project).plan_if_any()
    if plan is not None and plan.board.cold_boot:
        write_flash_artefacts(elf, plan.board)  # what a flasher writes (firmware.flash)
    else:
        manifest_path(elf).unlink(missing_ok=True)  # a board that boots loaded: none
    return elf
