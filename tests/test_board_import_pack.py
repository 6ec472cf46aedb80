"""`ethosu-kit import-pack`: a board file drafted from a .pdsc (read by cmsis-pack-manager)
loads, and a model plans on it."""

from __future__ import annotations

from pathlib import Path

import pytest

from ethosu_kit.board.draft.cmsis_pack import load_device
from ethosu_kit.board.loader import load_board
from ethosu_kit.board.model import RegionKind
from ethosu_kit.cli.app import main
from ethosu_kit.core.errors import BoardError
from ethosu_kit.plan.planner import plan_memory
from ethosu_kit.plan.types import PlanOptions
from ethosu_kit.pte import read_pte

PDSC = Path(__file__).parent / "data" / "test_soc.pdsc"
FULL = ["--npu", "ethos-u55", "--macs", "128", "--npu-base", "0x40040000", "--npu-irq", "60",
        "--uart-base", "0x40100000"]  # fmt: skip


def _import(tmp_path: Path, *extra: str, device: str = "TestSoC-E7") -> Path:
    out = tmp_path / "board.toml"
    assert main(["import-pack", str(PDSC), "--device", device, "-o", str(out), *extra]) == 0
    return out


def test_device_inherits_family_and_subfamily() -> None:
    e7 = load_device(PDSC, "TestSoC-E7")
    names = {m.name for m in e7.memories}
    assert {"ITCM_S", "DTCM_S", "SRAM0_S", "HYPERRAM_S", "BOOT_ROM_S", "FLASH"} <= names
    assert (e7.core, e7.fpu, e7.fpu_dp) == ("cortex-m55", True, True)
    # Dmve and Dclock, which cmsis-pack-manager's index drops, read from the pdsc itself
    assert (e7.mve, e7.clock_hz) == ("fp", 200_000_000)
    assert (e7.dsp, e7.trustzone) == (None, None)  # the pack gives no Ddsp, no Dtz
    assert e7.svd == "test_soc.svd"  # the device's <debug svd=...>
    access = {m.name: m.access for m in e7.memories}
    assert access["ITCM_S"] == "rwxs" and access["ITCM_NS"] == "rwxn"
    assert access["BOOT_ROM_S"] == "rxs" and access["FLASH"] == "rx"
    e3 = load_device(PDSC, "TestSoC-E3")
    assert e3.core == "cortex-m55"  # the device's own <processor> merges with the family's
    assert (e3.mve, e3.clock_hz) == ("fp", 160_000_000)  # its own Dclock, the family's Dmve
    assert "BOOT_ROM_S" not in {m.name for m in e3.memories}
    assert "HYPERRAM_S" in {m.name for m in e3.memories}  # from the subFamily


def test_import_with_npu_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = _import(tmp_path, *FULL)
    assert "board testsoc-e7, 6 regions" in capsys.readouterr().out
    board = load_board(str(out))
    assert (board.npu.kinds, board.npu.base, board.npu.irq) == (("ethos-u55",), 0x40040000, 60)
    assert board.console.base == 0x40100000 and board.console.kind == "cmsdk-apb"
    kinds = {r.name: r.kind for r in board.regions}
    assert kinds == {
        "ITCM_S": RegionKind.ITCM,
        "BOOT_ROM_S": RegionKind.ROM,
        "DTCM_S": RegionKind.DTCM,
        "SRAM0_S": RegionKind.SRAM,
        "FLASH": RegionKind.FLASH,  # from the <algorithm>: no <memory> covers it
        "HYPERRAM_S": RegionKind.DRAM,
    }
    assert not board.region("DTCM_S").npu and board.region("SRAM0_S").npu
    text = out.read_text()
    assert "ITCM_NS 0x00000000" in text and "non-secure alias" in text  # said, not silently lost


def test_import_without_npu_facts_marks_todo(tmp_path: Path) -> None:
    out = _import(tmp_path)
    text = out.read_text()
    assert 'base = "TODO"  # TODO (blocking): the NPU\'s register base address (--npu-base' in text
    assert 'kind = "none"  # TODO: nothing is printed' in text
    board = load_board(str(out))  # placeholders still load, and say what is unknown
    assert board.todo == ("npu.base", "npu.irq")
    assert board.console.kind == "none"


def test_unknown_device_and_existing_output(tmp_path: Path) -> None:
    with pytest.raises(BoardError, match=r"no <device> 'Nope'") as info:
        load_device(PDSC, "Nope")
    assert info.value.hint and "TestSoC-E3, TestSoC-E7" in info.value.hint
    out = _import(tmp_path)
    assert main(["import-pack", str(PDSC), "--device", "TestSoC-E7", "-o", str(out)]) != 0
    assert _import(tmp_path, "--force") == out


def test_bad_options_refused_before_writing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "board.toml"
    args = ["import-pack", str(PDSC), "--device", "TestSoC-E7", "-o", str(out)]
    assert main([*args, "--npu", "ethos-u55", "--macs", "512"]) != 0
    assert "no 512-MAC configuration" in capsys.readouterr().err
    assert not out.exists()


def test_model_plans_on_imported_board(tmp_path: Path, pte_u55_shared: Path) -> None:
    board = load_board(str(_import(tmp_path, *FULL)))
    plan = plan_memory(read_pte(pte_u55_shared), board, None, PlanOptions())
    assert plan.buffer("temp_pool").region == "SRAM0_S"
    assert plan.buffer("network").region == "FLASH"
    assert plan.buffer("stack").region == "DTCM_S"
    # the runtime's code (320 KiB estimate) does not fit the 256 KiB ITCM: flash, not NPU SRAM
    assert plan.buffer("code").region == "FLASH"
    small = plan_memory(read_pte(pte_u55_shared), board, None, PlanOptions(app="bringup"))
    assert small.buffer("code").region == "ITCM_S"
