"""Shared helpers of the virtual NPU tests: the TOSA reference run and the comparison."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from ethosu_kit.pte import VelaBlocks, read_vela_streams
from vnpu_models import OpModel, lowered


def op_model(model: OpModel) -> tuple[VelaBlocks, bytes]:
    """The single Ethos-U delegate of a lowered one-op model and its TOSA graph."""
    try:
        folder = lowered(model)
    except ImportError as exc:
        pytest.skip(f"lowering needs torch and executorch: {exc.name} is missing")
    streams = read_vela_streams(folder / "model.pte")
    assert len(streams) == 1, f"{model.name}: expected one delegate, got {len(streams)}"
    return streams[0], (folder / "out.tosa").read_bytes()


def tosa_run(tosa: bytes, inputs: list[Any]) -> list[Any]:
    trm = pytest.importorskip("tosa_reference_model", reason="tosa-tools is not installed")
    outputs, status = trm.run(tosa, inputs)
    assert str(status).endswith("TOSA_VALID"), f"tosa_reference_model: {status}"
    return [np.asarray(o) for o in outputs]


def mismatches(ours: list[Any], reference: list[Any]) -> int:
    """Number of output values that differ (shapes must agree in element count)."""
    assert len(ours) == len(reference)
    bad = 0
    for a, ref in zip(ours, reference, strict=True):
        r = np.asarray(ref).reshape(a.shape).astype(np.int64)
        bad += int(np.count_nonzero(a.astype(np.int64) != r))
    return bad
