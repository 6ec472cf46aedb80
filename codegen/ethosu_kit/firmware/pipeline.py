"""The generation pipeline as a library function: plan, then render every file of the
project (the self-test's vectors made for app selftest). The CLI's `gen` and `build`
and the library's own regeneration (`firmware.build`) all go through here.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ethosu_kit.board.model import Board
from ethosu_kit.npu.facts import MemoryMode
from ethosu_kit.plan.planner import plan_memory
from ethosu_kit.plan.types import MemoryPlan, PlanOptions
from ethosu_kit.pte.model import ModelInfo
from ethosu_kit.render.generate import render_project
from ethosu_kit.selftest.make import make_vectors


def plan_and_render(
    pte: Path,
    pte_bytes: bytes,
    model: ModelInfo,
    board: Board,
    *,
    mode: MemoryMode | None,
    options: PlanOptions,
    vectors: Path | None = None,
    seed: int = 0,
    input_data: Mapping[int, bytes] | None = None,
) -> tuple[MemoryPlan, dict[str, bytes]]:
    """The plan and every file of the project (the self-test's vectors made for app selftest)."""
    plan = plan_memory(model, board, mode, options)
    selftest = None
    if options.app == "selftest":
        selftest = make_vectors(pte, model, vectors, seed)
    return plan, render_project(model, plan, pte_bytes, selftest, input_data)
