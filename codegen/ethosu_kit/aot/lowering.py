"""Lower a PyTorch model to an Ethos-U .pte with ExecuTorch (the AOT side, for examples and tests).

This is the only module of the kit that imports torch/executorch, and only inside
functions: reading, planning and generating never need them.
"""

from __future__ import annotations

import contextlib
import io
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ethosu_kit.core.errors import KitError
from ethosu_kit.core.writer import write_file_atomic

if TYPE_CHECKING:
    import torch


@dataclass(frozen=True)
class Target:
    """What Vela compiles for: accelerator, system config and memory mode (vela.ini names)."""

    accelerator: str = "ethos-u55-128"
    system_config: str | None = None  # None: ExecuTorch's default for the accelerator
    memory_mode: str | None = None
    extra_flags: tuple[str, ...] = ()


@contextlib.contextmanager
def _needs_executorch() -> Iterator[None]:
    """Turn a missing torch/executorch/torchao into the user's install problem."""
    try:
        yield
    except ImportError as exc:  # pragma: no cover - depends on the machine
        raise KitError(
            f"lowering needs torch and executorch ({exc.name} is missing)",
            hint="run scripts/install.sh, or: pip install torch==2.13.0 && "
            "pip install 'executorch[ethos-u]==1.5.1'",
        ) from exc


def _compile_spec(target: Target) -> Any:
    with _needs_executorch():
        from executorch.backends.arm.ethosu import EthosUCompileSpec  # noqa: PLC0415 - optional, slow (lower extra)

    return EthosUCompileSpec(
        target.accelerator,
        system_config=target.system_config,
        memory_mode=target.memory_mode,
        extra_flags=list(target.extra_flags) or None,
    )


def _exported_module(model: torch.nn.Module, example_inputs: tuple[Any, ...]) -> Any:
    import torch  # noqa: PLC0415 - optional, slow (lower extra)

    # torch 2.13: without check_guards=False the Arm passes trip over `_guards_fn`.
    return torch.export.export(model, example_inputs, strict=True).module(check_guards=False)


def quantized_graph(
    model: torch.nn.Module,
    example_inputs: tuple[Any, ...],
    target: Target,
    *,
    calibration: Sequence[tuple[Any, ...]] | None = None,
    activation_bits: int = 8,
) -> torch.fx.GraphModule:
    """The QDQ graph lower_to_pte hands to the partitioner (int8 or a16w8, per-channel).

    Public so a test can run the very graph the delegate was compiled from.
    """
    with _needs_executorch():
        from executorch.backends.arm.quantizer import (  # noqa: PLC0415 - optional, slow (lower extra)
            EthosUQuantizer,
            get_symmetric_a16w8_quantization_config,
            get_symmetric_quantization_config,
        )
        from torchao.quantization.pt2e.quantize_pt2e import (  # type: ignore[import-untyped]  # noqa: PLC0415 - optional, slow (lower extra)
            convert_pt2e,
            prepare_pt2e,
        )

    graph = _exported_module(model.eval(), example_inputs)
    quantizer = EthosUQuantizer(_compile_spec(target))
    quantizer.set_global(
        get_symmetric_a16w8_quantization_config(is_per_channel=True)
        if activation_bits == 16
        else get_symmetric_quantization_config(is_per_channel=True)
    )
    graph = prepare_pt2e(graph, quantizer)
    for batch in calibration or [example_inputs]:
        graph(*batch)
    result: torch.fx.GraphModule = convert_pt2e(graph)
    return result


def lower_to_pte(
    model: torch.nn.Module,
    example_inputs: tuple[Any, ...],
    target: Target,
    out: Path | None = None,
    *,
    delegate: bool = True,
    quantize: bool = True,
    calibration: Sequence[tuple[Any, ...]] | None = None,
    activation_bits: int = 8,
    dump_dir: Path | None = None,
) -> bytes:
    """Quantize (int8, per-channel), partition for Ethos-U and serialize; return the .pte bytes.

    `delegate=False` gives a CPU-only program (no Ethos-U delegate) of the same model.
    `activation_bits=16` quantizes activations to int16 (a16w8). `dump_dir` keeps the
    TOSA graph and Vela output of each partition there (the virtual NPU's reference).
    """
    with _needs_executorch():
        import torch  # noqa: PLC0415 - optional, slow (lower extra)
        from executorch.backends.arm.ethosu import EthosUPartitioner  # noqa: PLC0415 - optional, slow (lower extra)
        from executorch.exir import EdgeCompileConfig, to_edge_transform_and_lower  # noqa: PLC0415 - optional, slow (lower extra)

    model = model.eval()
    compile_spec = _compile_spec(target)
    if dump_dir is not None:
        compile_spec.dump_intermediate_artifacts_to(str(dump_dir))
    if quantize:
        graph: torch.nn.Module = quantized_graph(
            model,
            example_inputs,
            target,
            calibration=calibration,
            activation_bits=activation_bits,
        )
    else:
        graph = _exported_module(model, example_inputs)
    exported = torch.export.export(graph, example_inputs, strict=True)
    partitioners = [EthosUPartitioner(compile_spec)] if delegate else []
    # Vela prints its network summary on stdout; keep it out of the caller's output
    # (a CLI's stdout may be machine-read) but show it if lowering fails.
    vela_output = io.StringIO()
    try:
        with contextlib.redirect_stdout(vela_output):
            edge = to_edge_transform_and_lower(
                exported,
                partitioner=partitioners,
                compile_config=EdgeCompileConfig(_check_ir_validity=False),
            )
            program = edge.to_executorch()
    except Exception:
        sys.stderr.write(vela_output.getvalue())
        raise
    data: bytes = program.buffer
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        write_file_atomic(out, data)
    return data
