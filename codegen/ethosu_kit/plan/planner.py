"""Plan the memory: place every logical buffer of a model in a board region, sized from the model.

Stage 2 of the data flow: `plan_memory(model, board, mode, options) -> MemoryPlan`.
Pure: the only I/O is reading the installed Vela's `Arm/vela.ini` (cached) to learn a
memory mode's `arena_cache_size`. It refuses, before anything is written, what cannot
work (`PlanError`) and what does not fit (`FitError`), each in one line with the way out.

Where each buffer goes (docs/ARCHITECTURE.md has the names): an NPU buffer only where
the port its register picks reaches (QCONFIG and REGIONCFG_0: the network,
REGIONCFG_1: the temp pool, REGIONCFG_2: the fast scratch; a region's `npu_port`), and
on the side of that port the mode puts it:

| buffer       | Sram_Only        | Shared_Sram           | Dedicated_Sram        |
|--------------|------------------|-----------------------|-----------------------|
| network      | Vela's SRAM      | what the port reaches: non-volatile (flash, MRAM), then RAM |
| temp_pool    | Vela's SRAM      | Vela's SRAM           | RAM the port reaches  |
| fast_scratch | -                | -                     | Vela's SRAM           |
| self-test vectors, compiled-in inputs: beside the network when it is non-volatile |
| everything else: CPU-only RAM, the fastest that fits: DTCM, on-chip RAM, then DRAM |

"Vela's SRAM" is RAM of kind "sram" (the Ethos-U SRAM, whatever bus it sits on).
Regions are chosen by their attributes (kind, npu_port, cpu, writable, volatile,
loadable, executable, size), never by name: a custom board works the same way.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ethosu_kit.board.model import Board, MemoryRegion, NpuPort
from ethosu_kit.core.errors import PlanError
from ethosu_kit.core.sizes import align_up, size_text
from ethosu_kit.npu.facts import (
    NPU_ALIGN,
    VELA_REGION_FAST_SCRATCH,
    VELA_REGION_SCRATCH,
    MemoryMode,
)
from ethosu_kit.plan.apps import App
from ethosu_kit.plan.boot import cold_boot_note, copied_code
from ethosu_kit.plan.external import external_wants
from ethosu_kit.plan.fill import replay, reserves
from ethosu_kit.plan.placer import MIN_POOL, Placer, Want
from ethosu_kit.plan.regions import (
    NpuView,
    code_rank,
    cpu_ram_rank,
    is_cpu_ram,
    npu_far_ram,
    npu_sram,
    select,
    unreachable,
)
from ethosu_kit.plan.runner_pools import runner_pools
from ethosu_kit.plan.types import (
    Buffer,
    MemoryPlan,
    NpuLibrary,
    PlanOptions,
    Role,
)
from ethosu_kit.plan.validate import checked_mode
from ethosu_kit.plan.wants import input_data_wants, network_want, selftest_vectors_want
from ethosu_kit.pte.model import MethodInfo, ModelInfo
from ethosu_kit.pte.vela_config import fast_scratch_size

KIB = 1024

# The temp allocator is reset after every instruction, so its size is the largest
# single need, not a sum: the biggest delegate's scratch_size (allocated 16-aligned at
# the start of a freshly reset, 16-aligned pool) or the biggest CPU kernel's temp
# memory, plus one alignment step of slack.
TEMP_ALIGN_SLACK = NPU_ALIGN
# CPU kernels that take temp memory (KernelRuntimeContext::allocate_temp). In
# ExecuTorch's portable library only topk does: 16 B per element of the sorted
# dimension; the margin covers 1024 elements. Other kernels need none.
TEMP_USING_KERNELS: dict[str, int] = {"aten::topk": 16 * KIB}
# The stack's base alignment (generated as KIT_STACK_ALIGN): on an Armv7-M core with an
# MPU the kit's start-up makes the stack's lowest KIT_STACK_ALIGN bytes a no-access MPU
# region, its overflow guard (sdk/src/startup.c), and a PMSAv7 region is at least 32 B
# and aligned to its size. 8 would do for the AAPCS.
STACK_ALIGN = 32


def cpu_temp_need(model: ModelInfo) -> tuple[int, str]:
    """The largest temp-memory margin of the CPU kernels the program calls."""
    needs = [
        (margin, op)
        for op in model.cpu_operators
        for prefix, margin in TEMP_USING_KERNELS.items()
        if op.split(".")[0] == prefix
    ]
    if not needs:
        return 0, "no CPU kernel that takes temp memory"
    margin, op = max(needs)
    return margin, f"{op} takes temp memory: margin {margin}"


class _Planner(Placer):
    def __init__(self, model: ModelInfo, board: Board, mode: MemoryMode, options: PlanOptions):
        super().__init__(board, mode)
        self.model = model
        self.options = options
        self.notes: list[str] = []
        self.fast_unbounded = False  # Vela set no arena_cache_size: fast scratch takes the rest

    # the plan -------------------------------------------------------------------------

    def run(self) -> MemoryPlan:
        model, board, mode = self.model, self.board, self.mode
        spec = model.compile_spec
        method = _main_method(model)
        cpu_ram = select(board, is_cpu_ram, cpu_ram_rank)
        view = NpuView.of(board, spec.accelerator.kind, mode) if spec is not None else None

        # 1. NPU buffers first: where the mode and the ports the registers pick allow.
        fasts, beside = self._npu_buffers(view, cpu_ram)
        for want in input_data_wants(method, self.options, board, beside):
            self.place(want)

        # 2. The firmware's own: stack in the fastest RAM, then code/data reserves.
        stack_regions = cpu_ram
        self.place(
            Want(
                name="stack",
                role=Role.STACK,
                size=self.options.stack,
                align=STACK_ALIGN,
                candidates=stack_regions,
                why=self.options.stack_why or f"--stack {self.options.stack} ({self._whose(0)})",
                hint="pass a smaller --stack, or use a board with more on-chip RAM",
            )
        )
        app = self.options.app
        code_size, data_size = reserves(self.options)
        code_regions = select(board, lambda r: r.executable and r.loadable and r.cpu, code_rank)
        code_load: MemoryRegion | None = None
        if board.code_copied:
            code_region, code_load, code_regions = copied_code(self, code_size, self.options)
        else:
            code_region = self.reserve(code_regions, "code (reserve)", code_size)
        data_region = self.reserve(cpu_ram, "data (reserve)", data_size)
        self.place(
            Want(
                name="heap",
                role=Role.HEAP,
                size=self.options.heap,
                align=8,
                candidates=cpu_ram,
                why=self.options.heap_why or f"--heap {self.options.heap} ({self._whose(1)})",
                hint="pass a smaller --heap, or use a board with more on-chip RAM",
            )
        )

        # 3. CPU buffers, hottest first: planned activations, IO, then the method pool.
        if app.runner_pools:
            self._cpu_pools(method, cpu_ram)
        else:
            self.notes.append(
                f"app {app}: no ExecuTorch runner pools (planned buffers, IO copies, method "
                "pool); gen --app executor_runner plans them"
            )

        if self.options.npu == NpuLibrary.VIRTUAL and self.options.vnpu_workspace is not None:
            size = max(MIN_POOL, align_up(self.options.vnpu_workspace, NPU_ALIGN))
            self.place_cpu(
                "vnpu_workspace",
                Role.VNPU_WORKSPACE,
                size,
                cpu_ram,
                f"the virtual NPU's working memory for this model's streams, measured on "
                f"the host: {self.options.vnpu_workspace} B, rounded to {NPU_ALIGN} = {size}",
                hint="the virtual NPU's working memory does not fit: use the Ethos-U driver on "
                "real hardware, or a board with more RAM",
            )

        # 4. A fast scratch with no bound from Vela takes the NPU SRAM that is left.
        for fast in fasts:
            if not (self.fast_unbounded and fast.candidates):
                continue
            region = fast.candidates[0]
            size = self.fill.free(region, NPU_ALIGN) // NPU_ALIGN * NPU_ALIGN
            self._commit(
                replace(fast, size=size, why=f"{fast.why}: {size} B free in {region.name}"),
                region,
                None,
            )

        # Code and data: placed by the plan, sized by the linker.
        for name, role, region, size in (
            ("code", Role.CODE, code_region, code_size),
            ("data", Role.DATA, data_region, data_size),
        ):
            self.buffers.append(
                Buffer(
                    name=name,
                    role=role,
                    symbol="",
                    section=".text .rodata" if role == Role.CODE else ".data .bss",
                    region=region.name,
                    size=0,
                    align=8,
                    npu=False,
                    initialized=True,
                    load_region=code_load.name if role == Role.CODE and code_load else None,
                    allowed_regions=tuple(
                        r.name for r in (code_regions if role == Role.CODE else cpu_ram)
                    ),
                    why=f"sized by the linker; {size} B kept free in {region.name} "
                    + (
                        "(--code-reserve)"
                        if role == Role.CODE and self.options.code_reserve is not None
                        else f"(estimate for app {app})"
                    ),
                )
            )

        if board.cold_boot:
            self.notes.append(
                cold_boot_note(
                    board,
                    code_region,
                    data_region,
                    self.buffers,
                    code_load=code_load,
                    code_size=code_size,
                )
            )
        plan = MemoryPlan(
            board=board,
            mode=mode,
            accelerator=spec.accelerator if spec else None,
            model_path=model.path,
            model_sha256=model.sha256,
            buffers=tuple(self.buffers),
            options=self.options,
            notes=tuple(self.notes),
            **self._programs(),
        )
        # The report and the QEMU stand-in check read the fill back with replay(plan):
        # one accounting, so it must be the one the planner just decided with.
        if replay(plan).used != self.fill.used:
            raise AssertionError(f"plan.fill.replay disagrees with the planner: {self.fill.used}")
        return plan

    def _npu_buffers(
        self, view: NpuView | None, cpu_ram: list[MemoryRegion]
    ) -> tuple[list[Want], MemoryRegion]:
        """The temp pool, the fast scratch, the network and the self-test vectors: the
        fast scratch left to size from what is free (none, or the one unbounded), and the
        network's region (read-only data goes beside it)."""
        model, board, mode = self.model, self.board, self.mode
        self._temp_pool(view, cpu_ram)
        fast = self._fast_scratch_want(view) if mode == MemoryMode.DEDICATED_SRAM and view else None
        if fast is not None and not self.fast_unbounded and fast.size > 0:
            self.place(fast)
        network = self.place(network_want(model, board, mode, view))
        for want in external_wants(self.options.external_data, board, mode, view):
            self.place(want)
        beside = board.region(network.region)
        if self.options.app == App.SELFTEST and view is not None:
            self.place(selftest_vectors_want(model, board, beside))
        return ([fast] if fast is not None else []), beside

    def _cpu_pools(self, method: MethodInfo, cpu_ram: list[MemoryRegion]) -> None:
        runner_pools(self, method, cpu_ram, self.options)

    def _programs(self) -> dict[str, Any]:
        """The MemoryPlan fields of an image of several programs: none for one."""
        return {}

    def _whose(self, which: int) -> str:
        """Where the stack (0) or heap (1) size came from, for the plan's why."""
        app = self.options.app
        if (self.options.stack, self.options.heap)[which] == app.stack_heap[which]:
            return f"the default for app {app}; --stack/--heap auto sizes it from a measurement"
        return "option"

    def _temp_pool(self, view: NpuView | None, cpu_ram: list[MemoryRegion]) -> None:
        model, mode = self.model, self.mode
        peak = model.peak_scratch
        cpu_need, cpu_why = cpu_temp_need(model)
        if view is None:
            size = max(MIN_POOL, align_up(cpu_need, NPU_ALIGN))
            why = f"no Ethos-U delegate; {cpu_why}: {size}"
            self.place_cpu("temp_pool", Role.SCRATCH, size, cpu_ram, why)
            return
        scratches = [d.vela.scratch_size for d in model.ethosu_delegates if d.vela]
        size = max(align_up(peak, NPU_ALIGN), align_up(cpu_need, NPU_ALIGN)) + TEMP_ALIGN_SLACK
        why = (
            f"max(peak Ethos-U scratch {peak} (largest of {len(scratches)} delegate(s): "
            f"{', '.join(str(s) for s in scratches)}), CPU temp {cpu_need} ({cpu_why})) "
            f"rounded to {NPU_ALIGN} + align slack {TEMP_ALIGN_SLACK} = {size}; one need at a "
            "time: the temp allocator is reset after every instruction"
        )
        port = view.region(VELA_REGION_SCRATCH)
        if mode == MemoryMode.DEDICATED_SRAM:
            regions = npu_far_ram(self.board, port)
            hint = "use a board with more RAM on the NPU's external port"
        else:
            regions = npu_sram(self.board, port)
            hint = (
                f"the NPU scratch (Vela's peak SRAM use, {peak:,} B = {size_text(peak)}) "
                "must be in the NPU's SRAM "
                f"in {mode.value}: lower the model for Dedicated_Sram on an Ethos-U65/U85 "
                "(scratch on the external port), or with Vela --optimise Size, or use a "
                "board with more SRAM (`ethosu-kit boards NAME` shows a board's regions)"
            )
        self.place(self._npu_scratch(view, VELA_REGION_SCRATCH, "temp_pool", size, regions,
                                     why=why, hint=hint))  # fmt: skip

    def _npu_scratch(self, view: NpuView, index: int, name: str, size: int,
                     candidates: list[MemoryRegion], *, why: str, hint: str) -> Want:  # fmt: skip
        """The NPU's working memory for Vela region `index` (the scratch or the fast
        scratch): NPU-only, no initial contents, only where the NPU reaches; with no
        candidate region, what the board lacks."""
        role = Role.FAST_SCRATCH if index == VELA_REGION_FAST_SCRATCH else Role.SCRATCH
        return Want(name=name, role=role, size=size, candidates=candidates, npu=True, why=why,
                    hint=hint, lacking=self._lacking(view, index))  # fmt: skip

    def _lacking(self, view: NpuView, index: int) -> str:
        """Why an NPU scratch has no region: its port, and the RAM that is off it."""
        port = view.region(index)
        sram_side = self._sram_side(index)
        side = 'Vela\'s SRAM (kind "sram") ' if sram_side else ""
        near = unreachable(self.board, port, is_cpu_ram)
        # the register value with the other port (same AXI counter): what would serve
        other = NpuPort.EXT if port == NpuPort.SRAM else NpuPort.SRAM
        there = (npu_sram if sram_side else npu_far_ram)(self.board, other)
        derived = (
            f"; REGIONCFG_{index} = {view.regioncfg[index] ^ 2} would send it over the "
            f'"{other}" port, which reaches {", ".join(r.name for r in there)}'
            if there
            else ""
        )
        return (
            f'the NPU reaches it over its "{port}" port ({view.register_text(index)}), '
            f"in {side}RAM{near}{derived}"
        )

    def _sram_side(self, index: int) -> bool:
        """Is Vela region `index` in what the mode calls SRAM?"""
        if index == VELA_REGION_FAST_SCRATCH or self.mode == MemoryMode.SRAM_ONLY:
            return True
        return index == VELA_REGION_SCRATCH and self.mode == MemoryMode.SHARED_SRAM

    def _fast_scratch_want(self, view: NpuView) -> Want:
        fs = fast_scratch_size(self.model, self.options.fast_scratch)
        size = 0 if fs.size is None else align_up(fs.size, NPU_ALIGN)
        if fs.size is None:
            self.fast_unbounded = True
            self.notes.append(
                f"fast scratch: {fs.why}; pass --fast-scratch N (Vela's 'Total SRAM used') "
                "to give it less"
            )
        else:
            self.notes.append(f"fast scratch {fs.size} B from {fs.why}")
        why = f"Dedicated_Sram fast scratch (NPU-only, Vela region 2) = {fs.why}" + (
            f" = {size}" if fs.size is not None else ""
        )
        candidates = npu_sram(self.board, view.region(VELA_REGION_FAST_SCRATCH))
        hint = (
            "lower with a smaller --arena-cache-size (e.g. memory mode Dedicated_Sram_256KB), "
            "pass --fast-scratch, or use a board with more SRAM"
        )
        return self._npu_scratch(
            view, VELA_REGION_FAST_SCRATCH, "fast_scratch", size, candidates, why=why, hint=hint
        )


def _main_method(model: ModelInfo) -> MethodInfo:
    for m in model.methods:
        if m.name == "forward":
            return m
    if not model.methods:
        raise PlanError(f"{model.path}: the program has no method to run")
    return model.methods[0]


def plan_memory(
    model: ModelInfo, board: Board, mode: MemoryMode | None, options: PlanOptions | None = None
) -> MemoryPlan:
    """Place every buffer of `model` on `board` in `mode` (default: the pte's own mode)."""
    options = options or PlanOptions()
    mode, notes = checked_mode(model, board, mode, options)
    planner = _Planner(model, board, mode, options)
    planner.notes.extend(notes)
    if len(model.methods) > 1:
        planner.notes.append(
            f"{len(model.methods)} methods: planned for {_main_method(model).name}"
        )
    return planner.run()
