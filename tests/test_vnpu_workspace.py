"""The virtual NPU's working memory: measured per model on the host, enforced with numbers.

`required_workspace` is what a firmware build gives the library (.kit.vnpu_workspace);
these tests prove it is exactly enough: the delegate runs with that many bytes and
stops, naming the bytes needed and available, with fewer.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ethosu_kit.pte import read_vela_streams
from ethosu_kit.vnpu import VirtualNpu, VnpuError, run_delegate
from ethosu_kit.vnpu.delegate import random_inputs
from ethosu_kit.vnpu.npu import aligned_bytes
from ethosu_kit.vnpu.workspace import main, required_workspace


def _run_with_workspace(pte: Path, size: int) -> None:
    (blocks,) = read_vela_streams(pte)
    VirtualNpu.set_workspace(aligned_bytes(size))
    try:
        run_delegate(blocks, random_inputs(blocks, np.random.default_rng(3)))
    finally:
        VirtualNpu.set_workspace(None)


def test_measured_workspace_is_enough_and_needed(pte_u55_shared: Path) -> None:
    need = required_workspace(read_vela_streams(pte_u55_shared))
    assert 1024 < need < 1024 * 1024, need
    _run_with_workspace(pte_u55_shared, need)
    with pytest.raises(VnpuError, match=rf"needs {need} bytes .*the virtual NPU has {need - 1}\b"):
        _run_with_workspace(pte_u55_shared, need - 1)


def test_far_too_small_workspace_is_named(pte_u55_shared: Path) -> None:
    with pytest.raises(
        VnpuError,
        match=r"needs \d+ bytes .* the virtual NPU has 256 "
        r"\(ETHOSU_VIRTUAL_WORKSPACE_SIZE or ethosu_virtual_set_workspace\)$",
    ):
        _run_with_workspace(pte_u55_shared, 256)


def test_module_prints_the_bytes(pte_u55_shared: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(pte_u55_shared)]) == 0
    assert int(capsys.readouterr().out) == required_workspace(read_vela_streams(pte_u55_shared))


def test_module_reports_a_bad_pte(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "x.pte"
    bad.write_bytes(b"nonsense")
    assert main([str(bad)]) == 2
    assert capsys.readouterr().err.startswith(f"error: {bad}")
