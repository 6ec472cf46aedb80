"""Placement by what a memory is (issue 17 items 4 and 5): non-volatile or not, which of
the NPU's AXI ports reaches it (`npu_port`, matched against the port the board's
QCONFIG/REGIONCFG pick for each NPU buffer), its size; never by `on_chip`.

The board is tests/data/boards/ensemble_like.toml: on-chip MRAM (the boot memory), two
large on-chip SRAMs (SRAM0 on both NPU ports, SRAM1 on the SRAM port only), TCMs, an
external OSPI flash, no DRAM. Each test edits it where it needs another SoC.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from ethosu_kit.board.loader import load_board
from ethosu_kit.board.model import Board, NpuPort
from ethosu_kit.core.errors import BoardError, PlanError
from ethosu_kit.core.typed_json import ShapeError
from ethosu_kit.plan.planner import plan_memory
from ethosu_kit.plan.report import report_json
from ethosu_kit.plan.types import MemoryPlan, PlanOptions
from ethosu_kit.pte import read_pte

BOARD = Path(__file__).parent / "data" / "boards" / "ensemble_like.toml"
SELFTEST = PlanOptions(app="selftest")


def _board(tmp_path: Path, *edits: tuple[str, str]) -> Board:
    text = BOARD.read_text()
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new)
    path = tmp_path / "board.toml"
    path.write_text(text)
    return load_board(path)


def _plan(pte: Path, board: Board, options: PlanOptions = SELFTEST) -> MemoryPlan:
    return plan_memory(read_pte(pte), board, None, options)


def _where(plan: MemoryPlan) -> dict[str, str]:
    return {b.name: b.region for b in plan.buffers}


def test_the_network_goes_to_on_chip_mram(data_pte_u55_shared: Path) -> None:
    """Shared_Sram: the network and the self-test vectors in the MRAM the core boots
    from (was refused: the network demanded an on_chip = false region), the scratch in
    the NPU's SRAM."""
    plan = _plan(data_pte_u55_shared, load_board(BOARD))
    where = _where(plan)
    assert where["network"] == "MRAM"
    assert where["selftest_vectors"] == "MRAM"  # beside the network, not the OSPI flash
    assert where["temp_pool"] in ("SRAM1", "SRAM0")
    assert plan.board.region("MRAM").on_chip


def test_a_u85_temp_pool_in_a_large_on_chip_sram(data_pte_u85_dedicated: Path) -> None:
    """Dedicated_Sram: the temp pool (REGIONCFG_1 = 3: the EXT port) in the 4 MiB
    on-chip SRAM0 that port reaches (was refused unless declared kind "dram", off-chip);
    the fast scratch (REGIONCFG_2 = 0) in SRAM1, on the SRAM port only."""
    where = _where(_plan(data_pte_u85_dedicated, load_board(BOARD)))
    assert where["temp_pool"] == "SRAM0"
    assert where["fast_scratch"] == "SRAM1"
    assert where["network"] == "MRAM"


def test_vectors_stay_beside_the_network(data_pte_u55_shared: Path, tmp_path: Path) -> None:
    """An MRAM too small for the network: it goes to the OSPI flash and the vectors
    with it, though they would fit the MRAM."""
    board = _board(tmp_path, ('size = "5632 KiB"', 'size = "4 KiB"'))
    where = _where(_plan(data_pte_u55_shared, board))
    assert where["network"] == "OSPI"
    assert where["selftest_vectors"] == "OSPI"


def test_an_npu_buffer_is_refused_a_cpu_only_memory(
    data_pte_u55_shared: Path, tmp_path: Path
) -> None:
    """SRAMs only the CPU reaches (npu_port "none"): the scratch has nowhere to go, and
    the refusal names the regions and their port."""
    board = _board(
        tmp_path,
        ('npu_port = "both"', 'npu_port = "none"'),
        ('npu_port = "sram"', 'npu_port = "none"'),
    )
    with pytest.raises(PlanError) as caught:
        _plan(data_pte_u55_shared, board)
    message = caught.value.message
    assert "temp_pool" in message and '"sram" port (REGIONCFG_1 = 0)' in message
    assert 'SRAM0 (npu_port = "none": only the CPU reaches it)' in message
    assert 'SRAM1 (npu_port = "none": only the CPU reaches it)' in message
    assert "npu_port" in (caught.value.hint or "")


def test_a_refusal_derives_the_register_that_would_serve(
    data_pte_u55_shared: Path, tmp_path: Path
) -> None:
    """SRAMs wired to the external port only: Shared_Sram's REGIONCFG_1 = 0 (the SRAM
    port) reaches none; the refusal gives the value that sends the scratch over "ext"."""
    board = _board(
        tmp_path,
        ('npu_port = "both"', 'npu_port = "ext"'),
        ('npu_port = "sram"', 'npu_port = "ext"'),
    )
    with pytest.raises(PlanError, match='REGIONCFG_1 = 2 would send it over the "ext" port, '
                       "which reaches SRAM0, SRAM1"):  # fmt: skip
        _plan(data_pte_u55_shared, board)
    fixed = _board(
        tmp_path,
        ('npu_port = "both"', 'npu_port = "ext"'),
        ('npu_port = "sram"', 'npu_port = "ext"'),
        (
            "Shared_Sram = { qconfig = 2, regioncfg = [3, 0,",
            "Shared_Sram = { qconfig = 2, regioncfg = [3, 2,",
        ),
    )
    assert _where(_plan(data_pte_u55_shared, fixed))["temp_pool"] == "SRAM0"


def test_the_network_only_where_its_port_reaches(data_pte_u55_shared: Path, tmp_path: Path) -> None:
    """MRAM on the SRAM port only: Shared_Sram reads the network over the external port
    (QCONFIG = 2, REGIONCFG_0 = 3), so it goes to the OSPI flash."""
    board = _board(
        tmp_path,
        (
            'size = "5632 KiB"\non_chip = true',
            'size = "5632 KiB"\non_chip = true\nnpu_port = "sram"',
        ),
    )
    where = _where(_plan(data_pte_u55_shared, board))
    assert where["network"] == "OSPI"


def test_the_ports_are_in_the_report(data_pte_u85_dedicated: Path) -> None:
    report = report_json(_plan(data_pte_u85_dedicated, load_board(BOARD)))
    regions = {r["name"]: r for r in report["regions"]}
    assert regions["SRAM0"]["npu_port"] == "both"
    assert regions["DTCM"]["npu_port"] == "none"
    buffers = {b["name"]: b for r in report["regions"] for b in r["buffers"]}
    assert buffers["network"]["npu_port"] == "ext (QCONFIG = 3, REGIONCFG_0 = 3)"
    assert buffers["temp_pool"]["npu_port"] == "ext (REGIONCFG_1 = 3)"
    assert buffers["fast_scratch"]["npu_port"] == "sram (REGIONCFG_2 = 0)"
    assert buffers["stack"]["npu_port"] is None


def test_npu_port_and_npu_agree(tmp_path: Path) -> None:
    board = _board(tmp_path, ('npu_port = "sram"', 'npu_port = "ext"'))
    assert board.region("SRAM1").port == NpuPort.EXT and board.region("SRAM1").npu
    no_npu = _board(tmp_path, ('npu_port = "sram"', 'npu_port = "none"'))
    assert not no_npu.region("SRAM1").npu
    with pytest.raises(
        BoardError, match=re.escape('SRAM1\'.npu_port: "ext" contradicts npu = false')
    ):
        _board(tmp_path, ('npu_port = "sram"', 'npu_port = "ext"\nnpu = false'))
    defaulted = load_board("corstone-320")
    assert defaulted.region("SRAM").port == NpuPort.SRAM
    assert defaulted.region("DDR").port == NpuPort.EXT
    assert defaulted.region("ITCM").port == NpuPort.NONE


def test_a_plan_read_back_keeps_the_ports(data_pte_u85_dedicated: Path) -> None:
    plan = _plan(data_pte_u85_dedicated, load_board(BOARD))
    again = MemoryPlan.from_json_dict(plan.to_json_dict())
    assert again.board.region("SRAM0").port == NpuPort.BOTH
    # a plan written before npu_port existed: the port is the kind's default
    data = plan.to_json_dict()
    for r in data["board_data"]["regions"]:
        del r["npu_port"]
    old = MemoryPlan.from_json_dict(data)
    assert old.board.region("SRAM0").port == NpuPort.SRAM
    assert replace(old.board.region("MRAM")).port == NpuPort.EXT


def test_a_plan_read_back_with_contradicting_ports_is_refused(data_pte_u85_dedicated: Path) -> None:
    data = _plan(data_pte_u85_dedicated, load_board(BOARD)).to_json_dict()
    for r in data["board_data"]["regions"]:
        if r["name"] == "DTCM":
            r["npu_port"] = "ext"  # a TCM the NPU would reach
    with pytest.raises(ShapeError, match="npu_port"):
        MemoryPlan.from_json_dict(data)


def test_the_picture_shows_the_ports(data_pte_u85_dedicated: Path) -> None:
    """`ethosu-kit report --json`: each region's port, each NPU register's buffer with
    the port of the region it is in."""
    from ethosu_kit.report.picture import build_picture, to_json

    data = to_json(build_picture(_plan(data_pte_u85_dedicated, load_board(BOARD)), None, None))
    regions = {r["name"]: r for r in data["regions"]}
    assert regions["SRAM0"]["npu_port"] == "both" and regions["ITCM"]["npu_port"] == "none"
    rows = {r["register"]: r for r in data["npu"]["rows"]}
    assert rows["REGIONCFG_1"]["region"] == "SRAM0" and rows["REGIONCFG_1"]["region_port"] == "both"
    assert rows["QCONFIG"]["port"] == "EXT AXI" and rows["QCONFIG"]["region"] == "MRAM"
    assert "MRAM (ext)" in data["npu"]["reachable"]
