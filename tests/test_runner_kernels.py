"""The executor_runner's selective kernel build: every operator the non-delegated part of
every method of every program calls is selected (generated/kit_operators.txt, each with
the programs that call it in an image of several), and an operator the ExecuTorch
checkout has no kernel for stops the configure step naming it and its program, instead
of a firmware whose method load fails with "Missing operator" (exit code 3).

`two_delegates.pte` (program `vww` of tests/test_multi_fw.py) calls `aten::sort.values`
between its two Ethos-U delegates: ExecuTorch 1.5 has a kernel for it only in ATen mode
(kernels/aten/functions.yaml, libtorch's), none in its portable or quantized kernels, so
the runner cannot run it. Without the checks here its build compiled all ~180 portable
kernels (no op_sort.cpp to select) and the firmware stopped at the method load.
"""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
from pathlib import Path

import pytest

from ethosu_kit.cli.app import main as kit_main
from ethosu_kit.pte import read_pte
from hostile import assert_refused, run_kit
from runner_build import require_externals

PTE = Path(__file__).resolve().parent / "data" / "pte"
RUNNER_CMAKE = Path(__file__).resolve().parent.parent / "apps/executor_runner/executor_runner.cmake"
VWW_OPERATORS = (
    "quantized_decomposed::quantize_per_tensor.out",
    "quantized_decomposed::dequantize_per_tensor.out",
    "aten::sort.values",
)

needs_cmake = pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake is not installed")


def listed(text: str) -> dict[str, str]:
    """kit_operators.txt: operator -> the comment after it ('' without one)."""
    found = {}
    for line in text.splitlines():
        op, _, comment = line.partition("#")
        if op.strip():
            found[op.strip()] = comment.strip()
    return found


def test_operators_of_the_checked_in_program() -> None:
    """The operators of the pte's kernel calls, as the operator table spells them."""
    model = read_pte(PTE / "two_delegates.pte")
    assert model.cpu_operators == VWW_OPERATORS
    assert [len(m.delegates) for m in model.methods] == [2]


def test_every_method_is_selected() -> None:
    """A program's list is the union of its methods' (first use order, no repeats)."""
    model = read_pte(PTE / "two_delegates.pte")
    (forward,) = model.methods
    other = dataclasses.replace(forward, name="other", cpu_operators=("aten::argmax.out",))
    both = dataclasses.replace(model, methods=(forward, other))
    assert both.cpu_operators == (*VWW_OPERATORS, "aten::argmax.out")


def test_every_program_is_selected_with_its_callers(tmp_path: Path) -> None:
    """An image of several programs selects every program's operators; the comment after
    each names the programs calling it (what the configure step's refusal names)."""
    out = tmp_path / "fw"
    argv = ["gen", "--pte", f"vww={PTE / 'two_delegates.pte'}", "--pte"]
    argv += [f"kws={PTE / 'cpu_op.pte'}", "--board", "corstone-300", "-o", str(out), "-q"]
    assert kit_main(argv) == 0
    ops = listed((out / "generated/kit_operators.txt").read_text())
    assert ops == {
        "quantized_decomposed::quantize_per_tensor.out": "vww, kws",
        "quantized_decomposed::dequantize_per_tensor.out": "vww, kws",
        "aten::sort.values": "vww",
        "aten::argmax.out": "kws",
    }


def require_kernels(tmp_path: Path, et_root: Path, listing: str, *defines: str) -> str:
    """`_ethosu_kit_require_kernels` on a listing against a checkout: cmake -P's output,
    'ok' appended when it passed."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "kit_operators.txt").write_text(listing)
    script = tmp_path / "check.cmake"
    script.write_text(
        "cmake_minimum_required(VERSION 3.20)\n"
        f'include("{RUNNER_CMAKE}")\n'
        f'_ethosu_kit_read_operators("{tmp_path}/kit_operators.txt" "" portable quantized prim)\n'
        f'_ethosu_kit_require_kernels("{tmp_path}/kit_operators.txt" "{et_root}" '
        '"${portable}" "${quantized}")\n'
        'message(STATUS "ok")\n'
    )
    result = subprocess.run(
        ["cmake", *(f"-D{d}" for d in defines), "-P", str(script)],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    text = " ".join((result.stdout + result.stderr).split())
    return text + (" ok" if result.returncode == 0 else "")


@needs_cmake
def test_missing_kernel_is_named_with_its_program(tmp_path: Path) -> None:
    """A checkout's registration lists (portable `- op:`, quantized `- func: ns::name(`)
    decide; the refusal names each missing operator and its callers, nothing else."""
    root = tmp_path / "executorch"
    (root / "kernels/portable").mkdir(parents=True)
    (root / "kernels/quantized").mkdir(parents=True)
    (root / "kernels/portable/functions.yaml").write_text(
        "- op: argmax.out\n  kernels:\n    - arg_meta: null\n"
        # portable spells a few aten operators this way (the bitwise shifts)
        "- func: bitwise_left_shift.Tensor_out(Tensor self, Tensor other) -> Tensor(a!)\n"
    )
    (root / "kernels/quantized/quantized.yaml").write_text(
        "- func: quantized_decomposed::quantize_per_tensor.out(Tensor input) -> Tensor(a!)\n"
    )
    listing = (
        "# header\naten::argmax.out  # kws\naten::sort.values  # vww, tio\n"
        "aten::bitwise_left_shift.Tensor_out  # kws\n"
        "quantized_decomposed::quantize_per_tensor.out  # vww\n"
        "quantized_decomposed::dequantize_per_tensor.out  # kws\n"
    )
    said = require_kernels(tmp_path / "a", root, listing)
    assert not said.endswith(" ok"), said
    assert (
        f"no kernel in ExecuTorch at {root} for aten::sort.values (program vww, tio), "
        "quantized_decomposed::dequantize_per_tensor.out (program kws):" in said
    ), said
    assert "argmax" not in said and "bitwise" not in said, said
    # one program, no comments: the program is the project's
    said = require_kernels(tmp_path / "b", root, "aten::sort.values\n")
    assert "aten::sort.values (the program, generated/model.pte)" in said, said
    # a tree linking kernels of its own names them
    own = "ETHOSU_KIT_OWN_KERNELS=aten::sort.values;quantized_decomposed::dequantize_per_tensor.out"
    assert require_kernels(tmp_path / "c", root, listing, own).endswith(" ok")
    # not a source tree (an installed package): the check is the selective build's
    assert require_kernels(tmp_path / "d", tmp_path / "none", listing).endswith(" ok")


@needs_cmake
def test_checkout_kernels(tmp_path: Path) -> None:
    """With the user's ExecuTorch: the delegated test programs' operators have kernels;
    vww's aten::sort.values has none (ExecuTorch 1.5)."""
    et_root = Path(require_externals("EXECUTORCH_ROOT")["EXECUTORCH_ROOT"])
    have = "".join(f"{op}\n" for p in ("u55_shared", "cpu_op", "big_input", "cpu_between")
                   for op in read_pte(PTE / f"{p}.pte").cpu_operators)  # fmt: skip
    assert require_kernels(tmp_path / "ok", et_root, have).endswith(" ok")
    said = require_kernels(tmp_path / "vww", et_root, "aten::sort.values  # vww\n")
    assert f"no kernel in ExecuTorch at {et_root} for aten::sort.values (program vww)" in said


@pytest.mark.firmware
def test_build_refuses_before_compiling(tmp_path: Path) -> None:
    """`ethosu-kit build --app executor_runner` of an image with vww: one error line naming
    the operator and the program, from the configure step (nothing compiled)."""
    require_externals("EXECUTORCH_ROOT", "ETHOSU_DRIVER_ROOT", "CMSIS_ROOT")
    out = tmp_path / "fw"
    argv = ["gen", "--pte", f"kws={PTE / 'u55_shared.pte'}", "--pte"]
    argv += [f"vww={PTE / 'two_delegates.pte'}", "--board", "corstone-300"]
    assert kit_main([*argv, "--npu", "virtual", "-o", str(out), "-q"]) == 0
    result = run_kit(
        "build", out, "--app", "executor_runner", "--npu", "virtual", timeout=600
    )  # fmt: skip
    assert_refused(result, "aten::sort.values (program vww)", "configure failed")
    assert not list((out / "build").rglob("*.obj")), "compiled before refusing"
