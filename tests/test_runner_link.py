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

from runner_build import EXTERNALS, build_runner, generate, require_externals, run_qemu

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
    project = generate(pte_u55_shared, tmp_path / "fw")
    text = configure_without(project, "driver", EXTERNALS)
    assert "ETHOSU_DRIVER_ROOT" in text
    assert "docs/executorch.md" in text


def test_missing_executorch_is_named(pte_u55_shared: Path, tmp_path: Path) -> None:
    project = generate(pte_u55_shared, tmp_path / "fw")
    text = configure_without(project, "none", EXTERNALS)
    assert "EXECUTORCH_ROOT" in text
    assert "v1.5.1" in text


def reference_outputs(pte: Path, inputs: list[Any]) -> list[Any]:
    """ExecuTorch's own runtime (the pip wheel) on the same program."""
    from executorch.runtime import Runtime

    method = Runtime.get().load_program(pte).load_method("forward")
    return list(method.execute(inputs))


def test_cpu_only_program_runs_in_qemu_like_executorch(pte_cpu_only: Path, tmp_path: Path) -> None:
    require_externals("EXECUTORCH_ROOT")
    torch = pytest.importorskip("torch")
    project = generate(pte_cpu_only, tmp_path / "fw", "--allow-cpu-only")
    elf = build_runner(project, npu="none")
    run = run_qemu(elf)
    assert run.exit_code == 0, run.uart
    assert "kit: exit 0" in run.uart

    info = json.loads((project / "model_info.json").read_text())
    method = info["methods"][0]
    inputs = [torch.ones(t["shape"], dtype=getattr(torch, t["dtype"])) for t in method["inputs"]]
    expected = reference_outputs(pte_cpu_only, inputs)
    printed = run.outputs()
    assert len(printed) == len(expected)
    for out, ref in zip(printed, expected, strict=True):
        assert out.shape == tuple(ref.shape)
        flat = ref.flatten().tolist()
        assert out.count == len(flat)
        for got, want in zip(out.values, flat, strict=False):
            assert got == pytest.approx(want, abs=1e-4, rel=1e-4), run.uart

    kernels = re.search(r"^kit: (\d+) kernels registered", run.uart, re.MULTILINE)
    assert kernels is not None, run.uart
    n_ops = len(method["cpu_operators"])
    assert n_ops < int(kernels.group(1)) <= 64 + n_ops, "prim ops + the model's, table sized to fit"

    pools = run.pools()
    for name, (used, size) in pools.items():
        assert used <= size, f"{name}: {used} > {size}"
    planned = pools["planned_1"]
    assert planned[0] == method["planned_buffers"][0], "planned span must be the exact size"


def test_delegated_program_links_with_driver(pte_u55_shared: Path, tmp_path: Path) -> None:
    require_externals(*EXTERNALS)
    from elftools.elf.elffile import ELFFile
    from elftools.elf.sections import SymbolTableSection

    project = generate(pte_u55_shared, tmp_path / "fw")
    elf = build_runner(project, npu="driver")
    with elf.open("rb") as f:
        symtab = ELFFile(f).get_section_by_name(".symtab")
        assert isinstance(symtab, SymbolTableSection)
        names = {s.name for s in symtab.iter_symbols()}
    for needed in ("ethosu_invoke_v3", "kit_temp_pool", "kit_method_pool", "kit_planned_1", "main"):
        assert needed in names, f"{needed} missing from {elf}"
