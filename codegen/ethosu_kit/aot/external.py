"""Lower with the Vela command and weight data in named external data (.ptd files).

ExecuTorch 1.5.1's `VelaExternalBlockPlacements` keeps each delegate's Vela block
headers in the .pte, flagged external, with a 64-character key (the SHA-256 of
`tag + "\\0" + payload`) as their data; the payloads go to one `<tag>.ptd` per placement
tag, which the runtime reads through a NamedDataMap. A module of its own (not a
parameter of `lowering.lower_to_pte`) so the test-model cache, keyed by that module's
source, keeps every pte lowered before.
"""

from __future__ import annotations

import contextlib
import io
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ethosu_kit.aot.lowering import (
    Target,
    _compile_spec,
    _needs_executorch,
    quantized_graph,
)
from ethosu_kit.core.writer import write_file_atomic

if TYPE_CHECKING:
    import torch


@dataclass(frozen=True)
class Placements:
    """The placement tag of each Vela block kind; None keeps that block in the .pte."""

    cmd_data: str | None = "cmd_data"
    weight_data: str | None = "weight_data"


def lower_external(
    model: torch.nn.Module,
    example_inputs: tuple[Any, ...],
    target: Target,
    out_dir: Path,
    *,
    placements: Placements | None = None,
    calibration: Sequence[tuple[Any, ...]] | None = None,
    name: str = "model",
) -> tuple[Path, list[Path]]:
    """Quantize (int8), lower with external Vela blocks; write `<name>.pte` and one
    `<tag>.ptd` per tag into `out_dir`. Returns (the pte, the ptd files)."""
    placements = placements or Placements()
    with _needs_executorch():
        import torch  # noqa: PLC0415 - optional, slow (lower extra)
        from executorch.backends.arm.ethosu import (  # noqa: PLC0415 - optional, slow (lower extra)
            EthosUPartitioner,
            VelaExternalBlockPlacements,
        )
        from executorch.exir import (  # noqa: PLC0415 - optional, slow (lower extra)
            EdgeCompileConfig,
            to_edge_transform_and_lower,
        )

    compile_spec = _compile_spec(target)
    compile_spec.external_block_placements = VelaExternalBlockPlacements(
        cmd_data=placements.cmd_data, weight_data=placements.weight_data
    )
    graph = quantized_graph(model.eval(), example_inputs, target, calibration=calibration)
    exported = torch.export.export(graph, example_inputs, strict=True)
    vela_output = io.StringIO()
    try:
        with contextlib.redirect_stdout(vela_output):
            edge = to_edge_transform_and_lower(
                exported,
                partitioner=[EthosUPartitioner(compile_spec)],
                compile_config=EdgeCompileConfig(_check_ir_validity=False),
            )
            program = edge.to_executorch()
    except Exception:
        sys.stderr.write(vela_output.getvalue())
        raise
    out_dir.mkdir(parents=True, exist_ok=True)
    pte = out_dir / f"{name}.pte"
    write_file_atomic(pte, program.buffer)
    ptds = []
    for tag, cord in sorted((program._tensor_data or {}).items()):
        path = out_dir / (tag if tag.endswith(".ptd") else f"{tag}.ptd")
        buf = io.BytesIO()
        cord.write_to_file(buf)
        write_file_atomic(path, buf.getvalue())
        ptds.append(path)
    return pte, ptds
