"""The self-test vectors' layout: where each delegate's command stream, weights, inputs
and expected outputs are, and how many bytes the vector blob takes.

A leaf over `pte`: the planner sizes the vectors buffer with `vectors_size`, and
`render` prints the layout, without either importing the virtual NPU.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from ethosu_kit.core.errors import KitError
from ethosu_kit.core.sizes import align_up
from ethosu_kit.npu.facts import NPU_ALIGN, VELA_REGION_SCRATCH

if TYPE_CHECKING:
    from ethosu_kit.pte import VelaBlocks
    from ethosu_kit.pte.model import ModelInfo, VelaTensor


# every vector starts NPU-aligned: it is copied into the scratch the NPU reads (and the
# copy loops take words)
VECTOR_ALIGN = NPU_ALIGN


def _align(n: int) -> int:
    return align_up(n, VECTOR_ALIGN)


def vectors_size(model: ModelInfo) -> int:
    """Bytes of the vector blob for `model`: each delegate's inputs and outputs, aligned."""
    total = 0
    for d in model.ethosu_delegates:
        if d.vela is not None:
            total += sum(_align(t.nbytes) for t in (*d.vela.inputs, *d.vela.outputs))
    return total


@dataclass(frozen=True)
class SelftestTensor:
    key: str  # "delegate0_input0": the .npz key
    scratch_offset: int  # where the delegate reads or writes it in its scratch
    nbytes: int
    elem_size: int
    vector_offset: int  # where its bytes sit in the vector blob


@dataclass(frozen=True)
class SelftestDelegate:
    index: int  # K: the order of `simulate`
    method: str
    delegate_index: int  # in the method's delegate table
    cmd_offset: int  # of cmd_data (COP1 + command stream) in the .pte
    cmd_size: int
    weight_offset: int  # of weight_data (Vela region 0) in the .pte
    weight_size: int
    scratch_size: int  # Vela region 1
    inputs: tuple[SelftestTensor, ...]
    outputs: tuple[SelftestTensor, ...]
    program: str = ""  # an image of several programs: whose delegate it is

    @property
    def symbol(self) -> str:
        """The C name of its tensor tables' prefix (kit_selftest_<symbol>_inputs)."""
        return f"d{self.index}"


@dataclass(frozen=True)
class SelftestVectors:
    delegates: tuple[SelftestDelegate, ...]
    blob: bytes  # inputs then expected outputs, per delegate, each VECTOR_ALIGN-aligned
    source: str  # where the vectors came from, for the generated header and the report


def _tensors(
    k: int, kind: str, tensors: Iterable[VelaTensor], at: int
) -> tuple[tuple[SelftestTensor, ...], int]:
    out = []
    for i, t in enumerate(tensors):
        key = f"delegate{k}_{kind}{i}"
        if t.region != VELA_REGION_SCRATCH:
            raise KitError(
                f"{key} lives in Vela region {t.region}; the self-test (as the ExecuTorch "
                f"delegate) handles delegate IO in region {VELA_REGION_SCRATCH} (scratch) only"
            )
        out.append(SelftestTensor(key, t.offset, t.nbytes, t.elem_size, at))
        at += _align(t.nbytes)
    return tuple(out), at


def layout(streams: list[VelaBlocks]) -> tuple[SelftestDelegate, ...]:
    """Where everything of each delegate is: in the network, the scratch and the blob."""
    out = []
    at = 0
    for k, b in enumerate(streams):
        cmd, weights = b.block("cmd_data"), b.block("weight_data")
        if cmd.offset < 0 or weights.offset < 0:
            raise KitError(f"delegate {k}: its command stream's place in the .pte is not known")
        inputs, at = _tensors(k, "input", b.inputs, at)
        outputs, at = _tensors(k, "output", b.outputs, at)
        out.append(
            SelftestDelegate(
                index=k,
                method=b.method,
                delegate_index=b.delegate_index,
                cmd_offset=cmd.offset,
                cmd_size=len(cmd.data),
                weight_offset=weights.offset,
                weight_size=len(weights.data),
                scratch_size=b.scratch_size,
                inputs=inputs,
                outputs=outputs,
            )
        )
    return tuple(out)


def combine(programs: Sequence[tuple[str, SelftestVectors]]) -> SelftestVectors:
    """One image's vectors from every program's: the blobs one after the other, each
    delegate numbered in the image (K over every program) and its keys named by its
    program (`kws/delegate0_output0`), offsets moved by the blobs before it."""
    delegates: list[SelftestDelegate] = []
    blob = bytearray()
    for name, v in programs:
        base = len(blob)

        def moved(t: SelftestTensor, base: int = base, name: str = name) -> SelftestTensor:
            return replace(t, key=f"{name}/{t.key}", vector_offset=t.vector_offset + base)

        for d in v.delegates:
            delegates.append(
                replace(
                    d,
                    index=len(delegates),
                    program=name,
                    inputs=tuple(moved(t) for t in d.inputs),
                    outputs=tuple(moved(t) for t in d.outputs),
                )
            )
        blob += v.blob
    sources = sorted({v.source for _, v in programs})
    return SelftestVectors(tuple(delegates), bytes(blob), "; ".join(sources))
