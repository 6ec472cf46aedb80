"""The stages from a model to a project's files, and again from a project folder.

`plan_and_render` plans and renders (the self-test's vectors made for app selftest);
`regenerate` plans a generated project again from its own memory_plan.json and
generated/model.pte with some options changed (`--app selftest`, `--npu virtual`) and
writes it. Below `build` (which regenerates a driver project for the virtual NPU) and
`measure`; `pipeline` runs the whole generation on top of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from hashlib import sha256
from pathlib import Path

from ethosu_kit.board.model import Board
from ethosu_kit.core import paths
from ethosu_kit.core.errors import KitError
from ethosu_kit.core.writer import write_project
from ethosu_kit.firmware.project import ProjectDir
from ethosu_kit.inputs.compiled import project_input_data
from ethosu_kit.npu.facts import MemoryMode
from ethosu_kit.plan.apps import App
from ethosu_kit.plan.multi import plan_image
from ethosu_kit.plan.planner import plan_memory
from ethosu_kit.plan.types import MemoryPlan, NpuLibrary, PlanOptions, Role
from ethosu_kit.pte import read_pte
from ethosu_kit.pte.model import ModelInfo
from ethosu_kit.pte.programs import ProgramSet
from ethosu_kit.pte.ptd import ExternalData, load_external
from ethosu_kit.pte.reader import read_pte_bytes
from ethosu_kit.render.project import ProgramBytes, render_project
from ethosu_kit.selftest.make import make_vectors, project_vectors
from ethosu_kit.selftest.vectors import combine
from ethosu_kit.vnpu.workspace import vnpu_workspace_need


def plan_and_render(
    pte: Path,
    pte_bytes: bytes,
    model: ModelInfo,
    board: Board,
    *,
    mode: MemoryMode | None,
    options: PlanOptions,
    vectors: Path | None = None,
    seed: int = 0,
    input_data: Mapping[int, bytes] | None = None,
    external: ExternalData | None = None,
) -> tuple[MemoryPlan, dict[str, bytes]]:
    """The plan and every file of the project (the self-test's vectors made for app selftest)."""
    plan = plan_memory(model, board, mode, options)
    selftest = None
    if options.app == App.SELFTEST:
        selftest = make_vectors(pte, model, vectors, seed, external)
    files = render_project(
        model,
        plan,
        pte_bytes,
        selftest,
        input_data,
        kit_dir=paths.kit_root().resolve(),
        external=external,
    )
    return plan, files


def plan_and_render_programs(
    programs: ProgramSet,
    pte_bytes: Mapping[str, bytes],
    board: Board,
    *,
    mode: MemoryMode | None,
    options: PlanOptions,
    seed: int = 0,
) -> tuple[MemoryPlan, dict[str, bytes]]:
    """An image of several programs (docs/multi-model.md): the plan and every file, the
    self-test's vectors made for every delegate of every program for app selftest."""
    joined = b"".join(pte_bytes[p.name] for p in programs.programs)
    # the image's identity (KIT_MODEL_SHA256, which run pairs a plan with): every .pte
    plan = plan_image(programs, board, mode, options)
    plan = replace(plan, model_sha256=sha256(joined).hexdigest())
    selftest = None
    if options.app == App.SELFTEST:
        made = [
            (p.name, make_vectors(Path(p.model.path), p.model, None, seed))
            for p in programs.programs
            if p.model.ethosu_delegates
        ]
        selftest = combine(made)
    image = image_model(programs)
    files = render_project(
        image,
        plan,
        joined,
        selftest,
        kit_dir=paths.kit_root().resolve(),
        programs=[ProgramBytes(p.name, p.model, pte_bytes[p.name]) for p in programs.programs],
    )
    return plan, files


def image_model(programs: ProgramSet) -> ModelInfo:
    """The image's programs as one ModelInfo for what the templates ask of every program
    together: every method (so every delegate and CPU operator), every byte."""
    models = [p.model for p in programs.programs]
    return ModelInfo(
        path=" ".join(m.path for m in models),
        file_bytes=sum(m.file_bytes for m in models),
        constant_bytes=sum(m.constant_bytes for m in models),
        methods=tuple(meth for m in models for meth in m.methods),
    )


def _project_plan(project: Path) -> MemoryPlan | None:
    return ProjectDir(project).plan_if_any()


def needs_virtual_npu(project: Path) -> bool:
    """Does the project's plan lack the virtual NPU's working memory it would need?
    (False for a CPU-only program, and for a folder that is no generated project:
    configure says what is wrong with that.)"""
    plan = _project_plan(project)
    return (
        plan is not None and not plan.by_role(Role.VNPU_WORKSPACE) and plan.accelerator is not None
    )


def keeps_virtual_workspace(project: Path) -> bool:
    """Does the project's plan hold the virtual NPU's working memory, which an image for
    the Ethos-U driver must not carry (its plan was made or re-made for `--npu virtual`)?"""
    plan = _project_plan(project)
    return plan is not None and bool(
        plan.by_role(Role.VNPU_WORKSPACE) or plan.options.npu == NpuLibrary.VIRTUAL
    )


def needs_selftest(project: Path, vectors: Path | None) -> bool:
    """Must the project be regenerated for the self-test: it is not one yet, or new
    `vectors` were given? (A folder that is no generated project: `regenerate` says so.)"""
    plan = _project_plan(project)
    return (
        plan is None
        or vectors is not None
        or plan.options.app != App.SELFTEST
        or not ProjectDir(project).selftest_header.is_file()
    )


def regenerate(
    project: Path,
    *,
    app: App | None = None,
    npu: NpuLibrary | None = None,
    vectors: Path | None = None,
    force: bool = False,
) -> MemoryPlan:
    """Plan `project` again, same board, mode and options as it was made with (its
    memory_plan.json, typed) but `app` and/or `npu` ("virtual": the virtual NPU's working
    memory measured on the host, so it is fit-checked like every other buffer), render it
    with the project's own compiled-in inputs and write it. Self-test vectors are made
    anew for `app="selftest"` (from `vectors`, else seeded random inputs); otherwise the
    project keeps its own. A file edited since generation stops it, unless `force`."""
    plan = _project_plan(project)
    if plan is None:
        raise KitError(
            f"{project}: no memory_plan.json, so not a generated project",
            hint="generate one first: gen-firmware --pte model.pte -o DIR",
        )
    if plan.multi:
        raise KitError(
            f"{project}: an image of {len(plan.programs)} programs is planned again by gen, "
            "not by build",
            hint="run gen-firmware again with the same programs and the --app/--npu you want "
            "(e.g. --app selftest --npu virtual)",
        )
    folder = ProjectDir(project)
    pte = folder.pte
    if not pte.is_file():
        purpose = "the self-test" if app == App.SELFTEST else "the virtual NPU"
        raise KitError(f"{pte}: missing, so the project cannot be regenerated for {purpose}")
    external = load_external(pte, None)  # the project's .ptd files, copied beside its pte
    model = replace(read_pte(pte, external), path=plan.model_path)
    options = plan.options if app is None else replace(plan.options, app=app)
    if npu == NpuLibrary.VIRTUAL:
        options = replace(
            options,
            npu=NpuLibrary.VIRTUAL,
            vnpu_workspace=vnpu_workspace_need(pte, model, external),
        )
        if options.stack_virtual is not None and options.stack_driver is None:
            # --stack auto sized the driver's: the virtual's, keeping the driver's for later
            options = replace(
                options, stack=options.stack_virtual, stack_why=options.stack_virtual_why,
                stack_driver=options.stack, stack_driver_why=options.stack_why,
            )  # fmt: skip
    elif npu == NpuLibrary.DRIVER:
        # an image for the real NPU: no virtual-NPU working memory, the driver's stack
        options = replace(options, npu=NpuLibrary.DRIVER, vnpu_workspace=None)
        if options.stack_driver is not None:
            options = replace(
                options, stack=options.stack_driver, stack_why=options.stack_driver_why,
                stack_driver=None, stack_driver_why="",
            )  # fmt: skip
    new_plan = plan_memory(model, plan.board, plan.mode, options)
    selftest = None
    if app == App.SELFTEST:
        selftest = make_vectors(pte, model, vectors, 0, external)
    elif new_plan.by_role(Role.VECTORS):  # a self-test project keeps the vectors it has
        selftest = project_vectors(project, folder.selftest_vectors, folder.selftest_header, pte)
    pte_bytes = read_pte_bytes(pte)  # a regular file, bounded: the project folder is the user's
    files = render_project(
        model,
        new_plan,
        pte_bytes,
        selftest,
        project_input_data(plan, folder.input_data),
        kit_dir=paths.kit_root().resolve(),
        external=external,
    )
    write_project(files, project, force=force)
    return new_plan
