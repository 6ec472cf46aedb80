"""What each buffer the model brings needs and where it may go, best region first:
the network (the .pte), the self-test vectors and the compiled-in inputs. Pure: the
planner places them.
"""

from __future__ import annotations

from ethosu_kit.board.model import Board, MemoryRegion
from ethosu_kit.npu.facts import MemoryMode
from ethosu_kit.plan.placer import Want
from ethosu_kit.plan.regions import const_data_regions, is_external, select
from ethosu_kit.plan.types import PlanOptions, Role, indexed_name
from ethosu_kit.pte.model import MethodInfo, ModelInfo
from ethosu_kit.selftest.vectors import vectors_size


def network_want(
    model: ModelInfo, board: Board, mode: MemoryMode, npu_sram: list[MemoryRegion], has_npu: bool
) -> Want:
    """The .pte itself: in on-chip SRAM for Sram_Only, else external (flash first)."""
    size = model.file_bytes
    base_why = f"the .pte, {size} B, incbin'd 16-aligned (command streams and weights in place)"
    if mode == MemoryMode.SRAM_ONLY and has_npu:
        regions = npu_sram
        why = f"Sram_Only: {base_why} in on-chip SRAM"
        hint = (
            "the network does not fit next to the scratch in SRAM: lower for "
            "Shared_Sram (network in flash/DRAM), with Vela --optimise Size, or "
            "use a board with more SRAM"
        )
    else:

        def ok(r: MemoryRegion) -> bool:
            return is_external(r) and r.cpu and r.loadable and (r.npu or not has_npu)

        # flash (non-volatile) first: the network survives reset and leaves DRAM free
        regions = select(board, ok, lambda r: 0 if not r.volatile else 1)
        why = f"{mode.value}: {base_why}, external: flash if it fits, else DRAM"
        hint = (
            "the .pte is larger than the board's external memory: lower it with Vela "
            "--optimise Size or use a bigger board"
        )
    return _with_contents("network", Role.NETWORK, size, regions, why=why, hint=hint, npu=has_npu)


def selftest_vectors_want(model: ModelInfo, board: Board) -> Want:
    """The self-test's inputs and expected outputs, which the CPU copies and compares."""
    size = vectors_size(model)
    return _with_contents(
        "selftest_vectors",
        Role.VECTORS,
        size,
        const_data_regions(board),
        why=f"NPU self-test vectors: every Ethos-U delegate's inputs and expected outputs, "
        f"16-aligned = {size} B; read-only, flash first",
        hint="the self-test vectors do not fit: use a board with more flash or DRAM",
    )


def input_data_wants(method: MethodInfo, options: PlanOptions, board: Board) -> list[Want]:
    """Method inputs compiled into the image (gen --inputs), read-only."""
    wants = []
    for i, size in enumerate(options.input_data):
        if size <= 0:
            continue
        t = method.inputs[i] if i < len(method.inputs) else None
        what = f"{t.dtype}{list(t.shape)}" if t else "?"
        why = (
            f"input {i} of {method.name} compiled in (gen --inputs): {what} = {size} B; "
            "read-only, flash first"
        )
        wants.append(
            _with_contents(
                indexed_name(Role.INPUT_DATA, i),
                Role.INPUT_DATA,
                size,
                const_data_regions(board),
                why=why,
                hint="the compiled-in inputs do not fit: pass them at run time "
                "(ethosu-kit run --inputs) instead",
            )
        )
    return wants


def _with_contents(
    name: str,
    role: Role,
    size: int,
    candidates: list[MemoryRegion],
    *,
    why: str,
    hint: str,
    npu: bool = False,
) -> Want:
    """A buffer the image brings its contents for (the network, the self-test vectors,
    compiled-in inputs): the candidate regions say where, and whether it needs a load copy."""
    return Want(
        name=name, role=role, size=size, candidates=candidates, why=why, hint=hint,
        npu=npu, initialized=True,
    )  # fmt: skip
