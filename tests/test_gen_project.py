"""Generated projects from real lowered models: every placement in the linker script and
scatter file, headers that compile warning-free, and byte-identical regeneration."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from elftools.elf.elffile import ELFFile

from ethosu_kit.board.loader import load_board
from ethosu_kit.core import paths
from ethosu_kit.core.writer import write_project
from ethosu_kit.plan.planner import plan_memory
from ethosu_kit.plan.types import Buffer, MemoryPlan, Role
from ethosu_kit.pte import read_pte
from ethosu_kit.pte.model import ModelInfo
from ethosu_kit.render.context import HEADER_MARKER
from ethosu_kit.render.project import LINKER_TEMPLATES, render_project

# fixture -> board
CASES = {
    "data_pte_u55_shared": "corstone-300",
    "data_pte_u55_sram_only": "corstone-300",
    "data_pte_u65_dedicated": "corstone-300",
    "data_pte_u85_dedicated": "corstone-320",
    "data_pte_u85_shared": "corstone-320",
    "data_pte_cpu_op": "corstone-300",
}
BINARY_OR_DATA = ("generated/model.pte", ".json")


@dataclass
class Project:
    case: str
    pte: Path
    model: ModelInfo
    plan: MemoryPlan
    files: dict[str, bytes]

    def text(self, rel: str) -> str:
        return self.files[rel].decode()

    def placed(self) -> list[Buffer]:
        """Buffers the linker places by section (CODE/DATA are the linker's own)."""
        return [b for b in self.plan.buffers if b.role not in (Role.CODE, Role.DATA)]


@pytest.fixture(scope="module", params=sorted(CASES))
def project(request: pytest.FixtureRequest) -> Project:
    pte: Path = request.getfixturevalue(request.param)
    model = read_pte(pte)
    plan = plan_memory(model, load_board(CASES[request.param]), None)
    return Project(
        request.param,
        pte,
        model,
        plan,
        render_project(model, plan, pte.read_bytes(), kit_dir=paths.kit_root().resolve()),
    )


def test_project_has_every_file_of_the_layout(project: Project) -> None:
    expected = {
        "CMakeLists.txt",
        "CMakePresets.json",
        "memory_plan.json",
        "memory_report.txt",
        "memory_report.json",
        "model_info.json",
        "generated/model.pte",
        "generated/kit_network.S",
        "generated/kit_model.h",
        "generated/kit_memory_config.h",
        "generated/kit_board_config.h",
        "generated/kit_buffers.c",
        "generated/kit_board.cmake",
        "generated/kit_operators.txt",
    }
    expected.update(LINKER_TEMPLATES)
    assert expected <= set(project.files)


def test_every_text_file_starts_with_the_generated_header(project: Project) -> None:
    sha = project.plan.model_sha256
    for rel, data in project.files.items():
        if rel.endswith(BINARY_OR_DATA):
            continue
        head = "\n".join(data.decode().splitlines()[:8])
        assert HEADER_MARKER in head, rel
        assert sha in head and project.plan.mode.value in head, rel
    vendor = json.loads(project.files["CMakePresets.json"])["vendor"]["ethosu-kit"]
    assert HEADER_MARKER in vendor["generated"]


def test_data_files_are_what_the_stages_produce(project: Project) -> None:
    assert project.files["memory_plan.json"] == project.plan.to_json().encode()
    assert project.files["generated/model.pte"] == project.pte.read_bytes()
    assert json.loads(project.files["model_info.json"]) == json.loads(
        json.dumps(project.model.to_dict())
    )
    assert json.loads(project.files["memory_report.json"])


def _ld_output_region(script: str, section: str) -> str:
    """The region of the output section that takes input section `section`."""
    m = re.search(r"\*\(\s*" + re.escape(section) + r"\s*\)", script)
    assert m, f"{section} is not placed by the linker script"
    rest = script[m.end() :]
    placed = re.search(r"}\s*>\s*(\w+)", rest)
    assert placed, f"no region after {section}"
    return placed.group(1)


def test_linker_script_places_every_buffer_in_its_region(project: Project) -> None:
    script = project.text("generated/linker.ld")
    for b in project.placed():
        assert _ld_output_region(script, b.section) == b.region, b.name
    for r in project.plan.board.regions:
        assert re.search(rf"\b{r.name}\b.*ORIGIN\s*=\s*0x0*{r.base:X}\b", script), r.name


def _scatter_bases(scatter: str) -> list[tuple[int, str, int]]:
    """(offset, name, base address) of each load/execution region header, in order.

    A base is a literal address, or `ImageLimit(<region>)` (maybe inside AlignExpr),
    which lies in the same memory as that region's own base.
    """
    out: list[tuple[int, str, int]] = []
    bases: dict[str, int] = {}
    for h in re.finditer(r"^[ \t]*(\w+)[ \t]+([^\n;{]*?)[ \t]*\n\s*\{", scatter, re.M):
        name, expr = h.group(1), h.group(2)
        literal = re.match(r"0x[0-9A-Fa-f]+", expr)
        after = re.search(r"ImageLimit\((\w+)\)", expr)
        if literal:
            bases[name] = int(literal.group(0), 16)
        elif after:
            bases[name] = bases[after.group(1)]
        else:
            raise AssertionError(f"cannot read the base of {name}: {expr!r}")
        out.append((h.start(), name, bases[name]))
    return out


def test_scatter_file_places_every_buffer_in_its_region(project: Project) -> None:
    scatter = project.text("generated/scatter.sct")
    headers = _scatter_bases(scatter)
    for b in project.placed():
        m = re.search(r"\*\s*\(\s*" + re.escape(b.section) + r"\s*[,)]", scatter)
        assert m, f"{b.section} is not in the scatter file"
        enclosing = [h for h in headers if h[0] < m.start()][-1]
        region = project.plan.board.region_at(enclosing[2])
        assert region is not None and region.name == b.region, (b.name, enclosing, b.region)


def test_headers_match_the_plan(project: Project) -> None:
    config = project.text("generated/kit_memory_config.h")
    sizes = {m[1]: int(m[2]) for m in re.finditer(r"#define (KIT_\w+_SIZE) (\d+)u", config)}
    for b in project.placed():
        assert sizes[f"KIT_{b.name.upper()}_SIZE"] == b.size, b.name
        assert (
            f'X({b.name}, {b.symbol}, KIT_{b.name.upper()}_SIZE, "{b.region}", {int(b.npu)})'
            in config
        )
    board = project.text("generated/kit_board_config.h")
    assert project.plan.accelerator is not None
    kind = project.plan.accelerator.kind
    regs = project.plan.board.npu.registers[(kind, project.plan.mode.value)]
    assert f"#define KIT_NPU_QCONFIG {regs.qconfig}\n" in board
    for i, value in enumerate(regs.regioncfg):
        assert f"#define KIT_NPU_REGIONCFG_{i} {value}\n" in board
    assert f"#define KIT_NPU_BASE 0x{project.plan.board.npu.base:08X}u" in board
    ops = [
        line
        for line in project.text("generated/kit_operators.txt").splitlines()
        if line and not line.startswith("#")
    ]
    assert ops == list(project.model.cpu_operators)
    if project.case == "data_pte_cpu_op":
        assert any("argmax" in op for op in ops)


def test_cmake_presets_name_the_kits_toolchain_files(project: Project) -> None:
    presets = json.loads(project.files["CMakePresets.json"])
    names = [p["name"] for p in presets["configurePresets"]]
    assert names == ["gcc", "clang", "armclang"]
    assert [p["name"] for p in presets["buildPresets"]] == names
    files = {
        "gcc": "arm-none-eabi-gcc.cmake",
        "clang": "clang.cmake",
        "armclang": "armclang.cmake",
    }
    for p in presets["configurePresets"]:
        toolchain = Path(p["toolchainFile"])
        assert toolchain == paths.cmake_dir().resolve() / "toolchain" / files[p["name"]]
        assert toolchain.is_file(), f"{toolchain} missing from the kit"
    cmake = project.text("CMakeLists.txt")
    assert "ethosu_add_firmware(" in cmake and "GENERATED_DIR ${CMAKE_CURRENT_SOURCE_DIR}" in cmake


def test_generation_is_deterministic(project: Project) -> None:
    again = render_project(
        project.model, project.plan, project.pte.read_bytes(), kit_dir=paths.kit_root().resolve()
    )
    assert again == project.files
    # and from scratch: read, plan and render anew
    model = read_pte(project.pte)
    plan = plan_memory(model, load_board(CASES[project.case]), None)
    assert (
        render_project(model, plan, project.pte.read_bytes(), kit_dir=paths.kit_root().resolve())
        == project.files
    )


# -- the generated C compiles -------------------------------------------------------------

USE_C = r"""
#include "kit_model.h"
#include "kit_memory_config.h"
#include "kit_board_config.h"

struct kit_buf {
    const char *name; const void *addr; unsigned long size; const char *region; int npu;
};
#define KIT_ROW(n, s, sz, r, npu) { #n, s, sz, r, npu },
static const struct kit_buf ram[] = { KIT_RAM_BUFFERS(KIT_ROW) };
static const unsigned long regs[] = {
    KIT_NPU_QCONFIG, KIT_NPU_REGIONCFG_0, KIT_NPU_REGIONCFG_1, KIT_NPU_REGIONCFG_2,
    KIT_NPU_REGIONCFG_3, KIT_NPU_REGIONCFG_4, KIT_NPU_REGIONCFG_5, KIT_NPU_REGIONCFG_6,
    KIT_NPU_REGIONCFG_7, KIT_NPU_BASE, KIT_NPU_IRQ, KIT_CONSOLE_BASE, KIT_CPU_CLOCK_HZ,
    KIT_FAST_SCRATCH_SIZE, KIT_NETWORK_SIZE, KIT_NETWORK_BYTES,
};
#define KIT_NAME(n, s, sz, r, npu) #n,
static const char *const all[] = { KIT_BUFFERS(KIT_NAME) };

int kit_use(void);
int kit_use(void)
{
    return (int)(ram[0].size + regs[0] + (unsigned long)all[0][0] + kit_network_size
                 + kit_network[0] + KIT_NUM_INPUTS + KIT_NUM_OUTPUTS + KIT_NUM_CPU_OPERATORS);
}
"""
WARN = ["-Wall", "-Wextra", "-Werror"]


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"{name} is not installed (scripts/install.sh installs it)")
    return path


def _compile(argv: list[str], cwd: Path) -> None:
    proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False, timeout=120)
    assert proc.returncode == 0, f"{' '.join(argv)}\n{proc.stderr}"


def _symbols(obj: Path) -> dict[str, tuple[int, str]]:
    """symbol -> (size, section name)"""
    with obj.open("rb") as f:
        elf = ELFFile(f)
        table = elf.get_section_by_name(".symtab")
        out = {}
        for sym in table.iter_symbols():
            shndx = sym["st_shndx"]
            if isinstance(shndx, int) and sym.name:
                out[sym.name] = (sym["st_size"], elf.get_section(shndx).name)
        return out


@pytest.mark.firmware
def test_generated_c_compiles_with_warnings_as_errors(project: Project, tmp_path: Path) -> None:
    write_project(project.files, tmp_path / "fw")
    gen = tmp_path / "fw" / "generated"
    (gen / "use.c").write_text(USE_C)
    cpu = project.plan.board.cpu.flags
    gcc = [_tool("arm-none-eabi-gcc"), *cpu["gcc"]]
    gxx = [_tool("arm-none-eabi-g++"), *cpu["gcc"]]
    clang = [_tool("clang-19"), *cpu["clang"]]
    _compile([*gcc, "-std=c11", *WARN, "-c", "use.c", "-o", "use_c.o"], gen)
    _compile([*gxx, "-std=c++17", *WARN, "-x", "c++", "-c", "use.c", "-o", "use_cc.o"], gen)
    _compile([*clang, "-std=c11", *WARN, "-c", "use.c", "-o", "use_clang.o"], gen)
    for name, cc in (("gcc", gcc), ("clang", clang)):
        _compile([*cc, "-std=c11", *WARN, "-c", "kit_buffers.c", "-o", f"b_{name}.o"], gen)
        _compile([*cc, "-I.", "-c", "kit_network.S", "-o", f"n_{name}.o"], gen)
        syms = {**_symbols(gen / f"b_{name}.o"), **_symbols(gen / f"n_{name}.o")}
        for b in project.placed():
            size, section = syms[b.symbol]
            if b.role == Role.NETWORK:
                assert size == len(project.files["generated/model.pte"])
            else:
                assert size == max(b.size, 1), (name, b.name)
            assert section == b.section, (name, b.name)
        assert syms["kit_network_size"][0] == 4
