"""Stage 3: render the generated firmware project from the memory plan.

`render_project(model, plan, pte_bytes, kit_dir=)` is a pure function: it returns every
file of the project (relative path -> bytes) and writes nothing; `ethosu_kit.core.writer`
is the only writer. Where the kit is installed comes in as `kit_dir` (the pipeline
passes core.paths.kit_root()), so the output depends on its inputs only. The only I/O
here is loading the jinja2 templates (ours in
`codegen/ethosu_kit/render/templates/`, the linker templates in the kit's `linker/`).

Every text file starts with the shared header comment (`templates/_header.j2`): it
says the file is generated, by which kit version, from which pte (sha256), board
file and mode. Where a value differs from what upstream ExecuTorch's Arm
executor_runner uses by default, the generated file says so next to the value.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2

from ethosu_kit.core.errors import KitError
from ethosu_kit.core.names import (
    MODEL_INFO_JSON,
    PLAN_JSON,
    PROGRAMS_HEADER,
    PTE_NAME,
    REPORT_JSON,
    REPORT_TXT,
    SELFTEST_HEADER,
    SELFTEST_VECTORS,
    generated,
    input_data_file,
    program_pte,
)
from ethosu_kit.layout.link_layout import (
    link_layout,
)
from ethosu_kit.plan.report import report_json, report_text
from ethosu_kit.plan.types import MemoryPlan, Role
from ethosu_kit.pte.model import ModelInfo
from ethosu_kit.pte.ptd import ExternalData
from ethosu_kit.pte.reader import vela_streams_from_bytes
from ethosu_kit.render.context import (
    HEADER_MARKER,
    GenInfo,
    buffer_views,
    gen_info,
    program_views,
    template_context,
)
from ethosu_kit.render.external import external_files
from ethosu_kit.render.filters import environment
from ethosu_kit.selftest.vectors import SelftestVectors

# Linker templates (the kit's linker/ folder), all rendered from the link layout: the
# whole-image script and scatter file, and the fragments for a team's own linker script.
LINKER_TEMPLATES: dict[str, str] = {
    generated("linker.ld"): "gnu_ld.ld.j2",
    generated("scatter.sct"): "armclang.sct.j2",
    generated("kit_sections.ld"): "kit_sections.ld.j2",
    generated("kit_sections.sct"): "kit_sections.sct.j2",
    generated("kit_check.ld"): "kit_check.ld.j2",
}

# (output path, template, comment style) for the files rendered from our templates.
_PROJECT_TEMPLATES: tuple[tuple[str, str, str], ...] = (
    ("CMakeLists.txt", "CMakeLists.txt.j2", "hash"),
    ("CMakePresets.json", "CMakePresets.json.j2", "none"),
    (generated("kit_network.S"), "kit_network.S.j2", "c"),
    (generated("kit_model.h"), "kit_model.h.j2", "c"),
    (generated("kit_memory_config.h"), "kit_memory_config.h.j2", "c"),
    (generated("kit_board_config.h"), "kit_board_config.h.j2", "c"),
    (generated("kit_buffers.c"), "kit_buffers.c.j2", "c"),
    (generated("kit_sections.h"), "kit_sections.h.j2", "c"),
    (generated("kit_regions.h"), "kit_regions.h.j2", "c"),
    (generated("kit_exit_codes.h"), "kit_exit_codes.h.j2", "c"),
    (generated("kit_board.cmake"), "kit_board.cmake.j2", "hash"),
    (generated("kit_operators.txt"), "kit_operators.txt.j2", "hash"),
)


# An image of several programs (docs/multi-model.md): these templates instead of the
# single program's, and its own table of programs.
_PROGRAM_TEMPLATES: dict[str, str] = {
    "kit_network.S.j2": "kit_network_programs.S.j2",
    "kit_model.h.j2": "kit_model_programs.h.j2",
    "kit_selftest.h.j2": "kit_selftest_programs.h.j2",
}


def _template(name: str, context: dict[str, Any]) -> str:
    return _PROGRAM_TEMPLATES.get(name, name) if context["programs"] else name


def _comment(style: str, lines: tuple[str, ...]) -> str:
    if style == "c":
        return "/*\n" + "".join(f" * {line}\n" for line in lines) + " */\n"
    if style == "hash":
        return "".join(f"# {line}\n" for line in lines)
    if style == "semicolon":
        return "".join(f"; {line}\n" for line in lines)
    raise ValueError(style)


def _ensure_header(text: str, style: str, gen: GenInfo) -> str:
    """Templates include the header themselves; add it where one (a linker template) did not."""
    if style == "none" or HEADER_MARKER in "\n".join(text.splitlines()[:8]):
        return text
    header = _comment(style, gen.header_lines)
    if text.startswith("#!"):  # scatter files may start with a preprocessor line
        first, _, rest = text.partition("\n")
        return f"{first}\n{header}{rest}"
    return header + text


_SELFTEST_TEMPLATES: tuple[tuple[str, str], ...] = (
    (generated(SELFTEST_HEADER), "kit_selftest.h.j2"),
    (generated("kit_selftest_vectors.S"), "kit_selftest_vectors.S.j2"),
)


def _selftest_files(
    env: jinja2.Environment,
    context: dict[str, Any],
    plan: MemoryPlan,
    selftest: SelftestVectors | None,
    gen: GenInfo,
) -> dict[str, bytes]:
    placed = plan.by_role(Role.VECTORS)
    if not placed:
        return {}
    if selftest is None:
        raise KitError(
            f"{plan.model_path}: the plan places self-test vectors (app selftest), "
            "but none were made"
        )
    if len(selftest.blob) != placed[0].size:
        raise KitError(
            f"{plan.model_path}: self-test vectors of {len(selftest.blob)} B, "
            f"the plan placed {placed[0].size} B"
        )
    views = {v.buf.role: v for v in buffer_views(plan)}
    ctx = {
        **context,
        "selftest": selftest,
        "vectors": views[Role.VECTORS],
        "vectors_name": SELFTEST_VECTORS,
    }
    files = {
        out: _ensure_header(env.get_template(_template(name, ctx)).render(ctx), "c", gen).encode()
        for out, name in _SELFTEST_TEMPLATES
    }
    files[generated(SELFTEST_VECTORS)] = selftest.blob
    return files


def _input_data_files(
    env: jinja2.Environment,
    context: dict[str, Any],
    plan: MemoryPlan,
    input_data: Mapping[int, bytes] | None,
    gen: GenInfo,
) -> dict[str, bytes]:
    """generated/kit_input_data.{h,S} and one .bin per compiled-in input (gen --inputs)."""
    placed = {b.index: b for b in plan.by_role(Role.INPUT_DATA) if b.index is not None}
    if not placed:
        return {}
    data = input_data or {}
    views = {v.buf.name: v for v in buffer_views(plan)}
    rows = []
    files: dict[str, bytes] = {}
    for i, b in sorted(placed.items()):
        blob = data.get(i)
        if blob is None or len(blob) != b.size:
            raise KitError(
                f"{plan.model_path}: the plan compiles in input {i} ({b.size} B), "
                f"but {'no' if blob is None else f'{len(blob)} B of'} data was given"
            )
        rows.append({"index": i, "view": views[b.name], "file": input_data_file(i)})
        files[generated(input_data_file(i))] = blob
    ctx = {**context, "input_views": rows}
    for out, name in (
        (generated("kit_input_data.h"), "kit_input_data.h.j2"),
        (generated("kit_input_data.S"), "kit_input_data.S.j2"),
    ):
        files[out] = _ensure_header(env.get_template(name).render(ctx), "c", gen).encode()
    return files


@dataclass(frozen=True)
class ProgramBytes:
    """A program of an image of several, as render takes it."""

    name: str
    model: ModelInfo
    pte_bytes: bytes


def render_project(
    model: ModelInfo,
    plan: MemoryPlan,
    pte_bytes: bytes,
    selftest: SelftestVectors | None = None,
    input_data: Mapping[int, bytes] | None = None,
    *,
    kit_dir: Path,
    external: ExternalData | None = None,
    programs: Sequence[ProgramBytes] = (),
) -> dict[str, bytes]:
    """Every file of the generated project, relative path -> contents. Writes nothing.

    `kit_dir`: the kit's root folder (core.paths.kit_root().resolve(), from the caller):
    the project's default ETHOSU_KIT_DIR is its cmake/ folder, and built-in board
    folders are named relative to it.
    `selftest`: the NPU self-test's vectors, needed when the plan places them (app selftest).
    `input_data`: raw bytes per compiled-in input index, needed when the plan places them.
    `external`: the .ptd files, needed when the plan places them (render.external).
    `programs`: an image of several programs (plan.programs), each's name, model and
    .pte bytes; `model` and `pte_bytes` are then the image's (every program's methods,
    every .pte's bytes one after the other).
    """
    gen = gen_info(plan, pte_bytes, kit_dir)
    if plan.model_sha256 and plan.model_sha256 != gen.pte_sha256:
        raise KitError(
            f"{plan.model_path}: the plan was made for sha256 {plan.model_sha256[:12]}…, "
            f"these bytes are {gen.pte_sha256[:12]}…",
            hint="plan and generate from the same .pte",
        )
    env = environment()
    views = program_views(plan, [(p.name, p.model) for p in programs])
    context = template_context(model, plan, gen, link_layout(plan), views)
    files: dict[str, bytes] = {}
    for out, name, style in _PROJECT_TEMPLATES:
        text = env.get_template(_template(name, context)).render(context)
        files[out] = _ensure_header(text, style, gen).encode()
    if views:
        text = env.get_template("kit_programs.h.j2").render(context)
        files[generated(PROGRAMS_HEADER)] = _ensure_header(text, "c", gen).encode()
    for out, name in LINKER_TEMPLATES.items():
        # kit_sections.sct goes through the C preprocessor: C comments there
        style = "semicolon" if out == generated("scatter.sct") else "c"
        text = env.get_template(name).render(context)
        files[out] = _ensure_header(text, style, gen).encode()
    if programs:
        for p in programs:
            files[generated(program_pte(p.name))] = bytes(p.pte_bytes)
    else:
        files[generated(PTE_NAME)] = bytes(pte_bytes)
    files.update(_selftest_files(env, context, plan, selftest, gen))
    files.update(_input_data_files(env, context, plan, input_data, gen))
    files.update(
        external_files(
            env,
            context,
            plan,
            model=model,
            external=external,
            streams=lambda: vela_streams_from_bytes(pte_bytes, plan.model_path, external),
            ensure_header=lambda text: _ensure_header(text, "c", gen),
        )
    )
    files.update(_data_files(model, plan, gen))
    if programs:
        info = {p.name: p.model.to_dict() for p in programs}
        files[MODEL_INFO_JSON] = (json.dumps({"programs": info}, indent=2) + "\n").encode()
    return dict(sorted(files.items()))


def _data_files(model: ModelInfo, plan: MemoryPlan, gen: GenInfo) -> dict[str, bytes]:
    """The plan, the report and the model info, as the other stages produce them."""
    return {
        PLAN_JSON: plan.to_json().encode(),
        REPORT_TXT: (_comment("hash", gen.header_lines) + report_text(plan)).encode(),
        REPORT_JSON: (json.dumps(report_json(plan), indent=2) + "\n").encode(),
        MODEL_INFO_JSON: (json.dumps(model.to_dict(), indent=2) + "\n").encode(),
    }
