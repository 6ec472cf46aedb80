"""`ethosu-kit simulate`: the NPU part of real .pte files on the virtual NPU, through the CLI."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ethosu_kit.cli.app import main


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


def test_float_inputs_are_quantized_as_the_program_does(
    pte_u55_shared: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The method's float inputs (what `run --inputs` takes, or a `run -o` file): each is
    quantized with the scale and zero point of the program's own quantize_per_tensor, in
    float32 as ExecuTorch's kernel computes it (ties to even), so simulate's integers are
    the runner's. The scale is read here with ExecuTorch's own deserializer."""
    from vnpu_support import quant_params

    scale, zp, qmin, qmax = quant_params(pte_u55_shared)["quantize_per_tensor"]
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((1, 3, 16, 16)) * 2).astype(np.float32)
    x.reshape(-1)[:4] = np.float32(scale) * np.array([0.5, 1.5, -2.5, 1e6], dtype=np.float32)
    np.save(tmp_path / "x.npy", x)
    got = _simulate(pte_u55_shared, tmp_path / "f.npz", "--inputs", str(tmp_path / "x.npy"))
    assert "quantized as the program's quantize_per_tensor does" in capsys.readouterr().out
    want = np.clip(np.rint(x * (np.float32(1.0) / np.float32(scale))) + zp, qmin, qmax)
    assert np.array_equal(got["delegate0_input0"].astype(np.int64), want.astype(np.int64))
    assert got["delegate0_input0"].reshape(-1)[3] == qmax  # clamped, not wrapped
    # the same integers given as integers: the same outputs
    np.save(tmp_path / "q.npy", got["delegate0_input0"])
    ints = _simulate(pte_u55_shared, tmp_path / "i.npz", "--inputs", str(tmp_path / "q.npy"))
    assert np.array_equal(ints["delegate0_output0"], got["delegate0_output0"])
    # a `run -o` file: its input<i> are the inputs, its output<o> are not
    np.savez(tmp_path / "run.npz", input0=x, output0=np.zeros((1, 4), np.float32))
    again = _simulate(pte_u55_shared, tmp_path / "r.npz", "--inputs", str(tmp_path / "run.npz"))
    assert np.array_equal(again["delegate0_output0"], got["delegate0_output0"])
    # NaN cannot be quantized: one error, no traceback
    x.reshape(-1)[7] = np.nan
    np.save(tmp_path / "nan.npy", x)
    assert main(["simulate", str(pte_u55_shared), "--inputs", str(tmp_path / "nan.npy")]) == 2
    assert "NaN or infinity" in capsys.readouterr().err


def test_a_float_input_is_not_given_to_a_delegate_it_does_not_feed(
    pte_cpu_between: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """conv, relu6 on the CPU, conv: two delegates, and delegate 1's input is the program's
    quantize of the CPU's relu6, with a scale of its own. The method's float input (same
    shape) was quantized with that scale and fed to delegate 1 (simulate printed the
    internal quantize's scale, compare then failed 568 of 576): it feeds delegate 0 only."""
    x = np.random.default_rng(4).uniform(-1, 1, (1, 4, 6, 6)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    args = ["simulate", str(pte_cpu_between), "--inputs", str(tmp_path / "x.npy")]
    assert main([*args, "--delegate", "1", "-o", str(tmp_path / "s1.npz")]) == 2
    out, err = capsys.readouterr()
    assert "quantized" not in out and not (tmp_path / "s1.npz").exists()
    lines = err.splitlines()
    assert len(lines) == 2 and lines[0].startswith("error: ") and "Traceback" not in err, err
    assert "method input 0 feeds delegate 0 input 0" in lines[0], err
    assert "not delegate 1 input 0" in lines[0], err
    assert lines[1].startswith("hint: ") and "--delegate 0" in lines[1], err
    assert "delegate1_input0" in lines[1], err
    # the delegate it feeds takes it; delegate 1 takes its own integers
    s0 = _simulate(pte_cpu_between, tmp_path / "s0.npz", *args[2:], "--delegate", "0")
    assert set(s0) == {"delegate0_input0", "delegate0_output0"}
    np.savez(tmp_path / "v1.npz", delegate1_input0=s0["delegate0_output0"])
    s1 = _simulate(
        pte_cpu_between,
        tmp_path / "s1.npz",
        "--inputs",
        str(tmp_path / "v1.npz"),
        "--delegate",
        "1",
    )
    assert np.array_equal(s1["delegate1_input0"], s0["delegate0_output0"])
