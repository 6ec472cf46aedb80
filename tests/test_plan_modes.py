"""The memory plan of real lowered models: each buffer in the region its mode requires.

Every model comes from the session fixtures (tests/conftest.py): real .pte files
lowered by ExecuTorch + Vela, read by ethosu_kit.pte, planned for real board files.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ethosu_kit.board.loader import load_board
from ethosu_kit.board.model import Board, RegionKind
from ethosu_kit.core.errors import FitError, PlanError
from ethosu_kit.npu.facts import NPU_ALIGN, Accelerator, MemoryMode, NpuKind
from ethosu_kit.plan.apps import App
from ethosu_kit.plan.fill import region_fill
from ethosu_kit.plan.planner import plan_memory
from ethosu_kit.plan.report import report_json, report_text
from ethosu_kit.plan.types import MemoryPlan, NpuLibrary, PlanOptions, Role
from ethosu_kit.pte import read_pte
from ethosu_kit.pte.model import ModelInfo

CUSTOM = Path(__file__).parent / "data" / "boards" / "custom_m55.toml"


def _plan(
    pte: Path, board: str, mode: MemoryMode | None = None, **options: object
) -> tuple[ModelInfo, MemoryPlan]:
    model = read_pte(pte)
    return model, plan_memory(model, load_board(board), mode, PlanOptions(**options))  # type: ignore[arg-type]


def _kind(plan: MemoryPlan, name: str) -> RegionKind:
    return plan.board.region(plan.buffer(name).region).kind


def check_invariants(model: ModelInfo, plan: MemoryPlan) -> None:
    """What must hold for every plan, whatever the mode or board."""
    board: Board = plan.board
    for b in plan.buffers:
        region = board.region(b.region)
        assert b.region in b.allowed_regions, b
        if b.npu:
            assert region.npu, f"{b.name} in {b.region}, which the NPU cannot reach"
            assert region.kind not in (RegionKind.ITCM, RegionKind.DTCM), b.name
            assert b.align % NPU_ALIGN == 0, b.name
        if b.role not in (Role.NETWORK, Role.CODE):
            assert region.writable and region.volatile, f"{b.name} in {b.region}"
        if b.initialized:
            assert region.loadable or b.load_region, b.name
        assert b.why, b.name
    for use in region_fill(plan):
        assert use.used <= use.region.size, use
    method = model.methods[0]
    planned = plan.by_role(Role.PLANNED)
    assert [b.size for b in planned] == list(method.planned_buffers)
    assert all(b.align == NPU_ALIGN for b in planned)
    # memory-planned IO lives inside planned_<mem_id>; only the rest gets a buffer
    unplanned_in = [t.nbytes for t in method.inputs if not t.planned and t.nbytes]
    unplanned_out = [t.nbytes for t in method.outputs if not t.planned and t.nbytes]
    assert [b.size for b in plan.by_role(Role.INPUT)] == unplanned_in
    assert [b.size for b in plan.by_role(Role.OUTPUT)] == unplanned_out
    temp = plan.buffer("temp_pool")
    assert temp.size >= model.peak_scratch
    assert plan.buffer("network").size == model.file_bytes
    assert {b.name for b in plan.buffers} >= {"stack", "heap", "method_pool", "code", "data"}


def test_u55_shared_sram(data_pte_u55_shared: Path) -> None:
    model, plan = _plan(data_pte_u55_shared, "cs300")
    check_invariants(model, plan)
    assert plan.mode == MemoryMode.SHARED_SRAM and str(plan.accelerator) == "ethos-u55-128"
    assert plan.buffer("temp_pool").region == "SRAM" and plan.buffer("temp_pool").npu
    assert plan.buffer("network").region == "QSPI"  # external flash, it fits
    assert not plan.by_role(Role.FAST_SCRATCH)
    for name in ("stack", "heap", "method_pool", "planned_1", "data"):
        assert plan.buffer(name).region == "DTCM", name
    assert plan.buffer("code").region == "ITCM"
    assert any("pte's own" in n for n in plan.notes)


def test_u55_sram_only(data_pte_u55_sram_only: Path) -> None:
    model, plan = _plan(data_pte_u55_sram_only, "cs300")
    check_invariants(model, plan)
    network = plan.buffer("network")
    assert network.region == "SRAM" and plan.buffer("temp_pool").region == "SRAM"
    assert network.initialized and network.npu


def test_u85_dedicated_sram(data_pte_u85_dedicated: Path) -> None:
    model, plan = _plan(data_pte_u85_dedicated, "cs320")
    check_invariants(model, plan)
    assert _kind(plan, "temp_pool") == RegionKind.DRAM
    assert _kind(plan, "network") == RegionKind.FLASH
    fast = plan.buffer("fast_scratch")
    assert fast.region == "SRAM" and fast.npu and fast.size == 384 * 1024
    assert "Dedicated_Sram_384KB" in fast.why
    # Corstone-320's DTCM is 32 KiB: the stack takes it, the rest spills to on-chip RAM.
    assert plan.buffer("stack").region == "DTCM"
    assert plan.buffer("code").region == "BRAM"  # the 32 KiB ITCM is too small for the runtime


def test_u85_shared_sram(data_pte_u85_shared: Path) -> None:
    model, plan = _plan(data_pte_u85_shared, "cs320")
    check_invariants(model, plan)
    assert plan.buffer("temp_pool").region == "SRAM"
    assert plan.buffer("network").region == "QSPI"
    assert not plan.by_role(Role.FAST_SCRATCH)


def test_u65_dedicated_on_corstone_300(data_pte_u65_dedicated: Path) -> None:
    model, plan = _plan(data_pte_u65_dedicated, "cs300")
    check_invariants(model, plan)
    assert plan.buffer("temp_pool").region == "DDR"
    assert plan.buffer("fast_scratch").region == "SRAM"


def test_fast_scratch_option_wins(data_pte_u85_dedicated: Path) -> None:
    _, plan = _plan(data_pte_u85_dedicated, "cs320", fast_scratch=256 * 1024)
    assert plan.buffer("fast_scratch").size == 256 * 1024
    assert "--fast-scratch" in plan.buffer("fast_scratch").why


def test_cpu_operator_model(data_pte_cpu_op: Path) -> None:
    model, plan = _plan(data_pte_cpu_op, "cs300")
    check_invariants(model, plan)
    assert any(op.startswith("aten::argmax") for op in model.cpu_operators)
    assert plan.buffer("temp_pool").region == "SRAM"


def test_cpu_only_program(data_pte_cpu_only: Path) -> None:
    with pytest.raises(PlanError, match="no Ethos-U delegate") as info:
        _plan(data_pte_cpu_only, "cs300")
    assert info.value.hint and "--allow-cpu-only" in info.value.hint
    model, plan = _plan(data_pte_cpu_only, "cs300", allow_cpu_only=True)
    check_invariants(model, plan)
    assert plan.accelerator is None and plan.accelerator_name == "none"
    assert not any(b.npu for b in plan.buffers)
    assert plan.buffer("network").region == "QSPI"
    assert plan.buffer("temp_pool").region == "DTCM"  # CPU-only: fastest RAM


def test_too_big_refused_with_numbers(pte_too_big: Path) -> None:
    model = read_pte(pte_too_big)
    with pytest.raises(FitError) as info:
        plan_memory(model, load_board("cs300"), None, PlanOptions())
    message, hint = str(info.value), info.value.hint or ""
    assert "\n" not in message
    assert message.startswith("region SRAM of corstone-300")
    assert "has 2,097,152" in message and "temp_pool" in message
    needed = int(re.search(r"needs ([\d,]+) bytes", message)[1].replace(",", ""))  # type: ignore[index]
    assert needed >= model.peak_scratch > 2 * 1024 * 1024
    assert "Dedicated_Sram" in hint and "--optimise Size" in hint
    assert info.value.exit_code == 3


def test_mode_mismatch(data_pte_u55_shared: Path) -> None:
    with pytest.raises(PlanError, match=r"compiled for Shared_Sram .*not Sram_Only") as info:
        _plan(data_pte_u55_shared, "cs300", MemoryMode.SRAM_ONLY)
    assert info.value.hint and "drop --mode" in info.value.hint


def test_u55_with_dedicated_sram(data_pte_u55_shared: Path) -> None:
    with pytest.raises(PlanError, match=r"Dedicated_Sram needs an NPU with a dedicated SRAM"):
        _plan(data_pte_u55_shared, "cs300", MemoryMode.DEDICATED_SRAM)


def test_wrong_accelerator_for_board(data_pte_u85_shared: Path) -> None:
    with pytest.raises(PlanError, match=r"compiled for ethos-u85-256, but board corstone-300"):
        _plan(data_pte_u85_shared, "cs300")


def test_wrong_mac_count_for_custom_board(data_pte_u55_shared: Path) -> None:
    with pytest.raises(PlanError, match=r"can only be ethos-u55-64") as info:
        _plan(data_pte_u55_shared, str(CUSTOM))
    assert info.value.hint and "--board corstone-300" in info.value.hint


def test_reports_cover_every_region_and_buffer(data_pte_cpu_op: Path) -> None:
    _, plan = _plan(data_pte_cpu_op, "cs300")
    text = report_text(plan)
    for r in plan.board.regions:
        assert r.name in text and f"0x{r.base:08x}" in text
    for b in plan.buffers:
        assert b.name in text
    data = report_json(plan)
    json.dumps(data)  # plain JSON types only
    assert [r["name"] for r in data["regions"]] == [r.name for r in plan.board.regions]
    for region in data["regions"]:
        assert region["free"] == region["size"] - region["used"]
    placed = [b["name"] for r in data["regions"] for b in r["buffers"]]
    assert sorted(placed) == sorted(b.name for b in plan.buffers)
    sram = next(r for r in data["regions"] if r["name"] == "SRAM")
    assert [b["name"] for b in sram["buffers"]] == ["temp_pool"]


@pytest.mark.parametrize("cpu_only", [False, True])
def test_plan_json_reads_back_typed(
    pte_u55_shared: Path, pte_cpu_only: Path, cpu_only: bool
) -> None:
    """memory_plan.json round-trips to the same typed plan: the accelerator, app and NPU
    library come back as Accelerator (or None), App and NpuLibrary, and write the same bytes."""
    pte = pte_cpu_only if cpu_only else pte_u55_shared
    _, plan = _plan(pte, "cs300", allow_cpu_only=cpu_only, app=App.SELFTEST, npu=NpuLibrary.NONE)
    back = MemoryPlan.from_json_dict(json.loads(plan.to_json()))
    assert back == plan and back.to_json() == plan.to_json()
    assert type(back.options.app) is App and type(back.options.npu) is NpuLibrary
    if cpu_only:
        assert back.accelerator is None and '"accelerator": "none"' in plan.to_json()
    else:
        assert back.accelerator == Accelerator(NpuKind.U55, 128)
