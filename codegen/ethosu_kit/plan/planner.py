"""Plan the memory: place every logical buffer of a model in a board region, sized from the model.

Stage 2 of the data flow: `plan_memory(model, board, mode, options) -> MemoryPlan`.
Pure: the only I/O is reading the installed Vela's `Arm/vela.ini` (cached) to learn a
memory mode's `arena_cache_size`. It refuses, before anything is written, what cannot
work (`PlanError`) and what does not fit (`FitError`), each in one line with the way out.

Where each buffer goes (docs/ARCHITECTURE.md has the names):

| buffer       | Sram_Only        | Shared_Sram           | Dedicated_Sram        |
|--------------|------------------|-----------------------|-----------------------|
| network      | on-chip NPU SRAM | external: flash if it fits, else DRAM         |
| temp_pool    | on-chip NPU SRAM | on-chip NPU SRAM      | external DRAM         |
| fast_scratch | -                | -                     | on-chip NPU SRAM      |
| everything else: CPU-only RAM, the fastest that fits: DTCM, on-chip RAM, then DRAM |

Regions are chosen by their attributes (on_chip, npu, cpu, writable, volatile,
loadable, executable), never by name: a custom board works the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NoReturn

from ethosu_kit.board.loader import builtin_boards
from ethosu_kit.board.model import Board, MemoryRegion, RegionKind
from ethosu_kit.core.errors import FitError, PlanError
from ethosu_kit.core.sizes import align_up, size_text
from ethosu_kit.npu.facts import NPU_ALIGN, MemoryMode, mode_refusal
from ethosu_kit.plan.types import Buffer, MemoryPlan, PlanOptions, Role
from ethosu_kit.pte.model import MethodInfo, ModelInfo
from ethosu_kit.pte.vela_config import fast_scratch_size
from ethosu_kit.selftest.vectors import vectors_size

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
MIN_POOL = NPU_ALIGN  # no zero-length arrays in the generated C
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


# Method allocator: what Method::init allocates, per item, on a 32-bit target.
# Conservative per-item costs (each includes allocator alignment padding):
METHOD_PER_VALUE = 16  # one EValue (8-byte payload + tag, 8-aligned)
METHOD_PER_TENSOR = 96  # TensorImpl (~48) + strides/dim_order copies for up to 8 dims
METHOD_PER_INSTRUCTION = 64  # Instruction + kernel pointer + argument list (~8 args)
METHOD_PER_DELEGATE = 128  # BackendDelegate + compile-spec list + handle bookkeeping
METHOD_PER_PLANNED = 16  # Span of one memory-planned buffer
METHOD_FIXED = 1 * KIB  # chains, input/output index tables, delegate-name strings

# Linker-sized parts the plan must leave room for (override with PlanOptions.*_reserve).
# executor_runner: runtime core ~69 KB, prim ops ~16 KB, delegate ~7 KB, driver ~9 KB,
# selected kernels and libc/libstdc++ (measured on the firmware side).
# selftest: ~103 KB of code with the virtual NPU (GCC 12, U55 and U65 streams), less with
# the Arm driver; ~7 KiB of statics (the virtual NPU's state and per-run tables).
CODE_ESTIMATE = {"executor_runner": 320 * KIB, "bringup": 32 * KIB, "selftest": 192 * KIB}
DATA_ESTIMATE = {"executor_runner": 32 * KIB, "bringup": 8 * KIB, "selftest": 16 * KIB}
DEFAULT_CODE_ESTIMATE = 320 * KIB
DEFAULT_DATA_ESTIMATE = 32 * KIB

# The apps whose plan has no ExecuTorch runner pools (planned_<i>, input_<i>/output_<i>
# copies, method_pool): the self-test runs the command streams itself, from the temp
# pool, the fast scratch and its vectors. Every other app gets them: the runner uses
# them, bringup proves them on the board, and a folder of the user's may be a runner too.
NO_RUNNER_POOLS = frozenset({"selftest"})
# Stack and heap when not given, by app (else PlanOptions' defaults, the runner's
# 16 KiB / 32 KiB). The self-test's deepest stack is ~2.4 KiB with GCC and ~5.7 KiB with
# clang-19 (the virtual NPU's frames, docs/memory.md); its heap a few hundred bytes.
DEFAULT_STACK_HEAP = {"selftest": (8 * KIB, 4 * KIB)}


def uses_runner_pools(app: str) -> bool:
    """Whether the plan for `app` holds the ExecuTorch runner's pools."""
    return app not in NO_RUNNER_POOLS


def default_stack_heap(app: str) -> tuple[int, int]:
    """The stack and heap `app` is planned with when no size is given."""
    runner = PlanOptions()
    return DEFAULT_STACK_HEAP.get(app, (runner.stack, runner.heap))


# --- the Vela configuration ----------------------------------------------------------


# --- regions by attribute -------------------------------------------------------------


def _cpu_ram_rank(r: MemoryRegion) -> int:
    """Fastest CPU data RAM first: DTCM, on-chip data RAM, code RAM, NPU SRAM, external."""
    if r.kind == RegionKind.DTCM:
        return 0
    if r.on_chip and not r.npu:
        return 1 if not r.executable else 2
    if r.on_chip:
        return 3
    return 4


def _code_rank(r: MemoryRegion) -> int:
    """ITCM, on-chip RAM the NPU does not use, flash (keeps code over reset), NPU SRAM, DRAM."""
    if r.kind == RegionKind.ITCM:
        return 0
    if r.on_chip and r.volatile and not r.npu:
        return 1
    if not r.volatile:
        return 2
    return 3 if r.on_chip else 4


def _select(
    board: Board, ok: Callable[[MemoryRegion], bool], rank: Callable[[MemoryRegion], int]
) -> list[MemoryRegion]:
    """Regions passing `ok`, best first (stable: board order breaks ties)."""
    return sorted((r for r in board.regions if ok(r)), key=rank)


def _is_cpu_ram(r: MemoryRegion) -> bool:
    """Data RAM: the ITCM is left to code (data accesses to it are slow or impossible)."""
    return r.cpu and r.writable and r.volatile and r.kind != RegionKind.ITCM


def _is_npu_sram(r: MemoryRegion) -> bool:
    return r.on_chip and r.npu and r.writable and r.volatile


def _npu_sram_rank(r: MemoryRegion) -> int:
    return 0 if r.kind == RegionKind.SRAM else 1


def _is_external(r: MemoryRegion) -> bool:
    return not r.on_chip


# --- the fill ---------------------------------------------------------------------------


@dataclass
class _Fill:
    """What the plan has put in each region so far (buffers and linker reserves)."""

    board: Board
    used: dict[str, int] = field(default_factory=dict)
    contents: dict[str, list[tuple[str, int]]] = field(default_factory=dict)

    def offset_after(self, region: MemoryRegion, size: int, align: int) -> int:
        return align_up(self.used.get(region.name, 0), align) + size

    def fits(self, region: MemoryRegion, size: int, align: int) -> bool:
        return self.offset_after(region, size, align) <= region.size

    def put(self, region: MemoryRegion, what: str, size: int, align: int) -> None:
        self.used[region.name] = self.offset_after(region, size, align)
        self.contents.setdefault(region.name, []).append((what, size))

    def free(self, region: MemoryRegion, align: int = 1) -> int:
        return max(0, region.size - align_up(self.used.get(region.name, 0), align))


@dataclass(frozen=True)
class _Want:
    """One buffer to place: where it may go (best first) and how to explain a refusal."""

    name: str
    role: Role
    size: int
    align: int
    npu: bool
    initialized: bool
    candidates: Sequence[MemoryRegion]
    why: str
    hint: str
    symbol: str | None = None
    section: str | None = None


class _Planner:
    def __init__(self, model: ModelInfo, board: Board, mode: MemoryMode, options: PlanOptions):
        self.model = model
        self.board = board
        self.mode = mode
        self.options = options
        self.fill = _Fill(board)
        self.buffers: list[Buffer] = []
        self.notes: list[str] = []
        self.fast_unbounded = False  # Vela set no arena_cache_size: fast scratch takes the rest

    # placing ------------------------------------------------------------------------

    def place(self, want: _Want, *, load_region: str | None = None) -> Buffer:
        if not want.candidates:
            raise PlanError(
                f"{self.board.source}: board {self.board.name} has no region that can hold "
                f"{want.name} ({want.why})",
                hint="add such a region to the board file",
            )
        for region in want.candidates:
            if self.fill.fits(region, want.size, want.align):
                return self._commit(want, region, load_region)
        self._overflow(want)

    def _commit(self, want: _Want, region: MemoryRegion, load_region: str | None) -> Buffer:
        self.fill.put(region, want.name, want.size, want.align)
        if want.initialized and load_region is None and not region.loadable:
            load_region = self._load_region_for(want, region)
        buf = Buffer(
            name=want.name,
            role=want.role,
            symbol=want.symbol or f"kit_{want.name}",
            section=want.section or f".kit.{want.name}",
            region=region.name,
            size=want.size,
            align=want.align,
            npu=want.npu,
            initialized=want.initialized,
            load_region=load_region,
            allowed_regions=tuple(r.name for r in want.candidates),
            why=want.why,
        )
        self.buffers.append(buf)
        return buf

    def _load_region_for(self, want: _Want, region: MemoryRegion) -> str:
        """Initial contents of a buffer in a region nothing can load: a non-volatile copy."""
        for r in _select(self.board, lambda r: r.loadable and not r.volatile, _code_rank):
            if self.fill.fits(r, want.size, want.align):
                self.fill.put(r, f"{want.name} (load image)", want.size, want.align)
                return r.name
        raise PlanError(
            f"{self.board.source}: {want.name} needs initial contents in {region.name}, "
            "which is not loadable, and no non-volatile region has room for a copy",
            hint="mark the region loadable = true if a loader fills it, or add flash",
        )

    def _overflow(self, want: _Want) -> NoReturn:
        region = max(want.candidates, key=lambda r: r.size)
        held = self.fill.contents.get(region.name, [])
        needed = self.fill.offset_after(region, want.size, want.align)
        filled = " + ".join(f"{what} {size:,}" for what, size in [*held, (want.name, want.size)])
        others = (
            f" (also full: {', '.join(r.name for r in want.candidates if r is not region)})"
            if len(want.candidates) > 1
            else ""
        )
        raise FitError(
            f"region {region.name} of {self.board.name} (0x{region.base:08x}, "
            f"{size_text(region.size)}) overflows in {self.mode.value}: "
            f"needs {needed:,} bytes, has {region.size:,} (short by {needed - region.size:,}); "
            f"filled by {filled}{others}",
            hint=want.hint,
        )

    def reserve(self, regions: Sequence[MemoryRegion], what: str, size: int) -> MemoryRegion:
        """Keep room for something the linker sizes (code, .data/.bss); best region that fits."""
        for region in regions:
            if self.fill.fits(region, size, 8):
                self.fill.put(region, what, size, 8)
                return region
        if not regions:
            raise PlanError(
                f"{self.board.source}: board {self.board.name} has no region for {what}"
            )
        self._overflow(
            _Want(
                what,
                Role.CODE,
                size,
                8,
                False,
                True,
                regions,
                what,
                "reduce the reserve (PlanOptions code_reserve/data_reserve) or use a bigger board",
            )
        )

    # the plan -------------------------------------------------------------------------

    def run(self) -> MemoryPlan:
        model, board, mode = self.model, self.board, self.mode
        spec = model.compile_spec
        method = _main_method(model)
        npu_sram = _select(board, _is_npu_sram, _npu_sram_rank)
        cpu_ram = _select(board, _is_cpu_ram, _cpu_ram_rank)
        external_ram = _select(
            board, lambda r: _is_external(r) and r.npu and _is_cpu_ram(r), _cpu_ram_rank
        )
        has_npu = spec is not None

        # 1. NPU buffers first: their regions are fixed by the mode.
        self._temp_pool(
            npu_sram if mode != MemoryMode.DEDICATED_SRAM or not has_npu else external_ram, cpu_ram
        )
        fast = (
            self._fast_scratch_want(npu_sram)
            if mode == MemoryMode.DEDICATED_SRAM and has_npu
            else None
        )
        if fast is not None and not self.fast_unbounded and fast.size > 0:
            self.place(fast)
        self._network(npu_sram, has_npu)
        if self.options.app == "selftest" and has_npu:
            self._selftest_vectors()
        self._input_data(method)

        # 2. The firmware's own: stack in the fastest RAM, then code/data reserves.
        stack_regions = cpu_ram
        self.place(
            _Want(
                "stack",
                Role.STACK,
                self.options.stack,
                STACK_ALIGN,
                False,
                False,
                stack_regions,
                self.options.stack_why or f"--stack {self.options.stack} ({self._whose(0)})",
                "pass a smaller --stack, or use a board with more on-chip RAM",
            )
        )
        app = self.options.app
        code_size = self.options.code_reserve
        if code_size is None:
            code_size = CODE_ESTIMATE.get(app, DEFAULT_CODE_ESTIMATE)
        data_size = self.options.data_reserve
        if data_size is None:
            data_size = DATA_ESTIMATE.get(app, DEFAULT_DATA_ESTIMATE)
        code_regions = _select(board, lambda r: r.executable and r.loadable and r.cpu, _code_rank)
        code_region = self.reserve(code_regions, "code (reserve)", code_size)
        data_region = self.reserve(cpu_ram, "data (reserve)", data_size)
        self.place(
            _Want(
                "heap",
                Role.HEAP,
                self.options.heap,
                8,
                False,
                False,
                cpu_ram,
                self.options.heap_why or f"--heap {self.options.heap} ({self._whose(1)})",
                "pass a smaller --heap, or use a board with more on-chip RAM",
            )
        )

        # 3. CPU buffers, hottest first: planned activations, IO, then the method pool.
        if uses_runner_pools(app):
            self._runner_pools(method, cpu_ram)
        else:
            self.notes.append(
                f"app {app}: no ExecuTorch runner pools (planned buffers, IO copies, method "
                "pool); gen --app executor_runner plans them"
            )

        if self.options.npu == "virtual" and self.options.vnpu_workspace is not None:
            size = max(MIN_POOL, align_up(self.options.vnpu_workspace, NPU_ALIGN))
            self.place(
                _Want(
                    "vnpu_workspace",
                    Role.VNPU_WORKSPACE,
                    size,
                    NPU_ALIGN,
                    False,
                    False,
                    cpu_ram,
                    f"the virtual NPU's working memory for this model's streams, measured on "
                    f"the host: {self.options.vnpu_workspace} B, rounded to {NPU_ALIGN} = {size}",
                    "the virtual NPU's working memory does not fit: use the Ethos-U driver on "
                    "real hardware, or a board with more RAM",
                )
            )

        # 4. A fast scratch with no bound from Vela takes the NPU SRAM that is left.
        if fast is not None and self.fast_unbounded and fast.candidates:
            region = fast.candidates[0]
            size = self.fill.free(region, NPU_ALIGN) // NPU_ALIGN * NPU_ALIGN
            self._commit(
                _Want(
                    fast.name,
                    fast.role,
                    size,
                    NPU_ALIGN,
                    True,
                    False,
                    fast.candidates,
                    f"{fast.why}: {size} B free in {region.name}",
                    fast.hint,
                ),
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
                    load_region=None,
                    allowed_regions=tuple(
                        r.name for r in (code_regions if role == Role.CODE else cpu_ram)
                    ),
                    why=f"sized by the linker; {size} B kept free in {region.name} "
                    f"(estimate for app {app})",
                )
            )

        return MemoryPlan(
            board=board,
            mode=mode,
            accelerator=spec.accelerator if spec else "none",
            model_path=model.path,
            model_sha256=model.sha256,
            buffers=tuple(self.buffers),
            options=self.options,
            notes=tuple(self.notes),
        )

    def _whose(self, which: int) -> str:
        """Where the stack (0) or heap (1) size came from, for the plan's why."""
        app = self.options.app
        if (self.options.stack, self.options.heap)[which] == default_stack_heap(app)[which]:
            return f"the default for app {app}; --stack/--heap auto sizes it from a measurement"
        return "option"

    def _runner_pools(self, method: MethodInfo, cpu_ram: list[MemoryRegion]) -> None:
        """The executor_runner's: planned activations, unplanned IO, the method pool."""
        for i, size in enumerate(method.planned_buffers, start=1):
            self.place(
                _Want(
                    f"planned_{i}",
                    Role.PLANNED,
                    size,
                    NPU_ALIGN,
                    False,
                    False,
                    cpu_ram,
                    f"mem_id {i} of method {method.name}: non_const_buffer_sizes[{i}] = {size}",
                    _CPU_HINT,
                )
            )
        for kind, role, tensors in (
            ("input", Role.INPUT, method.inputs),
            ("output", Role.OUTPUT, method.outputs),
        ):
            for i, t in enumerate(tensors):
                if t.planned or t.nbytes == 0:
                    continue  # already inside planned_<mem_id>: a copy would count it twice
                self.place(
                    _Want(
                        f"{kind}_{i}",
                        role,
                        t.nbytes,
                        NPU_ALIGN,
                        False,
                        False,
                        cpu_ram,
                        f"{kind} {i} of {method.name} (not memory-planned): "
                        f"{t.dtype}{list(t.shape)} = {t.nbytes} B",
                        _CPU_HINT,
                        symbol=f"kit_{kind}_{i}",
                        section=f".kit.{kind}_{i}",
                    )
                )
        pool, pool_why = method_pool_size(method)
        if self.options.method_pool is not None:
            pool = max(MIN_POOL, align_up(self.options.method_pool, NPU_ALIGN))
            pool_why = self.options.method_pool_why or f"--method-pool {pool} (option)"
        self.place(
            _Want(
                "method_pool",
                Role.METHOD_POOL,
                pool,
                NPU_ALIGN,
                False,
                False,
                cpu_ram,
                pool_why,
                _CPU_HINT,
            )
        )

    def _temp_pool(self, regions: list[MemoryRegion], cpu_ram: list[MemoryRegion]) -> None:
        model, mode = self.model, self.mode
        peak = model.peak_scratch
        cpu_need, cpu_why = cpu_temp_need(model)
        if model.compile_spec is None:
            size = max(MIN_POOL, align_up(cpu_need, NPU_ALIGN))
            why = f"no Ethos-U delegate; {cpu_why}: {size}"
            self.place(
                _Want(
                    "temp_pool",
                    Role.SCRATCH,
                    size,
                    NPU_ALIGN,
                    False,
                    False,
                    cpu_ram,
                    why,
                    _CPU_HINT,
                )
            )
            return
        scratches = [d.vela.scratch_size for d in model.ethosu_delegates if d.vela]
        size = max(align_up(peak, NPU_ALIGN), align_up(cpu_need, NPU_ALIGN)) + TEMP_ALIGN_SLACK
        why = (
            f"max(peak Ethos-U scratch {peak} (largest of {len(scratches)} delegate(s): "
            f"{', '.join(str(s) for s in scratches)}), CPU temp {cpu_need} ({cpu_why})) "
            f"rounded to {NPU_ALIGN} + align slack {TEMP_ALIGN_SLACK} = {size}; one need at a "
            "time: the temp allocator is reset after every instruction"
        )
        if mode == MemoryMode.DEDICATED_SRAM:
            hint = "use a board with more external DRAM"
        else:
            hint = (
                f"the NPU scratch (Vela's peak SRAM use, {peak:,} B = {size_text(peak)}) "
                "must be in on-chip SRAM "
                f"in {mode.value}: lower the model for Dedicated_Sram on an Ethos-U65/U85 "
                "(scratch in DRAM), or with Vela --optimise Size, or use a board with more "
                "SRAM (`ethosu-kit boards NAME` shows a board's regions)"
            )
        self.place(
            _Want("temp_pool", Role.SCRATCH, size, NPU_ALIGN, True, False, regions, why, hint)
        )

    def _fast_scratch_want(self, npu_sram: list[MemoryRegion]) -> _Want:
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
        return _Want(
            "fast_scratch",
            Role.FAST_SCRATCH,
            size,
            NPU_ALIGN,
            True,
            False,
            npu_sram,
            why,
            "lower with a smaller --arena-cache-size (e.g. memory mode Dedicated_Sram_256KB), "
            "pass --fast-scratch, or use a board with more SRAM",
        )

    def _network(self, npu_sram: list[MemoryRegion], has_npu: bool) -> None:
        model, board, mode = self.model, self.board, self.mode
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
                return _is_external(r) and r.cpu and r.loadable and (r.npu or not has_npu)

            # flash (non-volatile) first: the network survives reset and leaves DRAM free
            regions = _select(board, ok, lambda r: 0 if not r.volatile else 1)
            why = f"{mode.value}: {base_why}, external: flash if it fits, else DRAM"
            hint = (
                "the .pte is larger than the board's external memory: lower it with Vela "
                "--optimise Size or use a bigger board"
            )
        self.place(
            _Want("network", Role.NETWORK, size, NPU_ALIGN, has_npu, True, regions, why, hint)
        )

    def _const_data_regions(self) -> list[MemoryRegion]:
        """Read-only data the CPU reads (self-test vectors, compiled-in inputs): flash
        first (like the network), then external RAM; never a TCM (the ITCM holds code,
        and a large input overflowed it when it was plain .rodata)."""

        def ok(r: MemoryRegion) -> bool:
            return r.cpu and r.loadable and r.kind not in (RegionKind.ITCM, RegionKind.DTCM)

        def rank(r: MemoryRegion) -> int:
            return (0 if not r.volatile else 1) + (0 if _is_external(r) else 2)

        return _select(self.board, ok, rank)

    def _selftest_vectors(self) -> None:
        """The self-test's inputs and expected outputs, which the CPU copies and compares."""
        size = vectors_size(self.model)
        self.place(
            _Want(
                "selftest_vectors",
                Role.VECTORS,
                size,
                NPU_ALIGN,
                False,
                True,
                self._const_data_regions(),
                f"NPU self-test vectors: every Ethos-U delegate's inputs and expected outputs, "
                f"16-aligned = {size} B; read-only, flash first",
                "the self-test vectors do not fit: use a board with more flash or DRAM",
            )
        )

    def _input_data(self, method: MethodInfo) -> None:
        """Method inputs compiled into the image (gen --inputs), read-only."""
        for i, size in enumerate(self.options.input_data):
            if size <= 0:
                continue
            t = method.inputs[i] if i < len(method.inputs) else None
            what = f"{t.dtype}{list(t.shape)}" if t else "?"
            self.place(
                _Want(
                    f"input_data_{i}",
                    Role.INPUT_DATA,
                    size,
                    NPU_ALIGN,
                    False,
                    True,
                    self._const_data_regions(),
                    f"input {i} of {method.name} compiled in (gen --inputs): {what} = {size} B; "
                    "read-only, flash first",
                    "the compiled-in inputs do not fit: pass them at run time "
                    "(ethosu-kit run --inputs) instead",
                )
            )


_CPU_HINT = (
    "the CPU-only buffers do not fit the board's RAM: pass a smaller --stack/--heap, "
    "or use a board with more RAM"
)


def _main_method(model: ModelInfo) -> MethodInfo:
    for m in model.methods:
        if m.name == "forward":
            return m
    if not model.methods:
        raise PlanError(f"{model.path}: the program has no method to run")
    return model.methods[0]


def method_pool_size(method: MethodInfo) -> tuple[int, str]:
    """Conservative method-allocator need of one method, with the arithmetic spelled out."""
    n_planned = len(method.planned_buffers)
    parts = [
        (method.num_values, METHOD_PER_VALUE, "values"),
        (method.num_tensors, METHOD_PER_TENSOR, "tensors"),
        (method.num_instructions, METHOD_PER_INSTRUCTION, "instructions"),
        (len(method.delegates), METHOD_PER_DELEGATE, "delegates"),
        (n_planned, METHOD_PER_PLANNED, "planned buffers"),
    ]
    total = sum(n * per for n, per, _ in parts) + METHOD_FIXED
    size = align_up(total, 256)
    terms = " + ".join(f"{n} {what} x {per}" for n, per, what in parts)
    return size, f"estimate {terms} + fixed {METHOD_FIXED} = {total}, rounded to 256 = {size}"


def plan_memory(
    model: ModelInfo, board: Board, mode: MemoryMode | None, options: PlanOptions | None = None
) -> MemoryPlan:
    """Place every buffer of `model` on `board` in `mode` (default: the pte's own mode)."""
    options = options or PlanOptions()
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
        kind, macs = spec.npu_kind, spec.macs
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
    planner = _Planner(model, board, mode, options)
    planner.notes.extend(notes)
    if len(model.methods) > 1:
        planner.notes.append(
            f"{len(model.methods)} methods: planned for {_main_method(model).name}"
        )
    return planner.run()


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
