"""The generated files of named external data (.ptd): each placed file next to the
project's pte, `kit_ptd.S` (assembles each into its plan section) and `kit_ptd.h` (the
files and the keys the apps check and read; sdk/include/kit/ptd.h reads them).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jinja2

from ethosu_kit.core.errors import KitError
from ethosu_kit.core.names import generated
from ethosu_kit.plan.types import MemoryPlan, Role
from ethosu_kit.pte.model import ModelInfo
from ethosu_kit.pte.ptd import (
    ExternalBlock,
    ExternalData,
    external_blocks,
    hash_tag,
    placement_tags,
)
from ethosu_kit.pte.vela import VelaBlocks
from ethosu_kit.render.context import BufferView, buffer_views

TEMPLATES: tuple[tuple[str, str], ...] = (
    (generated("kit_ptd.S"), "kit_ptd.S.j2"),
    (generated("kit_ptd.h"), "kit_ptd.h.j2"),
)


def ptd_file(tag: str) -> str:
    """The file name of tag's .ptd in generated/ (beside model.pte, where ExecuTorch's
    own tools and the kit's `load_external` look for it)."""
    return f"{tag}.ptd"


@dataclass(frozen=True)
class PtdView:
    tag: str
    view: BufferView
    file: str
    headroom: int  # slot bytes after the file
    slot: bool


@dataclass(frozen=True)
class DelegateBlock:
    """An external block with the self-test's delegate number `k`."""

    k: int
    ext: ExternalBlock
    hash_tag: str  # the tag its key was hashed with ("": not known, the key is not checked)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.ext, name)


def external_files(
    env: jinja2.Environment,
    context: dict[str, Any],
    plan: MemoryPlan,
    *,
    model: ModelInfo,
    external: ExternalData | None,
    streams: Callable[[], list[VelaBlocks]],
    ensure_header: Callable[[str], str],
) -> dict[str, bytes]:
    """generated/<tag>.ptd, kit_ptd.S and kit_ptd.h, when the plan places .ptd files."""
    records = plan.options.external_data
    if not records:
        return {}
    if external is None:
        raise KitError(f"{plan.model_path}: the plan places .ptd files, but none were given")
    views = {v.buf.name: v for v in buffer_views(plan)}
    files: dict[str, bytes] = {}
    rows = []
    for r in records:
        f = external.by_tag(r.tag)
        if f.sha256 != r.sha256:
            raise KitError(
                f"{f.path}: not the .ptd the plan was made with (sha256 {f.sha256[:12]}…, "
                f"the plan's {r.sha256[:12]}…)",
                hint="generate the project again with this .ptd",
            )
        view = views[r.buffer]
        if view.buf.role != Role.EXTERNAL_DATA:
            raise KitError(f"{plan.model_path}: buffer {r.buffer} is not a .ptd's")
        files[generated(ptd_file(r.tag))] = f.data
        rows.append(
            PtdView(r.tag, view, ptd_file(r.tag), r.size - r.nbytes, r.slot_size is not None)
        )
    # the tag each key was hashed with: the file's name, else one the program was lowered
    # with (a renamed .ptd keeps its data's keys)
    lowered = [
        t for m in model.methods for d in m.delegates for t in placement_tags(d.compile_specs)
    ]
    blocks = []
    for k, s in enumerate(streams()):
        for b in external_blocks([s]):
            if b.tag:
                payload = external.by_tag(b.tag).payload(b.key)
                blocks.append(DelegateBlock(k, b, hash_tag(b.key, payload, [b.tag, *lowered])))
    ctx = {**context, "ptds": rows, "blocks": blocks}
    for out, name in TEMPLATES:
        files[out] = ensure_header(env.get_template(name).render(ctx)).encode()
    return files
