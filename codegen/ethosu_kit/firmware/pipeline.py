"""The generation pipeline as a library function: `generate_project(GenRequest)`.

Runs the stages in data-flow order: read the pte, load the board, plan (the fit
check), render every file, and only then write the folder; any failure before the
write leaves nothing on disk. With a size `auto` the app is built and run in QEMU
(firmware.measure) and the project planned again from what it used. `gen` (and CMake's
configure step, which runs `gen`) calls it; `build_firmware` builds a project's app, planning it
again first where the app or NPU library needs it (`regenerate`: `build --app selftest`,
`build --npu virtual`).

Which options go together is checked when a `GenRequest` is made, so a library caller
gets the same refusals as the command line.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final, Literal

from ethosu_kit.board.loader import load_board, require, stand_in_board
from ethosu_kit.board.model import Board
from ethosu_kit.board.toolchain import MEASURE_TOOLCHAINS, Toolchain
from ethosu_kit.core.errors import KitError
from ethosu_kit.core.sizes import align_up
from ethosu_kit.core.writer import (
    WriteResult,
    before_writing,
    restored_on_failure,
    since,
    write_project,
)
from ethosu_kit.firmware import measure
from ethosu_kit.firmware.build import build_project
from ethosu_kit.firmware.fingerprint import firmware_fingerprint
from ethosu_kit.firmware.measure import ROUND
from ethosu_kit.firmware.qemu import why_not_in_qemu
from ethosu_kit.firmware.stages import (
    image_model,
    needs_selftest,
    plan_and_render,
    plan_and_render_programs,
    regenerate,
)
from ethosu_kit.inputs.compiled import load_input_data
from ethosu_kit.npu.facts import NPU_ALIGN, MemoryMode
from ethosu_kit.plan.apps import App
from ethosu_kit.plan.external import external_ptds, parse_place, parse_slots
from ethosu_kit.plan.types import MemoryPlan, NpuLibrary, PlanOptions
from ethosu_kit.pte.model import ModelInfo
from ethosu_kit.pte.programs import (
    Program,
    ProgramSet,
    ProgramSource,
    check_one_npu,
    name_from_path,
    unique,
)
from ethosu_kit.pte.ptd import external_blocks, load_external
from ethosu_kit.pte.reader import model_from_bytes, read_pte_bytes, vela_streams_from_bytes
from ethosu_kit.vnpu.fast_scratch import check_fast_scratch
from ethosu_kit.vnpu.workspace import vnpu_workspace_need

__all__ = [
    "AUTO",
    "GenRequest",
    "Generated",
    "build_firmware",
    "generate_project",
    "regenerate",
    "size_problem",
]

AUTO: Final = "auto"
Size = int | Literal["auto"] | None  # bytes, measured (AUTO), or the default (None)

APPS: Final = tuple(a.value for a in App)  # the CLI's --app choices, in help order
NPU_LIBRARIES: Final = tuple(n.value for n in NpuLibrary)

# The smallest stack gen takes. Below it an image cannot even report that its stack is
# too small: the start-up's frames (reset handler, C library init, main, the app's entry)
# and, on top of them, one exception frame with the FP state (26 words + 4 B of alignment,
# 108 B) and the fault handler's report (the kit's formatter alone is 112 B with GCC 12)
# must fit for a stack overflow to be named (exit 16, `E: stack overflow`). Measured on the
# self-test (Corstone-300, QEMU): with 1 KiB it prints its first lines and names the
# overflow; with 256 B QEMU dies without a word. No kit app runs in less: the bring-up's
# own frames need more, the self-test's and the runner's several KiB (docs/memory.md).
MIN_STACK = 1024
# The smallest heap: 8, one alignment unit, which is what `--heap auto` gives a program
# that allocates nothing. Not 0: a zero-length heap buffer has no address of its own to
# check (the bring-up app's placement check fails on it), and the runner's delegate
# allocates with `new`.
MIN_HEAP = 8
# option -> (what, alignment, minimum); the pools' minimum is one alignment unit (the
# plan.placer's MIN_POOL: no zero-length array in the C)
SIZE_RULES: Final[dict[str, tuple[str, int, int]]] = {
    "stack": ("stack", ROUND, MIN_STACK),
    "heap": ("heap", ROUND, MIN_HEAP),
    "method_pool": ("method pool", NPU_ALIGN, NPU_ALIGN),
}


def size_problem(option: str, size: int) -> str | None:
    """Why `size` bytes cannot be the `option` ("stack", "heap", "method_pool"): below
    its minimum, or not a multiple of its alignment (the planner would round it, the C
    header would not); None when it can."""
    what, align, minimum = SIZE_RULES[option]
    if size < minimum:
        return (
            f"{size} bytes is below the smallest {what} ({minimum} bytes): use {minimum} "
            f"or more, or auto"
        )
    if size % align:
        down, up = size // align * align, align_up(size, align)
        nearest = f"{up}" if down < minimum else f"{down} or {up}"
        return f"{size} bytes is not a multiple of {align} (the {what}'s alignment): use {nearest}"
    return None


@dataclass(frozen=True, kw_only=True)
class GenRequest:
    """What `gen` is asked for (the command line's options, typed). Refuses, when made,
    the combinations that cannot work, each with the way out."""

    pte: Path
    output: Path
    board: str = "default"  # a built-in name or alias, a board folder or its board.toml
    qemu_stand_in: bool = False
    mode: MemoryMode | None = None  # None: the mode the pte was compiled for
    fast_scratch: int | None = None
    stack: Size = None
    heap: Size = None
    method_pool: Size = None
    code_reserve: int | None = None  # bytes kept for .text/.rodata (None: the app's estimate)
    toolchain: str = Toolchain.GCC  # the compiler of the build that `auto` measures
    app: App = App.EXECUTOR_RUNNER  # a plain string is taken too, and made an App
    vectors: Path | None = None  # selftest: its inputs and expected outputs
    seed: int = 0  # selftest: the seed of the random inputs
    inputs: Sequence[str | Path] = ()  # compiled into the image
    npu: NpuLibrary = NpuLibrary.DRIVER  # a plain string too, made a NpuLibrary
    allow_cpu_only: bool = False
    force: bool = False
    # named external data (docs/ptd.md): the .ptd files (default: those beside the pte),
    # TAG=REGION placements and TAG=ADDRESS:SIZE fixed slots
    ptd: Sequence[Path] = ()
    place_data: Sequence[str] = ()
    ptd_slot: Sequence[str] = ()
    # an image of several programs (docs/multi-model.md): each named; `pte` is the first's
    programs: tuple[ProgramSource, ...] = ()
    concurrent: tuple[tuple[str, ...], ...] = ()  # groups that may run at the same time

    def __post_init__(self) -> None:
        for name, value, legal in (
            ("app", self.app, APPS),
            ("npu", self.npu, NPU_LIBRARIES),
            ("toolchain", self.toolchain, MEASURE_TOOLCHAINS),
        ):
            if value not in legal:
                raise KitError(f"--{name} {value!r}: not one of {', '.join(legal)}")
        # typed from here on (frozen: set once, as the dataclass itself would)
        object.__setattr__(self, "app", App(self.app))
        object.__setattr__(self, "npu", NpuLibrary(self.npu))
        for name in SIZE_RULES:
            size = getattr(self, name)
            problem = isinstance(size, int) and size_problem(name, size)
            if (size not in (None, AUTO) and not isinstance(size, int)) or problem:
                raise KitError(f"--{name.replace('_', '-')} {size}: {problem or 'not a size'}")
        if self.inputs and self.app == App.SELFTEST:
            # the self-test runs each delegate on its vectors: compiled-in method inputs
            # would be bytes in its image that nothing reads
            raise KitError(
                "--inputs: the selftest app does not read the method's inputs (it runs each "
                "delegate's command stream on its vectors)",
                hint="give it vectors: ethosu-kit simulate model.pte --inputs x.npy -o "
                "vectors.npz, then --vectors vectors.npz; compiled-in inputs are for "
                "--app executor_runner",
            )
        if self.vectors is not None and self.app != App.SELFTEST:
            raise KitError("--vectors is for --app selftest", hint="add --app selftest")
        if self.auto and self.app == App.BRINGUP:
            # bringup prints no usage lines: the measuring run would pass and then be refused
            raise KitError(
                "--stack/--heap/--method-pool auto: the bringup app reports no stack or heap "
                "use to measure",
                hint="measure the app you will run (--app selftest or executor_runner), "
                "or give --stack/--heap in bytes",
            )
        if self.programs:
            self._check_programs()
        if self.method_pool == AUTO and self.app != App.EXECUTOR_RUNNER:
            raise KitError(
                f"--method-pool auto: the {self.app} app has no method pool to measure",
                hint="the method pool is the executor_runner's (--app executor_runner)",
            )

    def _check_programs(self) -> None:
        """What an image of several programs does not take (yet), each with the way out."""
        unique(self.programs, "gen")
        names = {p.name for p in self.programs}
        for group in self.concurrent:
            for name in group:
                if name not in names:
                    raise KitError(
                        f"--concurrent names {name!r}, which is no program of this image",
                        hint=f"its programs are {', '.join(sorted(names))}",
                    )
        refusals = (
            (self.auto, "--stack/--heap/--method-pool auto", "give the sizes in bytes"),
            (bool(self.inputs), "--inputs", "pass inputs at run time: run --program NAME --inputs"),
            (self.vectors is not None, "--vectors", "the self-test makes its vectors itself"),
        )
        for refused, option, hint in refusals:
            if refused:
                raise KitError(f"{option}: not taken for an image of several programs", hint=hint)

    @property
    def auto(self) -> bool:
        """Is a size measured (a QEMU run of the app)?"""
        return AUTO in (self.stack, self.heap, self.method_pool)

    def auto_options(self) -> str:
        """The options given as auto, for a message: `--stack/--heap auto`."""
        names = [n for n in SIZE_RULES if getattr(self, n) == AUTO]
        return "/".join(f"--{n.replace('_', '-')}" for n in names) + " auto"


@dataclass(frozen=True)
class Generated:
    """A generated project: the model it is of, its plan, and what was written."""

    model: ModelInfo
    plan: MemoryPlan
    result: WriteResult  # result.out_dir: the project folder


def generate_project(
    request: GenRequest, *, progress: Callable[[str], None] | None = None
) -> Generated:
    """Plan, render and write the project `request` asks for; `progress` is told each
    step of an `auto` measurement as it starts (it takes from seconds to minutes)."""
    if request.programs:
        return _generate_programs(request)
    pte_bytes = read_pte_bytes(request.pte)  # once: the plan and the copy are of the same bytes
    external = load_external(request.pte, [str(p) for p in request.ptd] or None)
    model = model_from_bytes(pte_bytes, str(request.pte), external)
    if len(model.methods) > 1:
        # every method planned and runnable by name: the image of programs does that, for
        # one program named after its file
        program = ProgramSource(name_from_path(request.pte), request.pte)
        return _generate_programs(replace(request, programs=(program,)))
    board = _board(request)
    ptds = external_ptds(
        external_blocks(vela_streams_from_bytes(pte_bytes, str(request.pte), external)),
        external,
        # the board's for the tags this program has, then the command line's (which wins)
        {t: r for t, r in board.external_data.items() if t in external.tags}
        | parse_place(request.place_data),
        parse_slots(request.ptd_slot),
    )
    input_data = load_input_data(request.inputs, model) if request.inputs else None
    options = _plan_options(
        request,
        input_data=tuple(len(input_data[i]) for i in sorted(input_data)) if input_data else (),
        code_reserve=request.code_reserve,
        vnpu_workspace=vnpu_workspace_need(request.pte, model, external)
        if request.npu == NpuLibrary.VIRTUAL
        else None,
        external_data=ptds,
    )
    if request.fast_scratch is not None:  # less than the streams touch fails only at run time
        check_fast_scratch(
            request.pte,
            model,
            request.fast_scratch,
            vela_streams_from_bytes(pte_bytes, str(request.pte), external),
        )

    def render(options: PlanOptions) -> tuple[MemoryPlan, dict[str, bytes]]:
        return plan_and_render(
            request.pte, pte_bytes, model, board, mode=request.mode, options=options,
            vectors=request.vectors, seed=request.seed, input_data=input_data,
            external=external,
        )  # fmt: skip

    plan, files = render(options)
    if not request.auto:
        return Generated(model, plan, write_project(files, request.output, force=request.force))
    _require_qemu(request, plan)
    before = before_writing(files, request.output.resolve())
    # the measurement writes and builds the project in place (so the user's build folder
    # stays warm); a failure anywhere puts the folder back as it was
    with restored_on_failure(request.output):
        options = _measured(
            request,
            model,
            board,
            options,
            write=lambda: write_project(files, request.output, force=request.force),
            progress=progress or (lambda _line: None),
        )
        plan, files = render(options)
        result = since(write_project(files, request.output, force=request.force), before, files)
    return Generated(model, plan, result)


def _board(request: GenRequest) -> Board:
    """The request's board (on its QEMU stand-in when asked), with a place for the vectors."""
    board = load_board(request.board)
    if request.qemu_stand_in:
        board = stand_in_board(board)
    require(board, ("boot.vector_region",), "every image (the vector table's place)")
    return board


def _plan_options(request: GenRequest, **more: Any) -> PlanOptions:
    """The plan options every image takes from the request (a size given as a number is
    used, `auto` starts from the app's defaults), plus `more`."""
    stack, heap = request.app.stack_heap
    return PlanOptions(
        fast_scratch=request.fast_scratch,
        stack=request.stack if isinstance(request.stack, int) else stack,
        heap=request.heap if isinstance(request.heap, int) else heap,
        method_pool=request.method_pool if isinstance(request.method_pool, int) else None,
        app=request.app,
        allow_cpu_only=request.allow_cpu_only,
        npu=request.npu,
        **more,
    )


def _generate_programs(request: GenRequest) -> Generated:
    """An image of several programs (docs/multi-model.md): every .pte read once, one NPU
    configuration for all, one plan that shares what lives only during one execute."""
    if request.ptd or request.place_data or request.ptd_slot:
        raise KitError(
            "--ptd, --place-data, --ptd-slot: for one unnamed one-method program (--pte "
            "FILE), not an image of programs (--pte NAME=FILE, --programs, several methods)",
            hint="give the .ptd program as --pte FILE alone (docs/ptd.md)",
        )
    pte_bytes: dict[str, bytes] = {}
    programs = []
    for source in request.programs:
        data = read_pte_bytes(source.pte)
        pte_bytes[source.name] = data
        # with the .ptd files beside it: a .ptd program is then refused for what it is
        model = model_from_bytes(data, str(source.pte), load_external(source.pte, None))
        if any(d.vela and d.vela.external for d in model.ethosu_delegates):
            msg = "keeps its Vela data in .ptd files, which only a one-program image takes"
            hint = "give it an image of its own, or lower it without VelaExternalBlockPlacements"
            raise KitError(f"{source.pte}: program {source.name!r} {msg}", hint=hint)
        programs.append(Program(source.name, model))
    check_one_npu(programs)
    board = _board(request)
    image = ProgramSet(tuple(programs), request.concurrent)
    vnpu = None
    if request.npu == NpuLibrary.VIRTUAL:
        # one invoke at a time on the one NPU: the largest program's working memory
        needs = [
            vnpu_workspace_need(s.pte, p.model)
            for s, p in zip(request.programs, programs, strict=True)
        ]
        vnpu = max((n for n in needs if n is not None), default=None)
    options = _plan_options(request, vnpu_workspace=vnpu)
    plan, files = plan_and_render_programs(
        image, pte_bytes, board, mode=request.mode, options=options, seed=request.seed
    )
    model = image_model(image)
    return Generated(model, plan, write_project(files, request.output, force=request.force))


def _require_qemu(request: GenRequest, plan: MemoryPlan) -> None:
    """auto measures the app in a QEMU run: refuse before the minutes of building when
    QEMU cannot run the plan's image (the test `run` would apply to it after the build),
    naming the ways out: the board's stand-in machine, or sizes measured on the board."""
    why = why_not_in_qemu(plan)
    if not why:
        return
    board = plan.board
    stand_in = board.qemu is not None and board.qemu.layout is not None and not board.qemu_layout
    raise KitError(
        f"{request.auto_options()} measures the {request.app} app in a QEMU run, and QEMU "
        f"cannot run this image: {why}",
        hint=(
            "generate with --qemu-stand-in to measure it on the board's QEMU stand-in, or "
            if stand_in
            else ""
        )
        + "run the app on the board and pass what its `usage:` lines say in bytes: "
        "--stack N --heap N"
        + (" --method-pool N" if request.app == App.EXECUTOR_RUNNER else "")
        + " (docs/memory.md)",
    )


def _measured(
    request: GenRequest,
    model: ModelInfo,
    board: Board,
    options: PlanOptions,
    *,
    write: Callable[[], object],
    progress: Callable[[str], None],
) -> PlanOptions:
    """`options` with the auto sizes from a measurement of this app on this model: the
    project's record when it is of the same firmware, or a QEMU run of the project
    written with `write` first."""
    firmware = firmware_fingerprint(board, request.app, request.toolchain, request.output)
    m, note = measure.reuse(request.output, model.sha256, request.app, request.toolchain, firmware)
    if m is None:
        write()
        npu = NpuLibrary.VIRTUAL if model.ethosu_delegates else NpuLibrary.NONE
        m = measure.measure_project(
            request.output, request.app, npu, request.toolchain, firmware, progress=progress
        )
    else:
        progress(note)
    return measure.sized_options(
        options,
        m,
        note,
        core=board.cpu.core,
        npu=request.npu,
        stack=request.stack == AUTO,
        heap=request.heap == AUTO,
        method_pool=request.method_pool,
    )


def build_firmware(
    project: Path,
    *,
    app: str = App.BRINGUP,
    toolchain: str = Toolchain.GCC,
    npu: str | None = None,
    vectors: Path | None = None,
    force: bool = False,
) -> Path:
    """Build `app` of a generated project; return the ELF. For the self-test the project
    is first planned again with its vectors (from `vectors`, else seeded random inputs)
    unless it is one already and no new vectors are given; `npu` "virtual" plans the
    virtual NPU's working memory (firmware.build). Files edited since generation stop a
    regeneration, unless `force`."""
    if app == App.SELFTEST:
        if needs_selftest(project, vectors):
            regenerate(project, app=App.SELFTEST, vectors=vectors, force=force)
    elif vectors is not None:
        raise KitError("--vectors is for --app selftest", hint="add --app selftest")
    return build_project(project, app, toolchain, npu, force)
