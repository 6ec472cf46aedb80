"""`ethosu-kit inspect` and `lower-example` as a user runs them, and the no-torch promise."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ethosu_kit.pte import read_pte
from ethosu_kit.pte.describe import describe_model

HEAVY = frozenset({"torch", "executorch", "torchao", "torchgen"})


def _cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("ethosu-kit")
    cmd = [exe] if exe else [sys.executable, "-m", "ethosu_kit"]
    return subprocess.run(
        [*cmd, *args], capture_output=True, text=True, timeout=timeout, check=False
    )


def _imported_modules(code: str) -> set[str]:
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    modules = set()
    for line in result.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            modules.add(line.rsplit("|", 1)[1].strip())
    return modules


@pytest.mark.parametrize(
    "code",
    [
        "from ethosu_kit.pte import read_pte; read_pte({p!r})",
        "from ethosu_kit.cli.app import main; main(['inspect', {p!r}])",
        "from ethosu_kit.cli.app import main; main(['inspect', '--json', {p!r}])",
    ],
)
def test_reading_never_imports_torch_or_executorch(data_pte_u85_dedicated: Path, code: str) -> None:
    modules = _imported_modules(code.format(p=str(data_pte_u85_dedicated)))
    assert "ethosu_kit.pte.reader" in modules  # the probe really ran the reader
    assert not sorted(m for m in modules if m.split(".")[0] in HEAVY)


def test_inspect_prints_the_numbers(data_pte_cpu_op: Path) -> None:
    result = _cli("inspect", str(data_pte_cpu_op))
    assert result.returncode == 0, result.stderr
    info = read_pte(data_pte_cpu_op)
    out = result.stdout
    assert out.startswith(describe_model(info))
    (m,) = info.methods
    (d,) = m.delegates
    assert d.vela is not None and d.ethosu is not None
    assert "Ethos-U target: ethos-u55-128, Shared_Sram" in out
    assert "aten::argmax.out" in out
    assert f"mem_id 1 {m.planned_buffers[0]:,} B" in out
    for number in (d.vela.scratch_size, d.vela.weight_bytes, d.processed_bytes, info.file_bytes):
        assert f"{number:,}" in out
    assert "COP1: ethos-u55, 128 MACs/cc" in out


def test_inspect_names_the_vela_version_when_the_pte_says_it(data_pte_cpu_op: Path) -> None:
    """ExecuTorch 1.5's compile specs name no Vela version (and the stream carries none):
    inspect says so; a compile spec naming one is printed."""
    import dataclasses

    from ethosu_kit.pte.describe import VELA_NOT_RECORDED

    info = read_pte(data_pte_cpu_op)
    assert f"Vela: {VELA_NOT_RECORDED}" in describe_model(info)
    (m,) = info.methods
    delegates = tuple(
        dataclasses.replace(d, compile_specs=(*d.compile_specs, ("vela_version", b"5.2.0")))
        for d in m.delegates
    )
    said = dataclasses.replace(info, methods=(dataclasses.replace(m, delegates=delegates),))
    assert "Vela: 5.2.0\n" in describe_model(said)


def test_inspect_names_each_inputs_scale_and_delegate_tensor(data_pte_two_io: Path) -> None:
    """The scale and zero point of each method input and output (the program's own
    quantize/dequantize, read here with ExecuTorch's deserializer) and which delegate
    tensor it is: this model's delegate numbers its outputs otherwise than the method."""
    serialize = pytest.importorskip("executorch.exir._serialize._program")
    result = _cli("inspect", str(data_pte_two_io))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.split("quantization (the program's quantize/dequantize")[1]
    program = serialize.deserialize_pte_binary(data_pte_two_io.read_bytes())
    plan = getattr(program, "program", program).execution_plan[0]
    for ins in plan.chains[0].instructions:
        args = ins.instr_args
        if type(args).__name__ != "KernelCall" or args.args[0] not in plan.inputs:
            continue
        assert plan.operators[args.op_index].name.endswith("quantize_per_tensor")
        i = list(plan.inputs).index(args.args[0])
        scale = plan.values[args.args[1]].val.double_val
        zp = plan.values[args.args[2]].val.int_val
        assert f"  input {i}: scale {scale:.9g}, zero point {zp} -> delegate 0 input " in lines
    (output0,) = [line for line in lines.splitlines() if line.startswith("  output 0: scale ")]
    assert "<- delegate 0 output " in output0 and not output0.endswith(" output 0"), output0
    assert "  output 2: scale " in lines


def test_inspect_cpu_only(data_pte_cpu_only: Path) -> None:
    result = _cli("inspect", str(data_pte_cpu_only))
    assert result.returncode == 0, result.stderr
    assert "no Ethos-U delegate" in result.stdout
    assert "aten::addmm.out" in result.stdout


def test_inspect_json_is_model_info(data_pte_u85_dedicated: Path) -> None:
    result = _cli("inspect", "--json", str(data_pte_u85_dedicated))
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    info = read_pte(data_pte_u85_dedicated)
    assert data == json.loads(json.dumps(info.to_dict()))
    (delegate,) = data["methods"][0]["delegates"]
    assert delegate["ethosu"]["memory_mode"] == "Dedicated_Sram"
    assert delegate["ethosu"]["memory_mode_name"] == "Dedicated_Sram_384KB"
    assert data["peak_scratch"] == delegate["vela"]["scratch_size"]


def test_lower_example_rejects_a_bad_accelerator_without_lowering(tmp_path: Path) -> None:
    out = tmp_path / "m.pte"
    result = _cli("lower-example", "-o", str(out), "--accelerator", "ethos-u99-1")
    assert result.returncode != 0 and "error: --accelerator 'ethos-u99-1'" in result.stderr
    assert "Traceback" not in result.stderr and not out.exists()


@pytest.mark.lowering
@pytest.mark.slow
def test_lower_example_then_inspect(tmp_path: Path) -> None:
    pytest.importorskip("executorch.backends.arm", reason="lower-example needs executorch")
    out = tmp_path / "sub" / "u85.pte"
    result = _cli(
        "lower-example", "-o", str(out), "--accelerator", "ethos-u85-256",
        "--memory-mode", "Shared_Sram", timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"wrote {out}")
    assert "Vela" not in result.stdout and "Total SRAM used" not in result.stdout
    assert [p.name for p in out.parent.iterdir()] == ["u85.pte"]  # no temporary left over
    spec = read_pte(out).compile_spec
    assert spec is not None
    assert (str(spec.accelerator), spec.memory_mode_name) == ("ethos-u85-256", "Shared_Sram")
