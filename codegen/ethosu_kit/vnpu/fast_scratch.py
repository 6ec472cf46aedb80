"""How much of the Dedicated_Sram fast scratch (region 2) the command streams touch.

`gen --fast-scratch N` overrides the size the pte's Vela config gives. Vela placed the
streams' region-2 tensors within its own `arena_cache_size`, so a smaller N was accepted
by the plan and failed only when the firmware ran (the virtual NPU: `OFM tile spans
bytes [0, 768) outside its region of 16 bytes`; the real one: writes past the SRAM it
was given). The .pte does not record Vela's "Total SRAM used".

Every access the virtual NPU makes is checked against its region's size, and the
Ethos-U's addresses come from the command stream's registers, not from the data. So a
run of each delegate on zero inputs with region 2 of N bytes fails exactly when the
stream touches bytes past N (a data-dependent access, e.g. an Ethos-U85 gather, could
only need more), and the smallest N that runs is what the stream needs. A failure that
a generous region 2 does not cure (an operator the virtual NPU refuses, no host
compiler to build it) is not about region 2: then nothing is said, as before.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ethosu_kit.core.errors import FitError, KitError
from ethosu_kit.npu.facts import NPU_ALIGN, MemoryMode
from ethosu_kit.pte import read_vela_streams
from ethosu_kit.pte.vela_config import fast_scratch_size
from ethosu_kit.vnpu.delegate import (
    UNBOUNDED_FAST_SCRATCH,
    fast_scratch_bytes,
    run_delegate,
    tensor_dtype,
    tensor_shape,
)

if TYPE_CHECKING:
    from pathlib import Path

    from ethosu_kit.pte import VelaBlocks
    from ethosu_kit.pte.model import ModelInfo


def runs_with(blocks: VelaBlocks, size: int) -> bool:
    """Does the delegate run on zero inputs with a region 2 of `size` bytes?"""
    zeros = [np.zeros(tensor_shape(t), dtype=tensor_dtype(t)) for t in blocks.inputs]
    try:
        run_delegate(blocks, zeros, fast_scratch_size=size)
    except KitError:
        return False
    return True


def region2_need(blocks: VelaBlocks, given: int, ceiling: int) -> int | None:
    """The bytes of region 2 the delegate's stream touches when more than `given`, else
    None; None too when it does not run with `ceiling` bytes either (not region 2's
    fault, or the host cannot run it)."""
    if given >= ceiling or runs_with(blocks, given) or not runs_with(blocks, ceiling):
        return None
    low, high = given, ceiling  # fails at low, runs at high: monotone in the size
    while high - low > 1:
        middle = (low + high) // 2
        if runs_with(blocks, middle):
            high = middle
        else:
            low = middle
    return high


def check_fast_scratch(
    pte: Path, model: ModelInfo, given: int, streams: Sequence[VelaBlocks] | None = None
) -> None:
    """FitError (exit 3) when `--fast-scratch given` is less than a delegate's stream
    touches of region 2; silent when it fits or the host cannot tell."""
    spec = model.compile_spec
    if spec is None or spec.memory_mode != MemoryMode.DEDICATED_SRAM:
        return  # no region 2 in the streams
    blocks = list(streams) if streams is not None else read_vela_streams(pte)
    # what Vela placed region 2 within (the pte's own size), or the largest NPU SRAM
    ceiling = max(fast_scratch_bytes(model), UNBOUNDED_FAST_SCRATCH)
    planned = (given + NPU_ALIGN - 1) // NPU_ALIGN * NPU_ALIGN  # what the plan gives region 2
    for k, b in enumerate(blocks):
        need = region2_need(b, planned, ceiling)
        if need is not None:
            own = fast_scratch_size(model).why
            raise FitError(
                f"{pte}: --fast-scratch {given}: the Dedicated_Sram fast scratch (region 2) "
                f"is too small: Ethos-U delegate {k}'s command stream uses {need:,} bytes of "
                f"it (measured on the virtual NPU), --fast-scratch gives {given:,} "
                f"(short by {need - given:,})",
                hint=f"pass --fast-scratch {need} or more, or leave it out (then: {own})",
            )
