"""What a model and a board must agree on before anything is placed: an Ethos-U
delegate (or --allow-cpu-only), the memory mode (the pte's own; the NPU kind runs it),
the board's NPU configuration and register settings, and sound Vela IO records. Each
refusal is one `PlanError` line with the way out.
"""

from __future__ import annotations

from pathlib import Path

from ethosu_kit.board.loader import builtin_boards
from ethosu_kit.board.model import Board
from ethosu_kit.core.errors import PlanError
from ethosu_kit.npu.facts import MemoryMode, mode_refusal
from ethosu_kit.plan.types import PlanOptions
from ethosu_kit.pte.model import ModelInfo


def checked_mode(
    model: ModelInfo, board: Board, mode: MemoryMode | None, options: PlanOptions
) -> tuple[MemoryMode, list[str]]:
    """The memory mode to plan `model` on `board` in (`mode`, else the pte's own), and
    the notes the plan keeps about it; PlanError when they cannot work together."""
    spec = model.compile_spec
    name = Path(model.path).name or model.path
    notes: list[str] = []

    if spec is None:
        if not options.allow_cpu_only:
            raise PlanError(
                f"{name}: no Ethos-U delegate in the program (nothing would run on the NPU)",
                hint="lower it with the EthosUPartitioner, or pass --allow-cpu-only",
            )
        if mode is None:
            mode = MemoryMode.SHARED_SRAM
            notes.append("CPU-only program: no memory mode in the pte, planned as Shared_Sram")
        else:
            notes.append(f"CPU-only program: mode {mode.value} only decides where the network goes")
    else:
        kind, macs = spec.accelerator.kind, spec.accelerator.macs
        wanted = mode or spec.memory_mode
        refusal = mode_refusal(kind, wanted)
        if refusal:
            raise PlanError(
                f"{name}: {refusal}; the model is compiled for {spec.accelerator}",
                hint=f"use one of the modes {kind} runs: "
                + ", ".join(m.value for m in MemoryMode if not mode_refusal(kind, m)),
            )
        if mode is not None and mode != spec.memory_mode:
            raise PlanError(
                f"{name}: compiled for {spec.memory_mode_name} (Vela --memory-mode), "
                f"not {mode.value}: the command stream's memory layout is fixed at compile time",
                hint=f"drop --mode to use the pte's own {spec.memory_mode.value}, or lower the "
                f"model again with memory_mode={mode.value}",
            )
        if mode is None:
            notes.append(f"mode {spec.memory_mode.value}: the pte's own ({spec.memory_mode_name})")
        mode = spec.memory_mode
        if not board.npu.supports(kind, macs):
            can = ", ".join(
                f"{k}-{'/'.join(str(m) for m in board.npu.macs.get(k, ()))}"
                for k in board.npu.kinds
            )
            raise PlanError(
                f"{name}: compiled for {spec.accelerator}, but board {board.name}'s NPU can "
                f"only be {can}",
                hint=_board_hint(kind, macs) + f", or lower the model for one of {can}",
            )
        if (kind, mode.value) not in board.npu.registers:
            raise PlanError(
                f"{board.source}: board {board.name} has no NPU register settings for "
                f"{kind} in {mode.value} (npu.registers.{kind}.{mode.value})",
                hint="add them to the board file (QCONFIG and REGIONCFG_0..7 for the mode)",
            )

    _check_vela_io(model, name)
    return mode, notes


def _check_vela_io(model: ModelInfo, name: str) -> None:
    """Refuse a delegate whose IO records lie outside its scratch arena: the plan sizes
    the arena from scratch_size, so the NPU would read and write memory it was not given."""
    for m in model.methods:
        for i, d in enumerate(m.delegates):
            if d.vela is not None and d.vela.io_problems:
                problems = d.vela.io_problems
                more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
                raise PlanError(
                    f"{name}: method '{m.name}' delegate {i}: {problems[0]}{more}",
                    hint="the Vela IO records are corrupt or hand-edited: lower the model again "
                    "(ethosu-kit inspect lists every bad record)",
                )


def _board_hint(kind: str, macs: int) -> str:
    fitting = [b.name for b in builtin_boards() if b.npu.supports(kind, macs)]
    if fitting:
        return f"use --board {fitting[0]} (has {kind}-{macs})"
    return f"use a board whose NPU is {kind}-{macs}"
