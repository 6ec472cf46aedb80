"""The executor_runner linked with the user's ExecuTorch checkout, and run in QEMU.

- Missing checkouts stop the configure step with a message naming the setting (runs
  everywhere: it needs only cmake and the cross compiler).
- With EXECUTORCH_ROOT: a CPU-only program is built, run in QEMU (Corstone-300), and
  its printed outputs are compared with ExecuTorch's own Python runtime on the same
  .pte and the same inputs (all ones).
- With all three checkouts: a delegated program links with the Ethos-U delegate and
  the core driver.

The delegated program on the virtual NPU (outputs vs the host simulation, scratch and
working memory placement) is tests/test_vnpu_firmware.py.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from projects import make_project
from runner_build import EXTERNALS, build_runner, require_externals, run_qemu

pytestmark = pytest.mark.skipif(
    shutil.which("cmake") is None or shutil.which("arm-none-eabi-gcc") is None,
    reason="cmake and arm-none-eabi-gcc are needed to configure a firmware project",
)


def configure_without(project: Path, npu: str, unset: tuple[str, ...]) -> str:
    env = {k: v for k, v in os.environ.items() if k not in unset}
    result = subprocess.run(
        ["cmake", "--preset", "gcc", "-DETHOSU_KIT_APP=executor_runner", f"-DETHOSU_KIT_NPU={npu}"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert result.returncode != 0, "configure must stop without the checkout"
    return result.stdout + result.stderr


def test_missing_driver_is_named(pte_u55_shared: Path, tmp_path: Path) -> None:
    project = make_project(pte_u55_shared, tmp_path / "fw").path
    text = configure_without(project, "driver", EXTERNALS)
    assert "ETHOSU_DRIVER_ROOT" in text
    assert "docs/executorch.md" in text


def test_missing_executorch_is_named(pte_u55_shared: Path, tmp_path: Path) -> None:
    project = make_project(pte_u55_shared, tmp_path / "fw").path
    text = configure_without(project, "none", EXTERNALS)
    assert "EXECUTORCH_ROOT" in text
    assert "v1.5.1" in text


RUNNER_CMAKE = Path(__file__).resolve().parent.parent / "apps/executor_runner/executor_runner.cmake"


def runtime_choice(tmp_path: Path, prim_source: str | None, operators: list[str]) -> str:
    """What the runner's CMake makes of an operator list against a register_prim_ops.cpp
    (None: the checkout has none): `prim=<ops> lib=<library> slots=<prim-op slots>`."""
    root = tmp_path / "executorch"
    tmp_path.mkdir(parents=True, exist_ok=True)
    if prim_source is not None:
        (root / "kernels/prim_ops").mkdir(parents=True)
        (root / "kernels/prim_ops/register_prim_ops.cpp").write_text(prim_source)
    listing = tmp_path / "kit_operators.txt"
    listing.write_text("# comment\n" + "".join(f"{op}\n" for op in operators))
    script = tmp_path / "choice.cmake"
    script.write_text(
        "cmake_minimum_required(VERSION 3.20)\n"
        f'include("{RUNNER_CMAKE}")\n'
        f'_ethosu_kit_prim_op_names("{root}" names)\n'
        f'_ethosu_kit_read_operators("{listing}" "${{names}}" portable quantized prim)\n'
        '_ethosu_kit_runtime_library("${names}" "${prim}" lib slots)\n'
        'message(STATUS "prim=${prim} lib=${lib} slots=${slots}")\n'
    )
    result = subprocess.run(
        ["cmake", "-P", str(script)], capture_output=True, text=True, check=False, timeout=60
    )
    assert result.returncode == 0, result.stdout + result.stderr
    found = re.search(r"-- (prim=.*)$", result.stdout, re.MULTILINE)
    assert found is not None, result.stdout
    return found.group(1)


PRIM_SOURCE = """static Kernel prim_ops[] = {
    Kernel(
        "aten::sym_size.int",
        [](KernelRuntimeContext& context, Span<EValue*> stack) {}),
    Kernel("executorch_prim::et_view.default", et_view),
};"""


def test_prim_ops_only_for_a_program_that_uses_one(tmp_path: Path) -> None:
    """ExecuTorch's primitive ops (the names its register_prim_ops.cpp registers, or any
    executorch_prim::) are linked, and given kernel-table slots, only for a program that
    uses one; with the names unknown, always."""
    ops = ["aten::add.out", "quantized_decomposed::quantize_per_tensor.out"]
    assert runtime_choice(tmp_path / "a", PRIM_SOURCE, ops) == "prim= lib=executorch_core slots=0"
    assert (
        runtime_choice(tmp_path / "b", PRIM_SOURCE, [*ops, "aten::sym_size.int"])
        == "prim=aten::sym_size.int lib=executorch slots=2"
    )
    assert (
        runtime_choice(tmp_path / "c", PRIM_SOURCE, ["executorch_prim::mod.int"])
        == "prim=executorch_prim::mod.int lib=executorch slots=2"
    )
    assert runtime_choice(tmp_path / "d", None, ops) == "prim= lib=executorch slots=64"
    if os.environ.get("EXECUTORCH_ROOT"):  # the checkout's own list: 28 in ExecuTorch 1.5
        source = Path(os.environ["EXECUTORCH_ROOT"], "kernels/prim_ops/register_prim_ops.cpp")
        choice = runtime_choice(tmp_path / "e", source.read_text(), ["aten::sym_numel"])
        assert choice.startswith("prim=aten::sym_numel lib=executorch slots=")
        assert int(choice.rsplit("=", 1)[1]) >= 20


def reference_outputs(pte: Path, inputs: list[Any]) -> list[Any]:
    """ExecuTorch's own runtime (the pip wheel) on the same program."""
    from executorch.runtime import Runtime

    method = Runtime.get().load_program(pte).load_method("forward")
    return list(method.execute(inputs))


def assert_outputs_like_executorch(run: Any, project: Path, pte: Path) -> dict[str, Any]:
    """The runner's printed outputs (all-ones inputs) are ExecuTorch's own runtime's; the
    method's model_info entry back."""
    torch = pytest.importorskip("torch")
    info = json.loads((project / "model_info.json").read_text())
    method: dict[str, Any] = info["methods"][0]
    inputs = [torch.ones(t["shape"], dtype=getattr(torch, t["dtype"])) for t in method["inputs"]]
    expected = reference_outputs(pte, inputs)
    printed = run.outputs()
    assert len(printed) == len(expected)
    for out, ref in zip(printed, expected, strict=True):
        assert out.shape == tuple(ref.shape)
        flat = ref.flatten().tolist()
        assert out.count == len(flat)
        for got, want in zip(out.values, flat, strict=False):
            assert got == pytest.approx(want, abs=1e-4, rel=1e-4), run.uart
    return method


def kernels_registered(uart: str) -> int:
    kernels = re.search(r"^kit: (\d+) kernels registered", uart, re.MULTILINE)
    assert kernels is not None, uart
    return int(kernels.group(1))


def test_cpu_only_program_runs_in_qemu_like_executorch(pte_cpu_only: Path, tmp_path: Path) -> None:
    require_externals("EXECUTORCH_ROOT")
    pytest.importorskip("torch")
    project = make_project(pte_cpu_only, tmp_path / "fw", allow_cpu_only=True).path
    elf = build_runner(project, npu="none")
    run = run_qemu(elf)
    assert run.exit_code == 0, run.uart
    assert "kit: exit 0" in run.uart
    method = assert_outputs_like_executorch(run, project, pte_cpu_only)

    # no primitive op in this program: ExecuTorch's core alone, the model's kernels only
    assert kernels_registered(run.uart) == len(method["cpu_operators"]), run.uart

    pools = run.pools()
    for name, (used, size) in pools.items():
        assert used <= size, f"{name}: {used} > {size}"
    planned = pools["planned_1"]
    assert planned[0] == method["planned_buffers"][0], "planned span must be the exact size"


def is_prim_op(op: str) -> bool:
    """ExecuTorch's primitive ops among the cpu_map program's (register_prim_ops.cpp)."""
    return op.startswith(("executorch_prim::", "aten::sym_size."))


def test_prim_ops_are_linked_only_for_a_program_that_uses_them(
    pte_cpu_map: Path, tmp_path: Path
) -> None:
    """A program with control flow uses ExecuTorch's primitive ops: the runner links them
    (and counts them into the kernel table) and runs it like ExecuTorch. Listed nowhere,
    they are not linked, and the method load fails by name (exit code 3)."""
    require_externals("EXECUTORCH_ROOT")
    pytest.importorskip("torch")
    project = make_project(pte_cpu_map, tmp_path / "fw", allow_cpu_only=True).path
    listing = project / "generated/kit_operators.txt"
    ops = [line for line in listing.read_text().splitlines() if line and line[0] != "#"]
    prim = [op for op in ops if is_prim_op(op)]
    assert prim, f"the map program must use a prim op: {ops}"
    run = run_qemu(build_runner(project, npu="none"))
    assert run.exit_code == 0, run.uart
    assert_outputs_like_executorch(run, project, pte_cpu_map)
    # all the prim ops (28 in ExecuTorch 1.5) + the program's other kernels
    assert kernels_registered(run.uart) >= 20 + len(ops) - len(prim), run.uart

    # the listing without its prim ops (a hand edit: gen always lists them)
    listing.write_text("".join(f"{op}\n" for op in ops if not is_prim_op(op)))
    run = run_qemu(build_runner(project, npu="none"))
    assert run.exit_code == 3, run.uart
    # by index and name: ExecuTorch's "[%zd] %s", formatted by the kit's vsnprintf (not
    # newlib-nano's, which has no %zd and printed a wrong pointer as the name)
    missing = re.findall(r"Missing operator: \[(\d+)\] (\S+)$", run.uart, re.MULTILINE)
    assert missing, run.uart
    assert all(name in prim for _, name in missing), (missing, prim)
    assert kernels_registered(run.uart) == len(ops) - len(prim), run.uart


def test_delegated_program_links_with_driver(pte_u55_shared: Path, tmp_path: Path) -> None:
    require_externals(*EXTERNALS)
    from elftools.elf.elffile import ELFFile
    from elftools.elf.sections import SymbolTableSection

    project = make_project(pte_u55_shared, tmp_path / "fw").path
    elf = build_runner(project, npu="driver")
    with elf.open("rb") as f:
        symtab = ELFFile(f).get_section_by_name(".symtab")
        assert isinstance(symtab, SymbolTableSection)
        names = {s.name for s in symtab.iter_symbols()}
    for needed in ("ethosu_invoke_v3", "kit_temp_pool", "kit_method_pool", "kit_planned_1", "main"):
        assert needed in names, f"{needed} missing from {elf}"
    # QEMU has no NPU at the board's address: the platform init fails, and the runner stops
    # with its code (17, as the bring-up and self-test) instead of running on to the limit
    run = run_qemu(elf)
    assert run.exit_code == 17, run.uart
    assert "kit: platform init failed" in run.uart, run.uart
