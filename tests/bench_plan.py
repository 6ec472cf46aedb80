"""Benchmark: RAM the plan reserves vs what each test model intrinsically needs.

Run: `pytest -s tests/bench_plan.py` (prints a table). Goal: the planned pools
(planned buffers + temp pool + fast scratch + IO) at most 1.10x the model's intrinsic
need (planned buffers + peak Ethos-U scratch + fast scratch + IO). The method pool,
stack and heap are shown beside it, and upstream's executor_runner defaults (method
pool 60 MiB, temp 2 MiB, 64 MiB in Dedicated_Sram, fast scratch 384 KiB) for scale.
"""

from __future__ import annotations

import time

import pytest

from conftest import lowered_pte
from ethosu_kit.board.loader import load_board
from ethosu_kit.core.errors import FitError
from ethosu_kit.npu.facts import MemoryMode
from ethosu_kit.plan.planner import plan_memory
from ethosu_kit.plan.types import MemoryPlan, PlanOptions, Role
from ethosu_kit.pte import read_pte
from ethosu_kit.pte.model import ModelInfo
from models import MODELS

GOAL = 1.10
MIB = 1 << 20
UPSTREAM_METHOD = 60 * MIB
UPSTREAM_TEMP = {MemoryMode.DEDICATED_SRAM: 64 * MIB}
UPSTREAM_TEMP_DEFAULT = 2 * MIB
UPSTREAM_FAST = 384 * 1024


def _board_for(model: ModelInfo) -> str:
    spec = model.compile_spec
    return "cs320" if spec and spec.accelerator.kind == "ethos-u85" else "cs300"


def intrinsic_need(model: ModelInfo, plan: MemoryPlan) -> int:
    """What the model itself asks for; the fast scratch is what its Vela config set."""
    method = model.methods[0]
    # memory-planned IO is already inside the planned buffers: count only the rest
    io = sum(t.nbytes for t in (*method.inputs, *method.outputs) if not t.planned)
    fast = sum(b.size for b in plan.by_role(Role.FAST_SCRATCH))
    return sum(method.planned_buffers) + model.peak_scratch + fast + io


def planned_pools(plan: MemoryPlan) -> int:
    roles = (Role.PLANNED, Role.SCRATCH, Role.FAST_SCRATCH, Role.INPUT, Role.OUTPUT)
    return sum(b.size for b in plan.buffers if b.role in roles)


@pytest.mark.benchmark
def test_plan_ram_vs_intrinsic_need() -> None:
    rows = []
    worst = 0.0
    for name in sorted(MODELS):
        model = read_pte(lowered_pte(name))
        board = load_board(_board_for(model))
        options = PlanOptions(allow_cpu_only=model.compile_spec is None)
        start = time.perf_counter()
        try:
            plan = plan_memory(model, board, None, options)
        except FitError as exc:
            rows.append(f"{name:14} {board.name:13} does not fit: {str(exc)[:70]}...")
            continue
        micros = (time.perf_counter() - start) * 1e6
        need = intrinsic_need(model, plan)
        pools = planned_pools(plan)
        method = plan.buffer("method_pool").size
        fixed = plan.buffer("stack").size + plan.buffer("heap").size
        upstream = (
            UPSTREAM_METHOD
            + UPSTREAM_TEMP.get(plan.mode, UPSTREAM_TEMP_DEFAULT)
            + (UPSTREAM_FAST if plan.mode == MemoryMode.DEDICATED_SRAM else 0)
        )
        ratio = pools / need
        worst = max(worst, ratio)
        rows.append(
            f"{name:14} {board.name:13} {plan.mode.value:15} {need:>10,} {pools:>10,} "
            f"{ratio:>6.3f}x {method:>8,} {(pools + method) / need:>6.3f}x {fixed:>7,} "
            f"{upstream / need:>9.0f}x {micros:>7.0f}"
        )
    print()
    print(
        f"{'model':14} {'board':13} {'mode':15} {'need B':>10} {'pools B':>10} {'ratio':>7} "
        f"{'method B':>8} {'+method':>7} {'stk+hp':>7} {'upstream':>10} {'plan us':>7}"
    )
    for row in rows:
        print(row)
    print(f"worst planned-pools / intrinsic-need ratio: {worst:.3f}x (goal <= {GOAL:.2f}x)")
    assert worst > 0, "no model was planned"
