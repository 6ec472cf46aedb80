"""Plan an image of several programs (issue 18, docs/multi-model.md).

`plan_image(programs, board, mode, options) -> MemoryPlan`: the single-program planner's
placement order, with each buffer either a program's own or shared by a lane.

What lives only during one execute is shared between the programs of a lane (programs
that never run at the same time, `ProgramSet.lanes`), sized for the largest need, not
the sum:

- the temp pool, which holds each delegate's Ethos-U scratch (reset per instruction);
- the Dedicated_Sram fast scratch (the NPU's staging SRAM, used inside one invoke);
- the memory-planned activation arenas (`planned_<mem_id>`), which hold nothing between
  executes: the inputs are written before and the outputs read after each execute, so
  a program's outputs must be read before another program of its lane runs.

What persists is each program's own: its network (the .pte), its method pool (the
loaded methods' runtime structures), its unplanned IO copies, and the planned arenas of
a program that keeps state in them between executes (a mutable buffer, which
ExecuTorch writes back with `aten::copy_`). The methods of one program share its
arenas (one method runs at a time; a program exported with arenas shared across
methods needs exactly that). Programs declared concurrent are in different lanes, so
they share nothing.

A buffer of lane 0 keeps the single-program name (`temp_pool`, `planned_1`); lane k's
is `lane<k>_temp_pool`; a program's own is `<program>_network`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ethosu_kit.board.model import Board, MemoryRegion
from ethosu_kit.core.errors import PlanError
from ethosu_kit.core.sizes import align_up
from ethosu_kit.npu.facts import (
    NPU_ALIGN,
    VELA_REGION_FAST_SCRATCH,
    VELA_REGION_SCRATCH,
    MemoryMode,
)
from ethosu_kit.plan.apps import App, method_pool_size
from ethosu_kit.plan.placer import MIN_POOL, Want
from ethosu_kit.plan.planner import (
    TEMP_ALIGN_SLACK,
    _Planner,
    cpu_temp_need,
)
from ethosu_kit.plan.regions import NpuView, npu_far_ram, npu_sram
from ethosu_kit.plan.types import (
    MemoryPlan,
    OwnerNeed,
    PlanOptions,
    ProgramEntry,
    Role,
    Sharing,
    indexed_name,
)
from ethosu_kit.plan.validate import checked_mode
from ethosu_kit.plan.wants import network_want, selftest_vectors_want
from ethosu_kit.pte.model import MethodInfo, ModelInfo
from ethosu_kit.pte.programs import Program, ProgramSet
from ethosu_kit.pte.vela_config import fast_scratch_size
from ethosu_kit.selftest.vectors import vectors_size

# ExecuTorch writes a mutable buffer (state kept between executes) back with copy_: a
# program that calls it keeps its planned arenas to itself.
STATE_OPERATORS = ("aten::copy_",)


def keeps_state(model: ModelInfo) -> bool:
    """Does the program keep state in its planned arenas between executes?"""
    return any(op.split(".")[0] in STATE_OPERATORS for op in model.cpu_operators)


def temp_need(model: ModelInfo) -> tuple[int, str]:
    """The temp pool one program needs alone, with the arithmetic."""
    cpu_need, cpu_why = cpu_temp_need(model)
    if model.compile_spec is None:
        size = max(MIN_POOL, align_up(cpu_need, NPU_ALIGN))
        return size, f"no Ethos-U delegate; {cpu_why}: {size}"
    peak = model.peak_scratch
    size = max(align_up(peak, NPU_ALIGN), align_up(cpu_need, NPU_ALIGN)) + TEMP_ALIGN_SLACK
    return size, f"peak Ethos-U scratch {peak}, CPU temp {cpu_need}: {size}"


def planned_arenas(model: ModelInfo) -> tuple[int, ...]:
    """Per mem_id, the largest of every method's arena: the methods share them."""
    count = max((len(m.planned_buffers) for m in model.methods), default=0)
    return tuple(
        max((m.planned_buffers[i] for m in model.methods if i < len(m.planned_buffers)), default=0)
        for i in range(count)
    )


def method_pool_need(model: ModelInfo) -> tuple[int, str]:
    """Every method loaded at once: the sum of their estimates, and the unplanned inputs
    of the methods after the first, which the runner stages there (the first's have
    buffers of their own)."""
    parts = [method_pool_size(m) for m in model.methods]
    if len(parts) == 1:
        return parts[0]
    staged = sum(
        align_up(t.nbytes, NPU_ALIGN) for m in model.methods[1:] for t in m.inputs if not t.planned
    )
    total = sum(size for size, _ in parts) + staged
    terms = "; ".join(f"{m.name}: {why}" for m, (_, why) in zip(model.methods, parts, strict=True))
    return total, (
        f"{len(parts)} methods loaded at once: {terms}; + {staged} B of the later methods' "
        f"unplanned inputs = {total}"
    )


def _lane_prefix(lane: int) -> str:
    return "" if lane == 0 else f"lane{lane}_"


class _ImagePlanner(_Planner):
    def __init__(self, programs: ProgramSet, board: Board, mode: MemoryMode, options: PlanOptions):
        with_npu = [p for p in programs.programs if p.model.compile_spec is not None]
        super().__init__((with_npu or list(programs.programs))[0].model, board, mode, options)
        self.set = programs
        self.lanes = programs.lanes()
        self.lane_of = {name: i for i, lane in enumerate(self.lanes) for name in lane}
        self.owners: dict[str, list[OwnerNeed]] = {}
        self.entries: dict[str, dict[str, Any]] = {
            p.name: {"planned": [], "inputs": [], "outputs": []} for p in programs.programs
        }

    def _lane_programs(self, lane: int) -> list[Program]:
        return [self.set.program(n) for n in self.lanes[lane]]

    def _own(self, buffer: str, program: str, need: int) -> None:
        self.owners.setdefault(buffer, []).append(OwnerNeed(program, need))

    # 1. per-execute NPU buffers per lane, then each program's network --------------

    def _npu_buffers(
        self, view: NpuView | None, cpu_ram: list[MemoryRegion]
    ) -> tuple[list[Want], MemoryRegion]:
        fasts: list[Want] = []
        for lane in range(len(self.lanes)):
            self._lane_temp_pool(lane, view, cpu_ram)
        if self.mode == MemoryMode.DEDICATED_SRAM and view is not None:
            for lane in range(len(self.lanes)):
                fast = self._lane_fast_scratch(lane, view)
                if fast is not None:
                    fasts.append(fast)
        beside: MemoryRegion | None = None
        for p in self.set.programs:
            want = network_want(p.model, self.board, self.mode, view)
            name = f"{p.name}_network"
            placed = self.place(replace(want, name=name, why=f"program {p.name}: {want.why}"))
            beside = beside or self.board.region(placed.region)
            self._own(name, p.name, p.model.file_bytes)
            self.entries[p.name]["network"] = name
        assert beside is not None
        if self.options.app == App.SELFTEST and view is not None:
            want = selftest_vectors_want(self.model, self.board, beside)
            size = sum(vectors_size(p.model) for p in self.set.programs)
            self.place(
                replace(
                    want,
                    size=size,
                    why=f"NPU self-test vectors of every program's Ethos-U delegates, "
                    f"16-aligned = {size} B; read-only, flash first",
                )
            )
        return fasts, beside

    def _lane_temp_pool(self, lane: int, view: NpuView | None, cpu_ram: list[MemoryRegion]) -> None:
        name = f"{_lane_prefix(lane)}temp_pool"
        needs = [(p, *temp_need(p.model)) for p in self._lane_programs(lane)]
        size = max(n for _, n, _ in needs)
        why = (
            "largest temp-pool need of the programs that never run at the same time ("
            + "; ".join(f"{p.name}: {w}" for p, _, w in needs)
            + f") = {size}; one execute at a time, and the pool is reset after every instruction"
        )
        for p, n, _ in needs:
            self._own(name, p.name, n)
            self.entries[p.name]["temp_pool"] = name
        if view is None:
            self.place_cpu(name, Role.SCRATCH, size, cpu_ram, why)
            return
        port = view.region(VELA_REGION_SCRATCH)
        if self.mode == MemoryMode.DEDICATED_SRAM:
            regions = npu_far_ram(self.board, port)
            hint = "use a board with more RAM on the NPU's external port"
        else:
            regions = npu_sram(self.board, port)
            hint = (
                "the largest NPU scratch of the programs must be in the NPU's SRAM: declare "
                "fewer programs concurrent, lower them with Vela --optimise Size, or use a "
                "board with more SRAM"
            )
        self.place(
            self._npu_scratch(view, VELA_REGION_SCRATCH, name, size, regions, why=why, hint=hint)
        )

    def _lane_fast_scratch(self, lane: int, view: NpuView) -> Want | None:
        name = f"{_lane_prefix(lane)}fast_scratch"
        sizes = [
            (p, fast_scratch_size(p.model, self.options.fast_scratch))
            for p in self._lane_programs(lane)
            if p.model.compile_spec is not None
        ]
        if not sizes:
            return None
        for p, _ in sizes:
            self.entries[p.name]["fast_scratch"] = name
        candidates = npu_sram(self.board, view.region(VELA_REGION_FAST_SCRATCH))
        if any(fs.size is None for _, fs in sizes):
            if len(self.lanes) > 1:
                raise PlanError(
                    "the fast scratch has no bound from Vela (no arena_cache_size) and "
                    f"{len(self.lanes)} groups of programs run at the same time, each with "
                    "its own fast scratch",
                    hint="pass --fast-scratch N (Vela's 'Total SRAM used' of the largest)",
                )
            self.fast_unbounded = True
            for p, _ in sizes:
                self._own(name, p.name, 0)
            why = f"Dedicated_Sram fast scratch (NPU-only, Vela region 2) = {sizes[0][1].why}"
            return self._npu_scratch(view, VELA_REGION_FAST_SCRATCH, name, 0, candidates,
                                     why=why, hint="pass --fast-scratch")  # fmt: skip
        size = max(align_up(fs.size or 0, NPU_ALIGN) for _, fs in sizes)
        for p, fs in sizes:
            self._own(name, p.name, align_up(fs.size or 0, NPU_ALIGN))
        why = (
            "Dedicated_Sram fast scratch (NPU-only, Vela region 2), largest of the programs "
            "that never run at the same time ("
            + "; ".join(f"{p.name}: {fs.why}" for p, fs in sizes)
            + f") = {size}"
        )
        hint = (
            "lower with a smaller --arena-cache-size, pass --fast-scratch, or use a board with "
            "more SRAM"
        )
        if size > 0:
            self.place(self._npu_scratch(view, VELA_REGION_FAST_SCRATCH, name, size, candidates,
                                         why=why, hint=hint))  # fmt: skip
        return None

    # 3. the runner's pools ------------------------------------------------------------

    def _cpu_pools(self, method: MethodInfo, cpu_ram: list[MemoryRegion]) -> None:
        for lane in range(len(self.lanes)):
            shared = [p for p in self._lane_programs(lane) if not keeps_state(p.model)]
            arenas = {p.name: planned_arenas(p.model) for p in shared}
            count = max((len(a) for a in arenas.values()), default=0)
            for i in range(1, count + 1):
                name = f"{_lane_prefix(lane)}{indexed_name(Role.PLANNED, i)}"
                needs = [(p, arenas[p.name][i - 1]) for p in shared if i <= len(arenas[p.name])]
                size = max(n for _, n in needs)
                why = (
                    f"mem_id {i}, shared by the programs that never run at the same time "
                    "(it holds nothing between executes): largest of "
                    + ", ".join(f"{p.name} {n}" for p, n in needs)
                    + f" = {size}"
                )
                self.place_cpu(name, Role.PLANNED, size, cpu_ram, why)
                for p, n in needs:
                    self._own(name, p.name, n)
                    self.entries[p.name]["planned"].append(name)
        for p in self.set.programs:
            if keeps_state(p.model):
                for i, size in enumerate(planned_arenas(p.model), start=1):
                    name = f"{p.name}_{indexed_name(Role.PLANNED, i)}"
                    why = (
                        f"mem_id {i} of program {p.name}, its own: it keeps state between "
                        f"executes (it calls {', '.join(STATE_OPERATORS)}) = {size}"
                    )
                    self.place_cpu(name, Role.PLANNED, size, cpu_ram, why)
                    self._own(name, p.name, size)
                    self.entries[p.name]["planned"].append(name)
            self._program_io(p, cpu_ram)
            pool, pool_why = method_pool_need(p.model)
            if self.options.method_pool is not None:
                pool = max(MIN_POOL, align_up(self.options.method_pool, NPU_ALIGN))
                pool_why = self.options.method_pool_why or f"--method-pool {pool} (option)"
            name = f"{p.name}_method_pool"
            self.place_cpu(name, Role.METHOD_POOL, pool, cpu_ram, f"program {p.name}: {pool_why}")
            self._own(name, p.name, pool)
            self.entries[p.name]["method_pool"] = name

    def _program_io(self, p: Program, cpu_ram: list[MemoryRegion]) -> None:
        """The unplanned inputs and outputs of the program's first method (the runner
        stages the others' in the method pool)."""
        method = p.model.methods[0]
        for kind, role, tensors in (
            ("input", Role.INPUT, method.inputs),
            ("output", Role.OUTPUT, method.outputs),
        ):
            names = []
            for i, t in enumerate(tensors):
                if t.planned or t.nbytes == 0:
                    names.append("")
                    continue
                name = f"{p.name}_{indexed_name(role, i)}"
                why = (
                    f"{kind} {i} of {p.name}.{method.name} (not memory-planned): "
                    f"{t.dtype}{list(t.shape)} = {t.nbytes} B"
                )
                self.place_cpu(name, role, t.nbytes, cpu_ram, why)
                self._own(name, p.name, t.nbytes)
                names.append(name)
            self.entries[p.name][f"{kind}s"] = names

    # the record ------------------------------------------------------------------------

    def _programs(self) -> dict[str, Any]:
        placed = {b.name for b in self.buffers}
        sharing = tuple(
            Sharing(name, tuple(owners)) for name, owners in self.owners.items() if name in placed
        )
        entries = []
        for p in self.set.programs:
            e = self.entries[p.name]
            entries.append(
                ProgramEntry(
                    name=p.name,
                    path=p.model.path,
                    sha256=p.model.sha256,
                    methods=tuple(m.name for m in p.model.methods),
                    network=e["network"],
                    temp_pool=e.get("temp_pool", ""),
                    fast_scratch=fast if (fast := e.get("fast_scratch", "")) in placed else "",
                    method_pool=e.get("method_pool", ""),
                    planned=tuple(e["planned"]),
                    inputs=tuple(e["inputs"]),
                    outputs=tuple(e["outputs"]),
                    lane=self.lane_of[p.name],
                    persistent=keeps_state(p.model),
                )
            )
        return {"programs": tuple(entries), "sharing": sharing}


def plan_image(
    programs: ProgramSet,
    board: Board,
    mode: MemoryMode | None,
    options: PlanOptions | None = None,
) -> MemoryPlan:
    """Place every buffer of every program on `board` (docs/multi-model.md)."""
    options = options or PlanOptions()
    if options.input_data:
        raise PlanError(
            "--inputs: an image of several programs has no compiled-in inputs",
            hint="pass them at run time: ethosu-kit run --program NAME --inputs x.npy",
        )
    notes: list[str] = []
    chosen = mode
    for p in programs.programs:
        m, n = checked_mode(p.model, board, mode, options)
        if chosen is None or p.model.compile_spec is not None:
            chosen = m
        notes.extend(f"{p.name}: {x}" for x in n)
    assert chosen is not None
    planner = _ImagePlanner(programs, board, chosen, options)
    planner.notes.extend(notes)
    lanes = planner.lanes
    planner.notes.append(
        f"{len(programs.programs)} programs in {len(lanes)} lane(s) of programs that never run "
        "at the same time: " + "; ".join(", ".join(lane) for lane in lanes)
    )
    plan = planner.run()
    return replace(
        plan,
        model_path=" ".join(p.model.path for p in programs.programs),
        model_sha256="",
    )
