"""The virtual NPU's working memory a model needs, for sizing it in firmware.

The library decodes each convolution's weights into working memory (16-bit weights,
an IFM patch, the MLW decoder's slice buffers). How much depends only on the command
and weight streams, not on the data, so one run of each delegate on zero inputs
measures it exactly: the library's own high-water mark, raised by the very check the
firmware makes of an operation's memory, with the same number (`vnpu_workspace_claim`,
src/interp.c, for the decoded weights of every format, MLW, SWD, sparse SWD and FWD, and
their buffers; the U85's chain-buffer and accumulator checks for those). So a
workspace of the measured size passes every check in firmware and one byte less
fails one by name; the memory plan rounds the buffer up to its alignment.
`python -m ethosu_kit.vnpu.workspace model.pte` prints the bytes.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ethosu_kit.core.errors import KitError
from ethosu_kit.pte import read_pte, read_vela_streams
from ethosu_kit.pte.ptd import ExternalData
from ethosu_kit.vnpu.delegate import (
    check_blocks,
    fast_scratch_bytes,
    run_delegate,
    tensor_dtype,
    tensor_shape,
)
from ethosu_kit.vnpu.npu import VirtualNpu

if TYPE_CHECKING:
    from ethosu_kit.pte import VelaBlocks
    from ethosu_kit.pte.model import ModelInfo

MIN_WORKSPACE = 64  # what ethosu_virtual_set_workspace accepts; a C array must not be empty


def required_workspace(blocks: Sequence[VelaBlocks], fast_scratch_size: int = 0) -> int:
    """Bytes of working memory the virtual NPU needs to run every one of these delegates."""
    need = 0
    for b in blocks:
        check_blocks(b, fast_scratch_size)
        zeros = [np.zeros(tensor_shape(t), dtype=tensor_dtype(t)) for t in b.inputs]
        with VirtualNpu(b.cop.config, b.cop.id) as npu:
            npu.workspace_peak(reset=True)
            run_delegate(b, zeros, npu, fast_scratch_size=fast_scratch_size)
            need = max(need, npu.workspace_peak(reset=True))
    # the exact peak, not rounded: the plan aligns its buffer, and a size one byte smaller
    # than this one must fail (tests/test_vnpu_workspace.py)
    return max(need, MIN_WORKSPACE)


def pte_workspace(pte: Path, external: ExternalData | None = None) -> int:
    """`required_workspace` of every Ethos-U delegate of a .pte (its memory mode's region 2)."""
    return required_workspace(
        read_vela_streams(pte, external), fast_scratch_bytes(read_pte(pte, external))
    )


def vnpu_workspace_need(
    pte: Path, model: ModelInfo, external: ExternalData | None = None
) -> int | None:
    """The virtual NPU's working memory for `pte`, measured on the host; None without
    an Ethos-U delegate (nothing runs on the NPU)."""
    if not model.ethosu_delegates:
        return None
    return pte_workspace(pte, external)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1:
        print("usage: python -m ethosu_kit.vnpu.workspace MODEL.pte", file=sys.stderr)
        return 2
    try:
        print(pte_workspace(Path(args[0])))
    except KitError as exc:
        print(f"error: {exc}", file=sys.stderr)
        if exc.hint:
            print(f"hint: {exc.hint}", file=sys.stderr)
        return exc.exit_code
    return 0


if __name__ == "__main__":
    sys.exit(main())
