"""Where the plan's sizes come from (fast scratch, method pool) and each kind of overflow.

The models are the real lowered fixtures; where a case needs a model the fixtures do
not have (a plain Dedicated_Sram compile, a 3 MiB Sram_Only network), the real
ModelInfo is copied with that one field changed.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from ethosu_kit.board.loader import load_board
from ethosu_kit.core.errors import FitError
from ethosu_kit.plan.apps import method_pool_size
from ethosu_kit.plan.planner import plan_memory
from ethosu_kit.plan.types import PlanOptions
from ethosu_kit.pte import read_pte
from ethosu_kit.pte.model import ModelInfo
from ethosu_kit.pte.vela_config import fast_scratch_size, vela_arena_cache_size, vela_ini_path

KIB, MIB = 1024, 1024 * 1024


def _with_spec(model: ModelInfo, **changes: object) -> ModelInfo:
    """The model as if Vela had been given other compile options (all delegates agree)."""
    methods = []
    for m in model.methods:
        delegates = tuple(
            dataclasses.replace(d, ethosu=dataclasses.replace(d.ethosu, **changes))  # type: ignore[arg-type]
            if d.ethosu
            else d
            for d in m.delegates
        )
        methods.append(dataclasses.replace(m, delegates=delegates))
    return dataclasses.replace(model, methods=tuple(methods))


def test_installed_vela_ini_is_read() -> None:
    assert vela_ini_path() is not None
    assert vela_arena_cache_size("Dedicated_Sram_256KB") == 256 * KIB
    assert vela_arena_cache_size("Dedicated_Sram_512KB") == 512 * KIB
    assert vela_arena_cache_size("Dedicated_Sram") is None  # Vela: the whole address range


def test_fast_scratch_sources_in_order(data_pte_u85_dedicated: Path) -> None:
    model = read_pte(data_pte_u85_dedicated)
    assert model.compile_spec and model.compile_spec.memory_mode_name == "Dedicated_Sram_384KB"
    assert fast_scratch_size(model).size == 384 * KIB
    assert fast_scratch_size(model, 100 * KIB).size == 100 * KIB
    flag = _with_spec(model, arena_cache_size=200 * KIB)
    got = fast_scratch_size(flag)
    assert got.size == 200 * KIB and "--arena-cache-size" in got.why
    own_ini = _with_spec(model, config_ini="my/vela.ini", memory_mode_name="Dedicated_Sram_512KB")
    got = fast_scratch_size(own_ini)
    assert got.size == 512 * KIB and "name" in got.why


def test_plain_dedicated_takes_the_sram_left(data_pte_u85_dedicated: Path) -> None:
    model = _with_spec(read_pte(data_pte_u85_dedicated), memory_mode_name="Dedicated_Sram")
    plan = plan_memory(model, load_board("cs320"), None, PlanOptions())
    fast = plan.buffer("fast_scratch")
    sram = load_board("cs320").region("SRAM")
    assert fast.region == "SRAM" and fast.size == sram.size  # nothing else needs the SRAM
    assert any("--fast-scratch" in note for note in plan.notes)


def test_fast_scratch_overflow(data_pte_u85_dedicated: Path) -> None:
    model = read_pte(data_pte_u85_dedicated)
    with pytest.raises(FitError) as info:
        plan_memory(model, load_board("cs320"), None, PlanOptions(fast_scratch=5 * MIB))
    assert str(info.value).startswith("region SRAM of corstone-320")
    assert "fast_scratch 5,242,880" in str(info.value)
    assert info.value.hint and "--arena-cache-size" in info.value.hint


def test_sram_only_network_overflow(data_pte_u55_sram_only: Path) -> None:
    model = dataclasses.replace(read_pte(data_pte_u55_sram_only), file_bytes=3 * MIB)
    with pytest.raises(FitError) as info:
        plan_memory(model, load_board("cs300"), None, PlanOptions())
    message = str(info.value)
    assert "region SRAM" in message and "temp_pool" in message and "network 3,145,728" in message
    assert info.value.hint and "Shared_Sram" in info.value.hint


def test_cpu_ram_overflow(data_pte_u85_shared: Path) -> None:
    with pytest.raises(FitError) as info:
        plan_memory(read_pte(data_pte_u85_shared), load_board("cs320"), None,
                    PlanOptions(stack=512 * MIB))  # fmt: skip
    assert "stack 536,870,912" in str(info.value)
    assert info.value.hint and "--stack" in info.value.hint


def test_method_pool_arithmetic_is_spelled_out(data_pte_cpu_op: Path) -> None:
    method = read_pte(data_pte_cpu_op).methods[0]
    size, why = method_pool_size(method)
    assert size % 256 == 0
    assert f"{method.num_values} values x 16" in why
    assert f"{method.num_tensors} tensors x 96" in why
    assert f"rounded to 256 = {size}" in why


def test_the_selftest_plan_holds_only_what_the_selftest_uses(
    data_pte_u85_shared: Path, tmp_path: Path
) -> None:
    """A self-test plan once carried the runner's planned buffers, method pool and its
    16 KiB / 32 KiB stack and heap: 76 % of the Corstone-320 stand-in's 32 KiB DTCM. The
    self-test uses the temp pool, the network and its vectors; the runner's plan is kept."""
    from ethosu_kit.plan.types import MemoryPlan
    from projects import make_project

    def gen(app: str) -> tuple[MemoryPlan, str]:
        out = tmp_path / app
        make_project(data_pte_u85_shared, out, board="cs320", app=app, qemu_stand_in=True)
        config = (out / "generated" / "kit_memory_config.h").read_text()
        return MemoryPlan.from_json(out / "memory_plan.json"), config

    runner, runner_config = gen("executor_runner")
    selftest, selftest_config = gen("selftest")
    runner_names = {b.name for b in runner.buffers}
    names = {b.name for b in selftest.buffers}
    assert {"method_pool", "planned_1"} <= runner_names
    assert not {n for n in names if n.startswith(("planned_", "input_", "output_"))}
    assert "method_pool" not in names
    assert {"temp_pool", "network", "selftest_vectors", "stack", "heap"} <= names
    assert (selftest.buffer("stack").size, selftest.buffer("heap").size) == (8 * KIB, 4 * KIB)
    assert (runner.buffer("stack").size, runner.buffer("heap").size) == (16 * KIB, 32 * KIB)
    assert "the default for app selftest" in selftest.buffer("stack").why

    def dtcm_used(plan: MemoryPlan) -> int:
        """The buffers' bytes in DTCM (region_fill adds the linker's data reserve, the
        same for both: the point here is what each plan's buffers take)."""
        return sum(b.size for b in plan.buffers if b.region == "DTCM")

    assert dtcm_used(selftest) * 100 // (32 * KIB) < 40 < dtcm_used(runner) * 100 // (32 * KIB)
    # the generated header says whose plan it is, and what a runner build would lack
    assert '#define KIT_PLAN_APP "selftest"' in selftest_config
    assert "KIT_PLAN_NO_RUNNER_POOLS" in selftest_config
    assert "KIT_PLAN_NO_RUNNER_POOLS" not in runner_config
