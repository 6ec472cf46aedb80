"""The link layout owns every linker fact; ld script, scatter file and fragments only print it.

- every generated ld script and scatter file, on every built-in board and every mode a
  test model is lowered for, carries exactly the layout's sections, regions, MEMORY
  attributes and placement assertions, the scatter file the same assertions as the ld
  script;
- a built image: arm-none-eabi-size reports the real .bss (the free space is symbols,
  not allocated sections) while check-elf still reports each region's free bytes;
- --orphan-handling=error: an input section no rule places fails the link naming it;
- memory_plan.json round-trips to the typed MemoryPlan, and a wrong shape is one
  `error:` line naming the file and the key (issue 10, "plan files read back").
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from ethosu_kit.board.loader import builtin_boards
from ethosu_kit.cli.app import main as kit_main
from ethosu_kit.core import paths
from ethosu_kit.core.errors import PlanError
from ethosu_kit.layout.link_layout import link_layout, memory_attributes
from ethosu_kit.plan.planner import plan_memory
from ethosu_kit.plan.types import MemoryPlan
from ethosu_kit.pte import read_pte
from ethosu_kit.render.project import render_project
from fw_helpers import Built, built, link_command, need_cross_gcc

MODELS = ("data_pte_u55_shared", "data_pte_u55_sram_only", "data_pte_u65_dedicated",
          "data_pte_u85_dedicated", "data_pte_u85_shared")  # fmt: skip


def _ld_asserts(text: str) -> list[str]:
    return re.findall(r'ASSERT\(.*?,\s*"(kit: [^"]*)"\)', text, flags=re.S)


def _sct_asserts(text: str) -> list[str]:
    return re.findall(r"^; (kit: .*)\nScatterAssert\(", text, flags=re.M)


CPU_ONLY_MODES = ("cpu_only:Sram_Only", "cpu_only:Shared_Sram", "cpu_only:Dedicated_Sram")


@pytest.mark.parametrize("fixture", MODELS + CPU_ONLY_MODES)
def test_every_board_and_mode_renders_from_the_layout(
    request: pytest.FixtureRequest, fixture: str
) -> None:
    """Delegated models in their own mode, and a CPU-only program in each of the three."""
    from ethosu_kit.npu.facts import MemoryMode
    from ethosu_kit.plan.types import PlanOptions

    name, _, mode_name = fixture.partition(":")
    pte: Path = request.getfixturevalue(name if not mode_name else f"data_pte_{name}")
    model = read_pte(pte)
    mode = MemoryMode(mode_name) if mode_name else None
    rendered = 0
    for board in builtin_boards():
        try:
            plan = plan_memory(model, board, mode, PlanOptions(allow_cpu_only=bool(mode)))
        except PlanError:
            continue  # this board's NPU cannot run the model: the planner says so elsewhere
        layout = link_layout(plan)
        files = render_project(model, plan, pte.read_bytes(), kit_dir=paths.kit_root().resolve())
        ld = files["generated/linker.ld"].decode()
        sct = files["generated/scatter.sct"].decode()
        fragment = files["generated/kit_sections.ld"].decode()
        rendered += 1

        # one output section per buffer, in the layout's region and order
        names = re.findall(r"^  (\.kit\.\w+)(?: \(NOLOAD\))? : ALIGN", fragment, flags=re.M)
        assert names == [s.name for s in layout.sections]
        assert len(set(names)) == len(names), "two buffers share a section"
        for s in layout.sections:
            placed = re.search(
                re.escape(f"KEEP(*({s.name}))") + r"\s*}\s*>\s*(\w+)(?:\s+AT>\s*(\w+))?", ld
            )
            assert placed and placed.group(1) == s.region, s.name
            assert (placed.group(2) or None) == s.load_region, s.name
            assert re.search(rf"\* \({re.escape(s.name)}\)", sct), f"{s.name} not in the scatter"
        # the fragment is the whole script's kit part, verbatim
        assert fragment.split("*/\n", 1)[1].strip() in ld
        # MEMORY attributes from the region flags (a DTCM is not executable)
        for r in board.regions:
            attrs = re.search(rf"^\s*{r.name}\s+\(([^)]*)\)", ld, flags=re.M)
            assert attrs and attrs.group(1) == memory_attributes(r), r.name
            assert ("!" in attrs.group(1) and "x" in attrs.group(1).split("!")[1]) == (
                not r.executable
            )
        # the same placement assertions in both linkers, one per (buffer, fact)
        # (the whole image's own .data/.bss word check is for the kit's reset code only)
        ld_msgs = [m for m in _ld_asserts(ld) if not m.startswith("kit: .data/.bss")]
        sct_msgs = _sct_asserts(sct)
        want = [a.message for a in (layout.vectors_check, *layout.assertions)]
        assert sorted(ld_msgs) == sorted(want)
        assert sct_msgs == want
        assert len(want) == 1 + 3 * len(layout.sections)
        # no allocated unused-space section: free space is symbols
        assert "unused_space" not in ld
        for r in board.regions:
            assert f"__kit_unused_{r.name}_start = " in ld
    assert rendered, "no built-in board can run this model"


def test_plan_json_round_trips_to_the_typed_plan(data_pte_u65_dedicated: Path) -> None:
    model = read_pte(data_pte_u65_dedicated)
    board = next(b for b in builtin_boards() if b.name == "corstone-300")
    plan = plan_memory(model, board, None)
    again = MemoryPlan.from_json_dict(json.loads(plan.to_json()))
    assert again == plan
    assert again.to_json() == plan.to_json()


def _broken(plan: dict[str, object], case: str) -> dict[str, object]:
    data = json.loads(json.dumps(plan))
    if case == "number for a list":
        data["buffers"] = 5
    elif case == "missing key":
        del data["buffers"][0]["size"]
    elif case == "string for a number":
        data["board_data"]["regions"][1]["base"] = "0x10"
    elif case == "unknown role":
        data["buffers"][2]["role"] = "scratchpad"
    elif case == "no board":
        del data["board_data"]
    return data


BROKEN = {
    "number for a list": "buffers",
    "missing key": "buffers[0].size",
    "string for a number": "board_data.regions[1].base",
    "unknown role": "buffers[2].role",
    "no board": "board_data",
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_broken_plan_file_is_one_error_line_naming_file_and_key(
    data_pte_u55_shared: Path,
    tmp_path: Path,
    case: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """check-elf --plan and run read the plan typed: one error line, the file, the key."""
    model = read_pte(data_pte_u55_shared)
    board = next(b for b in builtin_boards() if b.name == "corstone-300")
    plan = json.loads(plan_memory(model, board, None).to_json())
    path = tmp_path / "memory_plan.json"
    path.write_text(json.dumps(_broken(plan, case)))
    elf = tmp_path / "fw.elf"
    elf.write_bytes(b"\x7fELF")
    code = kit_main(["check-elf", str(elf), "--plan", str(path)])
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert code != 0
    assert len(errors) == 1, err
    assert str(path) in errors[0] and f"'{BROKEN[case]}'" in errors[0], errors[0]
    assert "Traceback" not in err


@pytest.mark.firmware
def test_size_tool_counts_no_free_space_and_check_elf_still_does(
    data_pte_u55_shared: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """issue 9 §4: arm-none-eabi-size showed ~280 MB of .bss (the unused-space sections)."""
    good = built(data_pte_u55_shared, "cs300", "Shared_Sram", tmp_path_factory.mktemp("size"))
    out = subprocess.run(
        ["arm-none-eabi-size", str(good.elf)], capture_output=True, text=True, check=True
    ).stdout
    text, data, bss = (int(v) for v in out.splitlines()[1].split()[:3])
    plan = MemoryPlan.from_json(good.plan)
    planned_ram = sum(b.size for b in plan.buffers if not b.initialized)
    print(f"arm-none-eabi-size: text {text} data {data} bss {bss} (planned RAM {planned_ram})")
    assert bss < planned_ram + 64 * 1024, f"bss {bss}: free space counted as allocated"
    from ethosu_kit.firmware.elf_check import check_elf

    result = check_elf(good.elf, good.plan)
    assert result.ok
    rows = {row.region.name: row for row in result.rows}
    assert rows["DDR"].free == rows["DDR"].region.size  # nothing placed there
    assert 0 < rows["DTCM"].free < rows["DTCM"].region.size
    assert rows["DTCM"].used + rows["DTCM"].free <= rows["DTCM"].region.size


@pytest.mark.firmware
def test_orphan_section_fails_the_link_naming_it(
    data_pte_u55_shared: Path, tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    need_cross_gcc()
    good: Built = built(
        data_pte_u55_shared, "cs300", "Shared_Sram", tmp_path_factory.mktemp("orph")
    )
    stray = tmp_path / "stray.c"
    stray.write_text('__attribute__((used, section(".team.stray"))) const int team_stray = 1;\n')
    obj = tmp_path / "stray.o"
    cpu = ["-mcpu=cortex-m55", "-mfloat-abi=hard", "-mthumb"]  # as the board's objects
    subprocess.run(["arm-none-eabi-gcc", *cpu, "-c", str(stray), "-o", str(obj)], check=True)
    cmd = link_command(good)
    # -u keeps it through --gc-sections, as a reference from the team's code would
    cmd = re.sub(r"-o \S+\.elf", f"-o {tmp_path / 'bad.elf'} {obj} -Wl,-u,team_stray", cmd)
    cmd = re.sub(r"-Map=\S+", f"-Map={tmp_path / 'bad.map'}", cmd)
    proc = subprocess.run(
        cmd, shell=True, cwd=good.elf.parent, capture_output=True, text=True, check=False
    )
    assert proc.returncode != 0
    assert "orphan section `.team.stray'" in proc.stderr, proc.stderr


@pytest.mark.firmware
def test_run_with_a_broken_plan_beside_the_image_is_one_error_line(
    data_pte_u55_shared: Path, tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    """`run` reads the plan beside the image typed too: the file and the key, one line."""
    good = built(data_pte_u55_shared, "cs300", "Shared_Sram", tmp_path_factory.mktemp("runplan"))
    elf = tmp_path / "build" / "gcc" / "fw.elf"
    elf.parent.mkdir(parents=True)
    elf.write_bytes(good.elf.read_bytes())
    plan = json.loads(good.plan.read_text())
    plan["buffers"][0]["size"] = [1, 2]
    (tmp_path / "memory_plan.json").write_text(json.dumps(plan))
    proc = subprocess.run(
        ["ethosu-kit", "run", str(elf)], capture_output=True, text=True, check=False
    )
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert proc.returncode != 0
    assert len(errors) == 1, proc.stderr
    assert str(tmp_path / "memory_plan.json") in errors[0], errors[0]
    assert "'buffers[0].size'" in errors[0] and "Traceback" not in proc.stderr


def test_vectors_go_where_the_board_boots(data_pte_u55_shared: Path) -> None:
    """[boot] vector_address: the vector table at that address, in its region, asserted
    in both linkers, even when the code goes elsewhere."""
    from dataclasses import replace

    from ethosu_kit.board.model import Boot

    model = read_pte(data_pte_u55_shared)
    board = next(b for b in builtin_boards() if b.name == "corstone-300")
    qspi = board.region("QSPI")
    moved = replace(board, boot=Boot("QSPI", qspi.base + 0x400))
    plan = plan_memory(model, moved, None)
    layout = link_layout(plan)
    assert (layout.boot_region, layout.boot_address) == ("QSPI", qspi.base + 0x400)
    assert layout.code_region != "QSPI"
    files = render_project(
        model, plan, data_pte_u55_shared.read_bytes(), kit_dir=paths.kit_root().resolve()
    )
    ld = files["generated/linker.ld"].decode()
    sct = files["generated/scatter.sct"].decode()
    assert re.search(r"\.vectors 0x38000400 :\s*{\s*KEEP\(\*\(\.vectors\)\)\s*}\s*> QSPI", ld)
    assert "ADDR(.vectors) == 0x38000400" in ld
    assert re.search(r"LR_KIT_VECTORS 0x38000400 .*\n{\n  KIT_VECTORS 0x38000400", sct)
    assert "ImageBase(KIT_VECTORS) == 0x38000400" in sct


@pytest.mark.firmware
def test_regions_header_and_scatter_fragment_preprocess(
    data_pte_u55_sram_only: Path, tmp_path: Path
) -> None:
    """kit_regions.h feeds a preprocessed linker script (CMSIS-Toolbox style) and
    kit_sections.sct expands to the layout's execution regions."""
    need_cross_gcc()
    model = read_pte(data_pte_u55_sram_only)
    board = next(b for b in builtin_boards() if b.name == "corstone-300")
    plan = plan_memory(model, board, None)
    layout = link_layout(plan)
    files = render_project(
        model, plan, data_pte_u55_sram_only.read_bytes(), kit_dir=paths.kit_root().resolve()
    )
    for name in ("kit_regions.h", "kit_sections.sct"):
        (tmp_path / name).write_bytes(files[f"generated/{name}"])
    (tmp_path / "team.ld.S").write_text(
        '#include "kit_regions.h"\n'
        "MEMORY { TEAM_SRAM (rw) : ORIGIN = KIT_REGION_SRAM_BASE, "
        "LENGTH = KIT_REGION_SRAM_SIZE }\n"
    )
    (tmp_path / "team.sct.S").write_text(
        '#include "kit_sections.sct"\n'
        "LR_TEAM 0x10000000 { TEAM_CODE +0 { *(+RO) } KIT_EXEC_SRAM KIT_EXEC_DTCM }\n"
        "KIT_LOAD_REGIONS\n"
    )
    cpp = ["arm-none-eabi-cpp", "-P", f"-I{tmp_path}"]
    ld = subprocess.run(
        [*cpp, str(tmp_path / "team.ld.S")], capture_output=True, text=True, check=True
    ).stdout
    sram = board.region("SRAM")
    assert f"ORIGIN = 0x{sram.base:08X}, LENGTH = 0x{sram.size:08X}" in ld
    sct = subprocess.run(
        [*cpp, str(tmp_path / "team.sct.S")], capture_output=True, text=True, check=True
    ).stdout
    for s in layout.sections:
        assert re.search(rf"{s.exec_region} [^{{]*{{ \* \({re.escape(s.name)}\) }}", sct), s.name
    network = next(s for s in layout.sections if s.buffer == "network")
    assert f"LR_{network.exec_region} " in sct
