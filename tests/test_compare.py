"""`ethosu-kit compare A B [--pte] [--lsb N]`: results within N LSB of each tensor's scale.

Real files from the real commands: `simulate -o` twice (the same seed is bit-exact, a
changed value is found and counted in LSB), and a runner-style file (`output<o>`, float
as the program dequantizes it) against simulate's integers through the pte's own scales.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ethosu_kit.cli.app import main
from ethosu_kit.pte.quant import io_quantization


def _simulate(pte: Path, out: Path, seed: str = "3") -> dict[str, np.ndarray]:
    assert main(["simulate", str(pte), "--seed", seed, "-o", str(out)]) == 0
    with np.load(out) as data:
        return {k: data[k] for k in data.files}


def test_same_results_pass_and_a_changed_value_is_counted(
    data_pte_two_delegates: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = _simulate(data_pte_two_delegates, tmp_path / "a.npz")
    _simulate(data_pte_two_delegates, tmp_path / "b.npz")
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
    data_pte_u55_shared: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sim = _simulate(data_pte_u55_shared, tmp_path / "sim.npz")
    (qin,), (qout,) = io_quantization(data_pte_u55_shared)
    assert qin is not None and qout is not None
    deq = lambda q, v: ((v.astype(np.float32) - q.zero_point) * q.scale).astype(np.float32)  # noqa: E731
    runner = {
        "input0": deq(qin, sim["delegate0_input0"]),
        "output0": deq(qout, sim["delegate0_output0"]),
    }
    np.savez(tmp_path / "run.npz", **runner)
    args = ["compare", str(tmp_path / "run.npz"), str(tmp_path / "sim.npz")]
    assert main([*args, "--pte", str(data_pte_u55_shared)]) == 0
    text = capsys.readouterr().out
    assert "run.npz[output0] vs sim.npz[delegate0_output0]: max 0 LSB" in text, text
    # one output a whole LSB off: found, and accepted with --lsb 1
    runner["output0"].reshape(-1)[3] += np.float32(qout.scale)
    np.savez(tmp_path / "run.npz", **runner)
    assert main([*args, "--pte", str(data_pte_u55_shared)]) == 1
    assert main([*args, "--pte", str(data_pte_u55_shared), "--lsb", "1"]) == 0
    capsys.readouterr()
    # floats against integers without the pte: no scale to relate them, refused (it
    # said "max 124 (float, no scale: exact only) ... DIFFERENT"), with or without --lsb
    for extra in ([], ["--lsb", "1"]):
        assert main([*args, *extra]) == 2
        out, err = capsys.readouterr()
        assert "COMPARE" not in out and "Traceback" not in err, out + err
        error, hint = err.splitlines()
        assert error.startswith("error: run.npz[input0] is float32, sim.npz[delegate0_input0] int8")
        assert hint.startswith("hint: pass --pte"), err
    # floats against floats without the pte: bit-exact only; a tolerance needs the scale
    runner_only = tmp_path / "run2.npz"
    np.savez(runner_only, **runner)
    assert main(["compare", str(tmp_path / "run.npz"), str(runner_only)]) == 0
    assert main(["compare", str(tmp_path / "run.npz"), str(runner_only), "--lsb", "1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "--pte" in err and "Traceback" not in err


def test_another_models_pte_is_refused(
    data_pte_u55_shared: Path,
    data_pte_cpu_between: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`--pte` of another model gave these arrays that model's scales: a FAIL (or a PASS)
    about nothing. Each array paired with a program tensor must have that tensor's shape;
    the error names both."""
    _simulate(data_pte_u55_shared, tmp_path / "a.npz")
    _simulate(data_pte_u55_shared, tmp_path / "b.npz", seed="4")
    args = ["compare", str(tmp_path / "a.npz"), str(tmp_path / "b.npz")]
    assert main([*args, "--pte", str(data_pte_u55_shared)]) == 1  # its own pte: compared
    capsys.readouterr()
    assert main([*args, "--pte", str(data_pte_cpu_between)]) == 2
    out, err = capsys.readouterr()
    assert "COMPARE" not in out and len(err.splitlines()) == 2, out + err
    assert err.startswith(
        f"error: a.npz[delegate0_input0] has shape [1, 3, 16, 16], {data_pte_cpu_between.name}'s "
        "delegate 0 input 0 is [1, 4, 6, 6]"
    ), err
    # a runner's file (method tensors) against simulate's, with the other model's pte
    with np.load(tmp_path / "a.npz") as sim:
        ints = sim["delegate0_input0"]
    np.savez(tmp_path / "run.npz", input_0=ints.astype(np.float32) / 64)  # input_<i> too
    assert (
        main(["compare", str(tmp_path / "run.npz"), *args[2:], "--pte", str(data_pte_cpu_between)])
        == 2
    )
    assert "run.npz[input_0] has shape [1, 3, 16, 16]" in capsys.readouterr().err


@pytest.mark.parametrize("lsb", ["inf", "-inf", "nan", "-1", "1e400"])
def test_lsb_must_be_finite_and_not_negative(
    lsb: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--lsb inf` passed every difference; NaN and negative were already refused."""
    np.savez(tmp_path / "a.npz", output0=np.zeros(3, np.int8))
    np.savez(tmp_path / "b.npz", output0=np.full(3, 100, np.int8))
    assert main(["compare", str(tmp_path / "a.npz"), str(tmp_path / "b.npz"), f"--lsb={lsb}"]) == 2
    out, err = capsys.readouterr()
    assert "COMPARE" not in out and err.startswith("error: --lsb "), out + err
    assert "finite number >= 0" in err


def test_nothing_in_common_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    np.savez(tmp_path / "a.npz", x=np.zeros(3, np.int8))
    np.savez(tmp_path / "b.npz", y=np.zeros(3, np.int8))
    assert main(["compare", str(tmp_path / "a.npz"), str(tmp_path / "b.npz")]) == 2
    assert "no arrays to compare" in capsys.readouterr().err


def test_a_delegate_that_orders_its_io_otherwise_is_paired_by_the_program(
    data_pte_two_io: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two inputs and three outputs that the delegate numbers otherwise than the method:
    `simulate` feeds each float method input to the delegate input its quantize makes, and
    `compare --pte` pairs each method output with the delegate output its dequantize
    reads (by index the pairs would have different shapes, or wrong values)."""
    from ethosu_kit.inputs.compare import links_from_pte
    from ethosu_kit.pte import read_pte

    method = read_pte(data_pte_two_io).methods[0]
    (link,) = links_from_pte(data_pte_two_io).values()
    rng = np.random.default_rng(0)
    floats = [rng.uniform(-1, 1, size=t.shape).astype(np.float32) for t in method.inputs]
    files = []
    for i, x in enumerate(floats):
        files.append(str(tmp_path / f"x{i}.npy"))
        np.save(files[-1], x)
    assert (
        main(["simulate", str(data_pte_two_io), "--inputs", *files, "-o", str(tmp_path / "s.npz")])
        == 0
    )
    capsys.readouterr()
    with np.load(tmp_path / "s.npz") as data:
        sim = {k: data[k] for k in data.files}
    qin, qout = io_quantization(data_pte_two_io)
    for i, q in enumerate(qin):  # each float went to its own delegate input, with its scale
        assert q is not None
        want = np.clip(np.rint(floats[i] * (np.float32(1) / np.float32(q.scale))) + q.zero_point,
                       -128, 127)  # fmt: skip
        assert np.array_equal(sim[f"delegate0_input{link[('input', i)]}"], want.astype(np.int8))
    order = [link[("output", o)] for o in range(len(method.outputs))]
    assert order != list(range(len(order))), "the model no longer reorders: the test is void"
    runner = {}
    for o, (t, q) in enumerate(zip(method.outputs, qout, strict=True)):
        assert q is not None
        ints = sim[f"delegate0_output{order[o]}"]
        assert list(ints.shape) == list(t.shape)
        runner[f"output{o}"] = ((ints.astype(np.float32) - q.zero_point) * q.scale).astype(
            np.float32
        )
    np.savez(tmp_path / "run.npz", **runner)
    args = ["compare", str(tmp_path / "run.npz"), str(tmp_path / "s.npz")]
    assert main([*args, "--pte", str(data_pte_two_io)]) == 0
    assert "COMPARE PASS (3 of 3)" in capsys.readouterr().out


def test_one_lsb_in_float32_is_within_lsb_1() -> None:
    """Two float32 results one quantization step apart (a runner against the quantized
    PyTorch model): |a - b| / scale is 1.0000032 in float32 arithmetic, which once made
    `--lsb 1` say DIFFERENT with '0 of 512 beyond 1'. The verdict is the count."""
    from ethosu_kit.inputs.compare import compare
    from ethosu_kit.pte.quant import Quantization

    q = Quantization(0.00746206, -128)
    steps = np.arange(-128, 128, dtype=np.float32)
    a = ((steps - q.zero_point) * np.float32(q.scale)).astype(np.float32)
    b = ((np.minimum(steps + 1, 127) - q.zero_point) * np.float32(q.scale)).astype(np.float32)
    (result,) = compare({"output0": a}, {"output0": b}, ([], [q]), 1.0)
    assert result.max_lsb > 1.0  # float32 rounding: the case this test is about
    assert result.beyond == 0 and result.ok(1.0)
    (result,) = compare({"output0": a}, {"output0": b}, ([], [q]), 0.5)
    assert result.beyond == 255 and not result.ok(0.5)


def test_an_output_made_on_the_cpu_is_named_not_compared(
    data_pte_cpu_op: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The method's output is argmax, run on the CPU after the delegate: no delegate
    tensor is it, so pairing it with delegate0_output0 by index (what compare did) said
    DIFFERENT for a correct runner. It is named as not compared; the input still is."""
    sim = _simulate(data_pte_cpu_op, tmp_path / "sim.npz")
    (qin,), _ = io_quantization(data_pte_cpu_op)
    assert qin is not None
    x = ((sim["delegate0_input0"].astype(np.float32) - qin.zero_point) * qin.scale).astype(
        np.float32
    )
    np.savez(tmp_path / "run.npz", input0=x, output0=np.array([3], dtype=np.int64))
    args = [
        "compare",
        str(tmp_path / "run.npz"),
        str(tmp_path / "sim.npz"),
        "--pte",
        str(data_pte_cpu_op),
    ]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "output0: not compared: the program makes it on the CPU" in out, out
    assert "COMPARE PASS (1 of 1; 1 not compared: output0)" in out, out
    np.savez(tmp_path / "only.npz", output0=np.array([3], dtype=np.int64))
    args[1] = str(tmp_path / "only.npz")
    assert main(args) == 2
    assert "nothing to compare" in capsys.readouterr().err
    result = main(["inspect", str(data_pte_cpu_op)])
    assert result == 0
    assert "output 0: not quantized (through a CPU operator" in capsys.readouterr().out


def test_a_cpu_operator_between_delegates_is_compared_one_delegate_at_a_time(
    data_pte_cpu_between: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """conv, relu6 on the CPU, conv (docs/memory.md, "Comparing results"): the runner's
    input pairs with simulate --delegate 0's input, its output with simulate --delegate 1's
    output; the other method tensor is named as another delegate's, not compared."""
    (qin,), (qout,) = io_quantization(data_pte_cpu_between)
    assert qin is not None and qout is not None
    x = np.random.default_rng(5).uniform(-1, 1, (1, 4, 6, 6)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    pte = str(data_pte_cpu_between)
    assert main(["simulate", pte, "--inputs", str(tmp_path / "x.npy"), "--delegate", "0",
                 "-o", str(tmp_path / "s0.npz")]) == 0  # fmt: skip
    assert main(["simulate", pte, "--delegate", "1", "-o", str(tmp_path / "s1.npz")]) == 0
    with np.load(tmp_path / "s1.npz") as s1:
        y = ((s1["delegate1_output0"].astype(np.float32) - qout.zero_point) * qout.scale).astype(
            np.float32
        )
    np.savez(tmp_path / "run.npz", input0=x, output0=y)  # what run -o writes
    capsys.readouterr()
    for sim, paired, other in (("s0", "input0", "output0"), ("s1", "output0", "input0")):
        args = ["compare", str(tmp_path / "run.npz"), str(tmp_path / f"{sim}.npz"), "--pte", pte]
        assert main(args) == 0
        out = capsys.readouterr().out
        assert f"run.npz[{paired}] vs {sim}.npz[delegate" in out, out
        elsewhere = "delegate 1 output 0" if sim == "s0" else "delegate 0 input 0"
        assert f"{other}: not compared: it is {elsewhere}, which the files do not hold" in out
        assert f"COMPARE PASS (1 of 1; 1 not compared: {other})" in out, out
