"""The executor_runner's CPU pools, one program with one method: its planned activations
(mem_id 1..n), the inputs and outputs ExecuTorch does not memory-plan, and the method
pool. plan.multi places the pools of an image of several programs.
"""

from __future__ import annotations

from ethosu_kit.board.model import MemoryRegion
from ethosu_kit.core.sizes import align_up
from ethosu_kit.npu.facts import NPU_ALIGN
from ethosu_kit.plan.apps import method_pool_size
from ethosu_kit.plan.placer import MIN_POOL, Placer
from ethosu_kit.plan.types import PlanOptions, Role, indexed_name
from ethosu_kit.pte.model import MethodInfo


def runner_pools(
    placer: Placer, method: MethodInfo, cpu_ram: list[MemoryRegion], options: PlanOptions
) -> None:
    """The executor_runner's: planned activations, unplanned IO, the method pool."""
    for i, size in enumerate(method.planned_buffers, start=1):
        why = f"mem_id {i} of method {method.name}: non_const_buffer_sizes[{i}] = {size}"
        placer.place_cpu(indexed_name(Role.PLANNED, i), Role.PLANNED, size, cpu_ram, why)
    for kind, role, tensors in (
        ("input", Role.INPUT, method.inputs),
        ("output", Role.OUTPUT, method.outputs),
    ):
        for i, t in enumerate(tensors):
            if t.planned or t.nbytes == 0:
                continue  # already inside planned_<mem_id>: a copy would count it twice
            why = (
                f"{kind} {i} of {method.name} (not memory-planned): "
                f"{t.dtype}{list(t.shape)} = {t.nbytes} B"
            )
            # symbol, section: kit_<name>, .kit.<name>
            placer.place_cpu(indexed_name(role, i), role, t.nbytes, cpu_ram, why)
    pool, pool_why = method_pool_size(method)
    if options.method_pool is not None:
        pool = max(MIN_POOL, align_up(options.method_pool, NPU_ALIGN))
        pool_why = options.method_pool_why or f"--method-pool {pool} (option)"
    placer.place_cpu("method_pool", Role.METHOD_POOL, pool, cpu_ram, pool_why)
