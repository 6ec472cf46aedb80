"""What each buffer the model brings needs and where it may go, best region first:
the network (the .pte), the self-test vectors and the compiled-in inputs. Pure: the
planner places them.
"""

from __future__ import annotations

from collections.abc import Callable

from ethosu_kit.board.model import Board, MemoryRegion, NpuPort
from ethosu_kit.npu.facts import VELA_REGION_WEIGHTS, MemoryMode
from ethosu_kit.plan.placer import Want
from ethosu_kit.plan.regions import (
    NpuView,
    const_data_regions,
    network_regions,
    npu_sram,
    unreachable,
)
from ethosu_kit.plan.types import PlanOptions, Role, indexed_name
from ethosu_kit.pte.model import MethodInfo, ModelInfo
from ethosu_kit.selftest.vectors import vectors_size


def network_want(model: ModelInfo, board: Board, mode: MemoryMode, view: NpuView | None) -> Want:
    """The .pte itself (`view` None: a CPU-only program). Its command stream is read
    over QCONFIG's port and its weights over REGIONCFG_0's: in Sram_Only from Vela's
    SRAM, else from memory those ports reach, non-volatile first (on-chip MRAM or
    flash as well as external flash), then RAM."""
    size = model.file_bytes
    base_why = f"the .pte, {size} B, incbin'd 16-aligned (command streams and weights in place)"
    if view is None:
        regions = network_regions(board, None)
        why = f"{mode.value}: {base_why}; non-volatile first, else RAM"
        lacking = ""
    else:
        ports = (view.command, view.region(VELA_REGION_WEIGHTS))
        port_text = f"{view.register_text(None)}, {view.register_text(VELA_REGION_WEIGHTS)}"
        if mode == MemoryMode.SRAM_ONLY:
            regions = [r for r in npu_sram(board, ports[1]) if r.npu_reaches(ports[0])]
            why = f"Sram_Only: {base_why} in the NPU's SRAM ({port_text})"
        else:
            regions = network_regions(board, ports)
            why = f"{mode.value}: {base_why}, read over {port_text}; non-volatile first"
        lacking = _lacking(board, ports, port_text, lambda r: r.cpu and r.loadable)
    if mode == MemoryMode.SRAM_ONLY and view is not None:
        hint = (
            "the network does not fit next to the scratch in SRAM: lower for "
            "Shared_Sram (network in flash/DRAM), with Vela --optimise Size, or "
            "use a board with more SRAM"
        )
    else:
        hint = (
            "the .pte is larger than the memory the NPU reads it from: lower it with Vela "
            "--optimise Size or use a bigger board"
        )
    return _with_contents(
        "network", Role.NETWORK, size, regions, why=why, hint=hint, npu=view is not None,
        lacking=lacking,
    )  # fmt: skip


def _lacking(
    board: Board, ports: tuple[NpuPort, ...], port_text: str, fits: Callable[[MemoryRegion], bool]
) -> str:
    """What an NPU buffer with no candidate lacks: the ports, and the regions off them."""
    names = " and ".join(dict.fromkeys(f'"{p}"' for p in ports))
    near = "".join(dict.fromkeys(unreachable(board, p, fits) for p in ports))
    return f"the NPU reaches it over its {names} port ({port_text}){near}"


def selftest_vectors_want(
    model: ModelInfo, board: Board, beside: MemoryRegion | None = None
) -> Want:
    """The self-test's inputs and expected outputs, which the CPU copies and compares."""
    size = vectors_size(model)
    return _with_contents(
        "selftest_vectors",
        Role.VECTORS,
        size,
        const_data_regions(board, beside),
        why=f"NPU self-test vectors: every Ethos-U delegate's inputs and expected outputs, "
        f"16-aligned = {size} B; read-only, beside the network when that is non-volatile",
        hint="the self-test vectors do not fit: use a board with more flash or DRAM",
    )


def input_data_wants(
    method: MethodInfo, options: PlanOptions, board: Board, beside: MemoryRegion | None = None
) -> list[Want]:
    """Method inputs compiled into the image (gen --inputs), read-only."""
    wants = []
    for i, size in enumerate(options.input_data):
        if size <= 0:
            continue
        t = method.inputs[i] if i < len(method.inputs) else None
        what = f"{t.dtype}{list(t.shape)}" if t else "?"
        why = (
            f"input {i} of {method.name} compiled in (gen --inputs): {what} = {size} B; "
            "read-only, beside the network when that is non-volatile"
        )
        wants.append(
            _with_contents(
                indexed_name(Role.INPUT_DATA, i),
                Role.INPUT_DATA,
                size,
                const_data_regions(board, beside),
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
    lacking: str = "",
) -> Want:
    """A buffer the image brings its contents for (the network, the self-test vectors,
    compiled-in inputs): the candidate regions say where, and whether it needs a load copy."""
    return Want(
        name=name, role=role, size=size, candidates=candidates, why=why, hint=hint,
        npu=npu, initialized=True, lacking=lacking,
    )  # fmt: skip
