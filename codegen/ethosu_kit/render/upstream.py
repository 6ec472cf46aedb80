"""What upstream's Arm executor_runner and corstone_utils.cmake use, for the inline
"upstream: ...; here: ..." notes in the generated files.

The Corstone name here is upstream's file name, not a board fact: these are upstream's
fixed defaults (its runner only targets the Corstone FVPs), which the notes set beside
the figures this project's plan chose for the user's board.
"""

from __future__ import annotations

from ethosu_kit.board.model import RegionKind
from ethosu_kit.npu.facts import MemoryMode
from ethosu_kit.plan.types import Buffer, MemoryPlan, Role
from ethosu_kit.render.filters import kib

UPSTREAM_METHOD_POOL = 60 * 1024 * 1024


UPSTREAM_TEMP_POOL = {
    MemoryMode.SRAM_ONLY: 2 * 1024 * 1024,
    MemoryMode.SHARED_SRAM: 2 * 1024 * 1024,
    MemoryMode.DEDICATED_SRAM: 64 * 1024 * 1024,
}


UPSTREAM_FAST_SCRATCH = 384 * 1024


def upstream_note(b: Buffer, plan: MemoryPlan) -> str:
    """CMSIS-Executorch style: say where the value differs from upstream's default."""
    here = f"here: {kib(b.size)}"
    if b.role == Role.METHOD_POOL:
        return f"upstream executor_runner: {kib(UPSTREAM_METHOD_POOL)} method pool; {here}"
    if b.role == Role.SCRATCH:
        upstream = UPSTREAM_TEMP_POOL[plan.mode]
        return f"upstream executor_runner: {kib(upstream)} temp pool in {plan.mode.value}; {here}"
    if b.role == Role.FAST_SCRATCH:
        return f"upstream executor_runner: {kib(UPSTREAM_FAST_SCRATCH)} whatever the model; {here}"
    if b.role == Role.NETWORK and plan.board.region(b.region).kind != RegionKind.DRAM:
        return f"upstream executor_runner: the model in DDR in every mode; here: {b.region}"
    return ""
