"""Several programs in one image (issue 18): the plan shares what lives only during one
execute between programs that never run at the same time and keeps the rest apart.

Pure planning over the checked-in ptes (tests/data/pte): no lowering, no build.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ethosu_kit.board.loader import load_board
from ethosu_kit.core.errors import KitError
from ethosu_kit.plan.multi import plan_image
from ethosu_kit.plan.report import report_json, report_text
from ethosu_kit.plan.types import MemoryPlan, PlanOptions, Role
from ethosu_kit.pte import read_pte
from ethosu_kit.pte.programs import (
    Program,
    ProgramSet,
    ProgramSource,
    check_one_npu,
    parse_pte_arg,
    read_manifest,
    unique,
)

PTE = Path(__file__).resolve().parent / "data" / "pte"


def program(name: str, file: str) -> Program:
    return Program(name, read_pte(PTE / f"{file}.pte"))


@pytest.fixture(scope="module")
def u55() -> tuple[Program, ...]:
    return (program("kws", "u55_shared"), program("vww", "two_delegates"), program("tio", "two_io"))


def test_shared_is_the_largest_need_not_the_sum(u55: tuple[Program, ...]) -> None:
    plan = plan_image(ProgramSet(u55), load_board("corstone-300"), None, PlanOptions())
    temp = plan.buffer("temp_pool")
    needs = {o.program: o.need for s in plan.sharing if s.buffer == "temp_pool" for o in s.owners}
    assert set(needs) == {"kws", "vww", "tio"}
    assert temp.size == max(needs.values()) < sum(needs.values())
    planned = plan.buffer("planned_1")
    assert planned.size == max(max(p.model.methods[0].planned_buffers) for p in u55)
    # what persists is each program's own
    for p in u55:
        assert plan.buffer(f"{p.name}_network").role == Role.NETWORK
        assert plan.buffer(f"{p.name}_method_pool").role == Role.METHOD_POOL
    summary = plan.to_json_dict()["sharing_summary"]
    assert summary["saved"] == summary["sum_alone"] - summary["shared_total"] > 0
    print(
        f"RAM: {summary['ram_sum_alone']} B as one image per program, "
        f"{summary['ram_shared_total']} B shared"
    )
    assert summary["ram_shared_total"] < summary["ram_sum_alone"]
    # the json round-trips typed, and the report names every owner
    assert MemoryPlan.from_json_dict(json.loads(plan.to_json())) == plan
    assert report_json(plan)["programs"]["shared_total"] == plan.shared_total
    text = report_text(plan)
    assert "temp_pool (shared)" in text and "saved" in text


def test_concurrent_programs_share_nothing(u55: tuple[Program, ...]) -> None:
    board = load_board("corstone-300")
    alone = plan_image(ProgramSet(u55), board, None, PlanOptions())
    apart = plan_image(ProgramSet(u55, (("kws", "vww", "tio"),)), board, None, PlanOptions())
    pools = [b for b in apart.buffers if b.role == Role.SCRATCH]
    assert len(pools) == 3
    assert not any(s.shared for s in apart.sharing)
    assert apart.shared_total == apart.to_json_dict()["sharing_summary"]["sum_alone"]
    assert apart.shared_total > alone.shared_total
    # a pair declared concurrent: two lanes, the third program joins the first
    two = plan_image(ProgramSet(u55, (("kws", "vww"),)), board, None, PlanOptions())
    assert {p.name: p.lane for p in two.programs} == {"kws": 0, "vww": 1, "tio": 0}


def test_dedicated_sram_shares_the_fast_scratch() -> None:
    progs = (program("a", "u85_dedicated"), program("b", "u85_dedicated"))
    plan = plan_image(ProgramSet(progs), load_board("corstone-320"), None, PlanOptions())
    fast = plan.by_role(Role.FAST_SCRATCH)
    assert len(fast) == 1 and fast[0].size == 384 * 1024
    assert all(p.fast_scratch == "fast_scratch" for p in plan.programs)


def test_mismatched_npu_configurations_refused() -> None:
    with pytest.raises(KitError, match=r"u85_shared.pte.*u55_shared.pte|u55_shared.pte.*u85"):
        check_one_npu((program("a", "u55_shared"), program("b", "u85_shared")))
    with pytest.raises(KitError, match="one image has one NPU configuration"):
        check_one_npu((program("a", "u85_shared"), program("b", "u85_dedicated")))


def test_bad_name_before_an_existing_file_is_a_name_error(tmp_path: Path) -> None:
    pte = tmp_path / "m.pte"
    pte.write_bytes(b"")
    for bad in ("KWS", "person-detect", "kit"):
        with pytest.raises(KitError, match="is not a lower-case C identifier"):
            parse_pte_arg(f"{bad}={pte}")


def test_names() -> None:
    assert parse_pte_arg("kws=a/b.pte") == ProgramSource("kws", Path("a/b.pte"))
    assert parse_pte_arg("x/kws-v2.pte").name == "kws_v2"
    with pytest.raises(KitError, match="two programs named 'kws'"):
        unique([ProgramSource("kws", Path("a.pte")), ProgramSource("kws", Path("b.pte"))], "gen")
    with pytest.raises(KitError, match="no program named 'nope'"):
        ProgramSet((program("kws", "u55_shared"),)).program("nope")


def test_manifest(tmp_path: Path) -> None:
    m = tmp_path / "programs.toml"
    m.write_text(
        'concurrent = [["kws", "vww"]]\n[[program]]\nname = "kws"\npte = "a.pte"\n'
        '[[program]]\nname = "vww"\npte = "b.pte"\n'
    )
    sources, groups = read_manifest(m)
    assert [s.name for s in sources] == ["kws", "vww"] and sources[0].pte == tmp_path / "a.pte"
    assert groups == (("kws", "vww"),)
    m.write_text('[[program]]\nname = "kws"\npte = "a.pte"\n[[program]]\nname = "kws"\npte = "b"\n')
    with pytest.raises(KitError, match="two programs named 'kws'"):
        read_manifest(m)
    m.write_text('concurrent = [["x"]]\n[[program]]\npte = "a.pte"\n')
    with pytest.raises(KitError, match="no program of the manifest"):
        read_manifest(m)


def test_a_program_with_state_keeps_its_arenas(u55: tuple[Program, ...]) -> None:
    """A mutable buffer (ExecuTorch writes it back with aten::copy_, as ExecuTorch 1.5.1
    emits it) keeps state in the planned arenas between executes: they are its own."""
    from dataclasses import replace

    kws = u55[0]
    method = kws.model.methods[0]
    stateful = replace(
        kws.model,
        methods=(replace(method, cpu_operators=(*method.cpu_operators, "aten::copy_")),),
    )
    progs = (Program("kws", stateful), *u55[1:])
    plan = plan_image(ProgramSet(progs), load_board("corstone-300"), None, PlanOptions())
    assert plan.program("kws").persistent
    assert plan.program("kws").planned == ("kws_planned_1",)
    assert plan.buffer("kws_planned_1").size == method.planned_buffers[0]
    shared = next(s for s in plan.sharing if s.buffer == "planned_1")
    assert {o.program for o in shared.owners} == {"vww", "tio"}
    assert plan.buffer("kws_planned_1").index == 1
