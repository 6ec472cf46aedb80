"""`ethosu-kit simulate`: the NPU part of real .pte files on the virtual NPU, through the CLI."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ethosu_kit.cli import main


def _simulate(pte: Path, out: Path, *extra: str) -> dict[str, np.ndarray]:
    assert main(["simulate", str(pte), "-o", str(out), *extra]) == 0
    with np.load(out) as data:
        return {k: data[k] for k in data.files}


def test_same_model_same_answer_in_every_memory_mode(
    pte_u55_shared: Path, pte_u55_sram_only: Path, pte_u65_dedicated: Path, tmp_path: Path
) -> None:
    """One quantized model compiled three ways (U55 Shared_Sram, Sram_Only, U65 Dedicated_Sram
    with its fast-scratch region 2): different streams, identical integer results."""
    results = [
        _simulate(pte, tmp_path / f"{i}.npz", "--seed", "5")
        for i, pte in enumerate((pte_u55_shared, pte_u55_sram_only, pte_u65_dedicated))
    ]
    for other in results[1:]:
        assert np.array_equal(results[0]["delegate0_input0"], other["delegate0_input0"])
        assert np.array_equal(results[0]["delegate0_output0"], other["delegate0_output0"])
    assert len(np.unique(results[0]["delegate0_output0"])) > 2


def test_given_inputs_are_used(pte_u55_shared: Path, tmp_path: Path) -> None:
    first = _simulate(pte_u55_shared, tmp_path / "a.npz", "--seed", "1")
    np.save(tmp_path / "x.npy", first["delegate0_input0"])
    again = _simulate(pte_u55_shared, tmp_path / "b.npz", "--inputs", str(tmp_path / "x.npy"))
    assert np.array_equal(first["delegate0_output0"], again["delegate0_output0"])


def test_wrong_input_shape_is_a_user_error(
    pte_u55_shared: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    np.save(tmp_path / "x.npy", np.zeros((5, 5), dtype=np.int8))
    assert main(["simulate", str(pte_u55_shared), "--inputs", str(tmp_path / "x.npy")]) == 2
    assert "input 0: needs shape" in capsys.readouterr().err


def test_u85_simulates_in_every_memory_mode(
    pte_u85_dedicated: Path, pte_u85_shared: Path, tmp_path: Path
) -> None:
    """The same model compiled for the U85 in Dedicated_Sram (region 2 = the fast scratch,
    sized by the plan) and in Shared_Sram: the virtual U85 gives the same outputs."""
    outs = []
    for name, pte in (("dedicated", pte_u85_dedicated), ("shared", pte_u85_shared)):
        out = tmp_path / f"{name}.npz"
        assert main(["simulate", str(pte), "--seed", "3", "-o", str(out)]) == 0
        with np.load(out) as saved:
            outs.append(saved["delegate0_output0"])
    assert outs[0].tolist() == outs[1].tolist()
    assert len(set(outs[0].reshape(-1).tolist())) > 2


def test_cpu_only_model_has_nothing_to_simulate(
    pte_cpu_only: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["simulate", str(pte_cpu_only)]) == 2
    assert "no Ethos-U delegate" in capsys.readouterr().err


def test_a_vectors_file_feeds_back(pte_u55_shared: Path, tmp_path: Path) -> None:
    """`simulate -o v.npz` then `simulate --inputs v.npz`: its delegate0_input0 is the
    input (the outputs in the same file are not taken for inputs)."""
    first = _simulate(pte_u55_shared, tmp_path / "v.npz", "--seed", "7")
    again = _simulate(pte_u55_shared, tmp_path / "w.npz", "--inputs", str(tmp_path / "v.npz"))
    assert np.array_equal(first["delegate0_input0"], again["delegate0_input0"])
    assert np.array_equal(first["delegate0_output0"], again["delegate0_output0"])
