"""`ethosu-kit compare A B [--pte] [--lsb N]`: results within N LSB of each tensor's scale.

Real files from the real commands: `simulate -o` twice (the same seed is bit-exact, a
changed value is found and counted in LSB), and a runner-style file (`output<o>`, float
as the program dequantizes it) against simulate's integers through the pte's own scales.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ethosu_kit.cli import main
from ethosu_kit.pte.reader import io_quantization


def _simulate(pte: Path, out: Path, seed: str = "3") -> dict[str, np.ndarray]:
    assert main(["simulate", str(pte), "--seed", seed, "-o", str(out)]) == 0
    with np.load(out) as data:
        return {k: data[k] for k in data.files}


def test_same_results_pass_and_a_changed_value_is_counted(
    pte_two_delegates: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = _simulate(pte_two_delegates, tmp_path / "a.npz")
    _simulate(pte_two_delegates, tmp_path / "b.npz")
    assert main(["compare", str(tmp_path / "a.npz"), str(tmp_path / "b.npz")]) == 0
    assert "COMPARE PASS (4 of 4)" in capsys.readouterr().out
    out = a["delegate1_output0"].reshape(-1)
    out[5] = np.int8(out[5] + 2 if out[5] < 100 else out[5] - 2)
    np.savez(tmp_path / "c.npz", **a)
    assert main(["compare", str(tmp_path / "a.npz"), str(tmp_path / "c.npz"), "--lsb", "1"]) == 1
    text = capsys.readouterr().out
    assert "[delegate1_output0]: max 2 integer steps, 1 of 512 beyond 1: DIFFERENT" in text, text
    assert main(["compare", str(tmp_path / "b.npz"), str(tmp_path / "c.npz"), "--lsb", "2"]) == 0


def test_runner_floats_against_simulate_integers(
    pte_u55_shared: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sim = _simulate(pte_u55_shared, tmp_path / "sim.npz")
    (qin,), (qout,) = io_quantization(pte_u55_shared)
    assert qin is not None and qout is not None
    deq = lambda q, v: ((v.astype(np.float32) - q.zero_point) * q.scale).astype(np.float32)  # noqa: E731
    runner = {
        "input0": deq(qin, sim["delegate0_input0"]),
        "output0": deq(qout, sim["delegate0_output0"]),
    }
    np.savez(tmp_path / "run.npz", **runner)
    args = ["compare", str(tmp_path / "run.npz"), str(tmp_path / "sim.npz")]
    assert main([*args, "--pte", str(pte_u55_shared)]) == 0
    text = capsys.readouterr().out
    assert "run.npz[output0] vs sim.npz[delegate0_output0]: max 0 LSB" in text, text
    # one output a whole LSB off: found, and accepted with --lsb 1
    runner["output0"].reshape(-1)[3] += np.float32(qout.scale)
    np.savez(tmp_path / "run.npz", **runner)
    assert main([*args, "--pte", str(pte_u55_shared)]) == 1
    assert main([*args, "--pte", str(pte_u55_shared), "--lsb", "1"]) == 0
    capsys.readouterr()
    # floats without the pte: bit-exact only; a tolerance needs the scale
    assert main(args) == 1
    capsys.readouterr()
    assert main([*args, "--lsb", "1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "--pte" in err and "Traceback" not in err


def test_nothing_in_common_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    np.savez(tmp_path / "a.npz", x=np.zeros(3, np.int8))
    np.savez(tmp_path / "b.npz", y=np.zeros(3, np.int8))
    assert main(["compare", str(tmp_path / "a.npz"), str(tmp_path / "b.npz")]) == 2
    assert "no arrays to compare" in capsys.readouterr().err
