"""The executor_runner sources compile for Cortex-M55 against the executorch wheel's headers.

No ExecuTorch checkout is needed: the executorch 1.5.1 wheel ships the runtime headers
under `include/`. Each source is compiled (not linked) with the real cross compiler,
warnings as errors, against a project the real generator made from a real .pte.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
from pathlib import Path

import pytest

from projects import make_project

REPO = Path(__file__).resolve().parents[1]
SOURCES = (
    REPO / "apps/executor_runner/executor_runner.cpp",
    REPO / "apps/executor_runner/kit_pools.cpp",
    REPO / "sdk/executorch_pal/executorch_pal.cpp",
)
CXX = "arm-none-eabi-g++"
FLAGS = (
    "-mcpu=cortex-m55",
    "-mthumb",
    "-mfloat-abi=hard",
    "-std=c++17",
    "-DC10_USING_CUSTOM_GENERATED_MACROS",
    "-Wall",
    "-Wextra",
    "-Werror",
    "-fno-exceptions",
    "-fno-rtti",
    "-Os",
)


def wheel_include() -> Path:
    spec = importlib.util.find_spec("executorch")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("executorch is not installed: its wheel carries the runtime headers")
    include = Path(next(iter(spec.submodule_search_locations))) / "include"
    if not (include / "executorch/runtime/executor/program.h").is_file():
        pytest.skip(f"this executorch wheel has no runtime headers under {include}")
    return include


def compile_runner(generated: Path, tmp: Path, *extra: str) -> None:
    if shutil.which(CXX) is None:
        pytest.skip(f"{CXX} is not installed (apt install g++-arm-none-eabi)")
    include = wheel_include()
    for src in SOURCES:
        cmd = [
            CXX,
            *FLAGS,
            *extra,
            f"-I{include}",
            f"-I{include}/executorch/runtime/core/portable_type/c10",
            f"-I{REPO / 'sdk/include'}",
            f"-I{REPO / 'apps/executor_runner'}",
            f"-I{generated}",
            "-c",
            str(src),
            "-o",
            str(tmp / (src.stem + ".o")),
        ]
        result = subprocess.run(cmd, capture_output=True, text=True, check=False)
        assert result.returncode == 0, f"{src.name}:\n{result.stderr}"
        assert result.stderr == "", result.stderr
        assert (tmp / (src.stem + ".o")).stat().st_size > 0


@pytest.mark.parametrize("fixture", ["pte_cpu_op", "pte_cpu_only", "pte_u55_shared"])
def test_runner_compiles_for_generated_project(
    fixture: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    pte: Path = request.getfixturevalue(fixture)
    cpu_only = fixture == "pte_cpu_only"
    generated = make_project(pte, tmp_path / "fw", allow_cpu_only=cpu_only).generated
    compile_runner(generated, tmp_path)


def test_runner_compiles_with_generated_input_data(pte_cpu_only: Path, tmp_path: Path) -> None:
    """The optional kit_input_data.h branch (X(index, symbol, nbytes))."""
    generated = make_project(pte_cpu_only, tmp_path / "fw", allow_cpu_only=True).generated
    (generated / "kit_input_data.h").write_text(
        "#include <stdint.h>\n"
        "static const uint8_t kit_input_data_0[64] = {0};\n"
        "#define KIT_INPUT_DATA(X) X(0, kit_input_data_0, sizeof kit_input_data_0)\n"
    )
    compile_runner(generated, tmp_path, "-DKIT_RUNNER_PRINT_VALUES=4")


def test_runner_compile_catches_a_broken_plan_header(pte_cpu_only: Path, tmp_path: Path) -> None:
    """A generated header without the X-macro the runner reads must fail the build."""
    generated = make_project(pte_cpu_only, tmp_path / "fw", allow_cpu_only=True).generated
    config = generated / "kit_memory_config.h"
    text = config.read_text()
    assert "KIT_PLANNED_BUFFERS(X)" in text
    config.write_text(text.replace("KIT_PLANNED_BUFFERS(X)", "KIT_PLANNED_BUFFERZ(X)"))
    with pytest.raises(AssertionError, match=r"kit_pools\.cpp"):
        compile_runner(generated, tmp_path)


def test_a_pool_the_plan_lacks_fails_the_link(pte_cpu_only: Path, tmp_path: Path) -> None:
    """The runner takes its pools by symbol (generated X-macros), not by name at run time:
    firmware whose kit_buffers.c lacks a pool the runner uses does not link, naming it
    (it used to link and exit 7 at run time)."""
    generated = make_project(pte_cpu_only, tmp_path / "fw", allow_cpu_only=True).generated
    compile_runner(generated, tmp_path)
    buffers = generated / "kit_buffers.c"
    text = buffers.read_text()
    assert "uint8_t kit_method_pool[" in text
    buffers.write_text(text.replace("uint8_t kit_method_pool[", "uint8_t kit_method_poox["))
    gcc = [CXX.replace("g++", "gcc"), *FLAGS[:3], "-Wall", "-Werror"]
    subprocess.run(
        [*gcc, f"-I{generated}", "-c", str(buffers), "-o", str(tmp_path / "b.o")], check=True
    )
    link = subprocess.run(
        [CXX, *FLAGS[:3], "-nostdlib", "-Wl,-e,0", str(tmp_path / "kit_pools.o"),
         str(tmp_path / "b.o"), "-o", str(tmp_path / "fw.elf")],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert link.returncode != 0
    assert "undefined reference to `kit_method_pool'" in link.stderr, link.stderr
