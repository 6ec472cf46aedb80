"""The virtual NPU's working memory is a buffer of the plan: measured, placed, fit-checked.

`gen --npu virtual` measures it on the host (the library's high-water mark on the
model's streams) and plans it as `vnpu_workspace`; `ethosu-kit build DIR --npu virtual`
re-plans a project generated for the driver from its own memory_plan.json (typed) and
generated/model.pte; a workspace that does not fit is a FitError naming it.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from ethosu_kit.board.loader import load_board
from ethosu_kit.core.errors import FitError, KitError
from ethosu_kit.firmware.stages import keeps_virtual_workspace, needs_virtual_npu, regenerate
from ethosu_kit.plan.planner import plan_memory
from ethosu_kit.plan.types import MemoryPlan, PlanOptions, Role
from ethosu_kit.pte import read_pte
from projects import make_project


def _workspace(project: Path) -> int | None:
    plan = MemoryPlan.from_json(project / "memory_plan.json")
    found = plan.by_role(Role.VNPU_WORKSPACE)
    return found[0].size if found else None


def test_gen_npu_virtual_plans_the_measured_workspace(pte_u55_shared: Path, tmp_path: Path) -> None:
    from ethosu_kit.vnpu.workspace import pte_workspace

    need = pte_workspace(pte_u55_shared)
    out = tmp_path / "fw"
    make_project(pte_u55_shared, out, npu="virtual")
    assert _workspace(out) == -(-need // 16) * 16
    config = (out / "generated" / "kit_memory_config.h").read_text()
    assert "X(vnpu_workspace, kit_vnpu_workspace," in config
    assert 'set(ETHOSU_KIT_NPU "virtual"' in (out / "CMakeLists.txt").read_text()


def test_build_npu_virtual_replans_a_driver_project(pte_u55_shared: Path, tmp_path: Path) -> None:
    out = tmp_path / "fw"
    make_project(pte_u55_shared, out)
    assert _workspace(out) is None
    before = MemoryPlan.from_json(out / "memory_plan.json")
    assert needs_virtual_npu(out)
    regenerate(out, npu="virtual")
    after = MemoryPlan.from_json(out / "memory_plan.json")
    assert _workspace(out)
    assert after.options.npu == "virtual" and after.board == before.board
    assert after.model_path == before.model_path and after.mode == before.mode
    # the other buffers keep their sizes
    sizes = {b.name: b.size for b in before.buffers}
    assert all(sizes[b.name] == b.size for b in after.buffers if b.name in sizes)
    assert not needs_virtual_npu(out)  # already planned: nothing to do


def test_build_npu_driver_drops_the_virtual_workspace(pte_u55_shared: Path, tmp_path: Path) -> None:
    """Issue 17: a driver build after a virtual one kept the virtual NPU's working memory
    (18 KB on a real model) in the image for silicon; the stack goes back to the driver's."""
    out = tmp_path / "fw"
    make_project(pte_u55_shared, out)
    driver = MemoryPlan.from_json(out / "memory_plan.json")
    assert not keeps_virtual_workspace(out)
    regenerate(out, npu="virtual")
    assert _workspace(out) and keeps_virtual_workspace(out)
    regenerate(out, npu="driver")
    again = MemoryPlan.from_json(out / "memory_plan.json")
    assert _workspace(out) is None and not keeps_virtual_workspace(out)
    assert again.options.npu == "driver" and again.options.vnpu_workspace is None
    assert [(b.name, b.region, b.size) for b in again.buffers] == [
        (b.name, b.region, b.size) for b in driver.buffers
    ]
    assert "kit_vnpu_workspace" not in (out / "generated" / "kit_memory_config.h").read_text()
    assert 'set(ETHOSU_KIT_NPU "driver"' in (out / "CMakeLists.txt").read_text()


def test_the_driver_stack_comes_back_after_a_virtual_replan(
    pte_u55_shared: Path, tmp_path: Path
) -> None:
    """--stack auto measured both stacks: virtual swaps in its own, driver restores."""
    out = tmp_path / "fw"
    make_project(pte_u55_shared, out)
    plan = MemoryPlan.from_json(out / "memory_plan.json")
    options = replace(plan.options, stack=2048, stack_why="measured (driver)",
                      stack_virtual=4096, stack_virtual_why="measured (virtual)")  # fmt: skip
    (out / "memory_plan.json").write_text(replace(plan, options=options).to_json())
    regenerate(out, npu="virtual", force=True)
    virtual = MemoryPlan.from_json(out / "memory_plan.json")
    assert virtual.options.stack == 4096 and virtual.buffer("stack").size == 4096
    regenerate(out, npu="driver", force=True)
    driver = MemoryPlan.from_json(out / "memory_plan.json")
    assert driver.options.stack == 2048 and driver.options.stack_why == "measured (driver)"
    assert driver.buffer("stack").size == 2048


def test_a_workspace_that_does_not_fit_is_a_fit_error(pte_u55_shared: Path) -> None:
    model = read_pte(pte_u55_shared)
    board = load_board("cs300")
    huge = max(r.size for r in board.regions if r.cpu and r.writable) + 1
    with pytest.raises(FitError, match=r"vnpu_workspace"):
        plan_memory(model, board, None, PlanOptions(npu="virtual", vnpu_workspace=huge))


def test_build_with_the_driver_replans_a_virtual_project(
    pte_u55_shared: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`build --npu driver` on a project made with `--npu virtual` plans it again first."""
    from ethosu_kit.firmware import build

    out = tmp_path / "fw"
    make_project(pte_u55_shared, out, npu="virtual")
    assert _workspace(out)
    calls: list[list[str]] = []
    monkeypatch.setattr(build, "_run", lambda argv, *_: calls.append(argv))
    with pytest.raises(KitError, match=r"no \.elf"):  # CMake did not run: no image
        build.build_project(out, app="bringup", npu="driver")
    assert _workspace(out) is None
    assert any("-DETHOSU_KIT_NPU=driver" in argv for argv in calls)
