"""`advise`'s compile step: each candidate's TOSA graph(s) through Vela, in a process
pool (`compile_candidates`), and the `ModelInfo` a .pte of the payloads Vela made would
read (`candidate_model`: a given .pte's program kept around them, else the payloads plus
`PROGRAM_OVERHEAD`).
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import replace
from pathlib import Path

from ethosu_kit.core.errors import KitError
from ethosu_kit.core.sizes import align_up
from ethosu_kit.npu.facts import NPU_ALIGN
from ethosu_kit.pte.compile_spec import ETHOSU_BACKEND_ID
from ethosu_kit.pte.model import Delegate, MethodInfo, ModelInfo, TensorInfo, VelaTensor
from ethosu_kit.pte.vela_compile import (
    Compiled,
    CompiledTosa,
    VelaTarget,
    compile_partitions,
    preload_vela,
)

# Without a .pte: the ExecuTorch program around the delegates (its tables, the delegate
# call, IO tensor metadata). The kit's example CNN's is 2,304 B; rounded up generously.
PROGRAM_OVERHEAD = 4 * 1024


_ELEM_DTYPE = {1: "int8", 2: "int16", 4: "int32"}


# -- compiling ---------------------------------------------------------------------------


def compile_candidates(
    jobs: Sequence[tuple[tuple[Path, ...], VelaTarget]],
    *,
    workers: int | None = None,
    on_done: Callable[[int], None] | None = None,
) -> list[Compiled]:
    """Each (TOSA graphs, target) compiled with Vela, in a pool of processes bounded by
    the local cores; `on_done(i)` as job i finishes (a progress bar). In job order."""
    results: list[Compiled | None] = [None] * len(jobs)
    n = max(1, min(len(jobs), workers or os.cpu_count() or 1))
    if n == 1:  # one job or one core: a pool would only add its start-up
        for i, (tosas, target) in enumerate(jobs):
            results[i] = compile_partitions(tosas, target)
            if on_done:
                on_done(i)
    else:
        # A fork starts at once; but a process that has run torch (the --module path
        # lowered with it first) holds its thread pools, which a fork does not carry
        # safely: then the workers come from a fork server.
        forked = "torch" not in sys.modules
        context = multiprocessing.get_context("fork" if forked else "forkserver")
        if forked:
            preload_vela()  # once here, not once per worker
        with ProcessPoolExecutor(max_workers=n, mp_context=context) as pool:
            futures = {
                pool.submit(compile_partitions, tosas, target): i
                for i, (tosas, target) in enumerate(jobs)
            }
            for future in as_completed(futures):
                i = futures[future]
                results[i] = future.result()
                if on_done:
                    on_done(i)
    return [r for r in results if r is not None]


# -- the model a candidate makes ---------------------------------------------------------


def _tensor(v: VelaTensor) -> TensorInfo:
    shape = v.shape
    while len(shape) > 1 and shape[0] == 1:  # Vela pads to 6-D with leading 1s
        shape = shape[1:]
    return TensorInfo(_ELEM_DTYPE.get(v.elem_size, "int8"), shape, v.nbytes, planned=True)


def _delegate(c: CompiledTosa, target: VelaTarget) -> Delegate:
    specs = (
        ("compile_flags", " ".join(target.flags).encode()),
        ("target", str(target.accelerator).encode()),
    )
    return Delegate(ETHOSU_BACKEND_ID, specs, c.stream_bytes, target.compile_spec(), c.stream)


def candidate_model(
    name: str, compiled: Compiled, reference: ModelInfo | None
) -> tuple[ModelInfo, str]:
    """The ModelInfo a .pte lowered for `compiled.target` would give, and how its size
    was found. With `reference` (a .pte of the same graph, any target) its program is
    kept and its Ethos-U delegates become the candidate's; else a one-method program of
    the delegates with `PROGRAM_OVERHEAD` bytes around them."""
    delegates = tuple(_delegate(c, compiled.target) for c in compiled.partitions)
    payload = sum(d.processed_bytes for d in delegates)
    if reference is not None:
        old = reference.ethosu_delegates
        if len(old) != len(delegates):
            raise KitError(
                f"{reference.path}: {len(old)} Ethos-U delegate(s), but {len(delegates)} "
                "TOSA graph(s) given",
                hint="give one TOSA file per delegate partition, in order, with the .pte "
                "lowered from them",
            )
        swap = iter(delegates)
        methods = tuple(
            replace(m, delegates=tuple(next(swap) if d.is_ethosu else d for d in m.delegates))
            for m in reference.methods
        )
        size = reference.file_bytes - sum(d.processed_bytes for d in old) + payload
        how = (
            f"network {size:,} B: {Path(reference.path).name}'s program with this "
            f"candidate's Vela payloads ({payload:,} B)"
        )
        return replace(reference, path=name, file_bytes=size, methods=methods, sha256=""), how
    first, last = compiled.partitions[0].stream, compiled.partitions[-1].stream
    inputs = tuple(_tensor(t) for t in first.inputs)
    outputs = tuple(_tensor(t) for t in last.outputs)
    planned = sum(align_up(t.nbytes, NPU_ALIGN) for t in (*inputs, *outputs))
    method = MethodInfo(
        name="forward",
        inputs=inputs,
        outputs=outputs,
        planned_buffers=(max(planned, NPU_ALIGN),),
        cpu_operators=(),
        delegates=delegates,
        num_values=len(inputs) + len(outputs) + 2 * len(delegates),
        num_instructions=len(delegates),
        num_tensors=len(inputs) + len(outputs),
    )
    size = payload + PROGRAM_OVERHEAD
    model = ModelInfo(path=name, file_bytes=size, constant_bytes=0, methods=(method,))
    how = (
        f"network {size:,} B: Vela payloads {payload:,} B + {PROGRAM_OVERHEAD:,} B "
        "estimated for the program around them (give --pte for the exact size)"
    )
    return model, how
