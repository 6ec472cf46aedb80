"""Generate, build bringup with the real cross compiler, check-elf, run in QEMU: per board/mode."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ethosu_kit.core.errors import KitError
from ethosu_kit.firmware.elf_check import check_elf
from ethosu_kit.firmware.qemu import run_elf
from ethosu_kit.plan.types import Role
from fw_helpers import built, need_qemu

pytestmark = pytest.mark.firmware

CONFIGS = [
    # (fixture, board, mode, QEMU can run it)
    ("pte_u55_shared", "cs300", "Shared_Sram", True),
    ("pte_u55_sram_only", "cs300", "Sram_Only", True),
    ("pte_u65_dedicated", "cs300", "Dedicated_Sram", True),
    ("pte_u85_dedicated", "cs320", "Dedicated_Sram", False),
    ("pte_u85_shared", "cs320", "Shared_Sram", False),
]


@pytest.fixture(scope="session")
def fw_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fw")


def _plan_buffers(plan_path: Path) -> list[dict[str, object]]:
    import json

    plan = json.loads(plan_path.read_text())
    return [
        b
        for b in plan["buffers"]
        if b["symbol"] and b["role"] not in (Role.CODE.value, Role.DATA.value)
    ]


@pytest.mark.parametrize(("fixture", "board", "mode", "qemu"), CONFIGS)
def test_bringup(  # noqa: PLR0917 - pytest parameters
    request: pytest.FixtureRequest, fw_root: Path, fixture: str, board: str, mode: str, qemu: bool
) -> None:
    pte: Path = request.getfixturevalue(fixture)
    b = built(pte, board, mode, fw_root)
    result = check_elf(b.elf, b.plan)
    assert result.ok, [v.message for v in result.violations]
    buffers = _plan_buffers(b.plan)
    assert sorted(result.checked) == sorted(str(x["name"]) for x in buffers)
    if mode == "Dedicated_Sram":
        assert any(x["role"] == Role.FAST_SCRATCH.value for x in buffers)

    if not qemu:
        with pytest.raises(KitError, match=r"outside the memory QEMU.s mps3-an547 has"):
            run_elf(b.elf, timeout=5)
        return
    need_qemu()
    run = run_elf(b.elf, timeout=30)
    assert not run.timed_out, run.output
    assert run.exit_code == 0, run.output
    for x in buffers:
        line = re.search(rf"^buffer {x['name']} +addr=0x([0-9a-f]+) .*$", run.output, re.M)
        assert line, f"no placement line for {x['name']}:\n{run.output}"
        assert f"region={x['region']} " in line.group(0)
        assert line.group(0).endswith("PASS"), line.group(0)
    assert f"{len(buffers)} buffers checked, 0 failed" in run.output
    assert "BRINGUP PASS" in run.output


@pytest.mark.qemu
def test_bringup_clang(pte_u55_shared: Path, fw_root: Path) -> None:
    """The same project with clang-19 + lld against the arm-none-eabi newlib."""
    import shutil

    if shutil.which("clang-19") is None and shutil.which("clang") is None:
        pytest.skip("clang-19 is not installed")
    b = built(pte_u55_shared, "cs300", "Shared_Sram", fw_root, toolchain="clang")
    assert check_elf(b.elf, b.plan).ok
    need_qemu()
    run = run_elf(b.elf, timeout=30)
    assert run.exit_code == 0, run.output
    assert "BRINGUP PASS" in run.output


def test_bringup_catches_a_bad_buffer(pte_u55_shared: Path, fw_root: Path) -> None:
    """The bring-up must be able to fail: a plan region it cannot find is a FAIL, exit 1."""
    b = built(pte_u55_shared, "cs300", "Shared_Sram", fw_root)
    need_qemu()
    # Relabel the temp pool's region in the compiled-in X-macro: the address stays in
    # SRAM, so the firmware must report the mismatch and exit non-zero.
    cfg = b.project / "generated" / "kit_memory_config.h"
    bad = b.project.parent / "bad-region"
    if not bad.exists():
        import shutil

        shutil.copytree(b.project, bad, ignore=shutil.ignore_patterns("build"))
        text = (bad / "generated" / cfg.name).read_text()
        text = re.sub(r'(X\(temp_pool, kit_temp_pool, \w+, )"SRAM"', r'\1"DDR"', text)
        (bad / "generated" / cfg.name).write_text(text)
    from ethosu_kit.firmware.build import build_project

    elf = build_project(bad, app="bringup")
    run = run_elf(elf, timeout=30)
    assert run.exit_code == 1, run.output
    assert re.search(r"^buffer temp_pool .*region=DDR +actual=SRAM .*FAIL$", run.output, re.M)
    assert "BRINGUP FAIL" in run.output
