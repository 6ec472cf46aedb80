"""A board folder drafted by `new-board` from the tests' .pdsc and .svd (a made-up Cortex-M55 +
Ethos-U55 SoC whose memory map is QEMU's mps3-an547) builds the bring-up as generated with the
real cross compiler, passes check-elf and runs in QEMU; its custom-console stub compiles under
-Werror; its blocking TODOs stop what needs them, with the key named."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from ethosu_kit.build import build_project
from ethosu_kit.cli import main
from ethosu_kit.elf_check import check_elf
from ethosu_kit.errors import KitError
from ethosu_kit.qemu import run_elf
from fw_helpers import need_cross_gcc, need_qemu

DATA = Path(__file__).parent / "data"
PACK = ["--pack", str(DATA / "test_soc.pdsc"), "--device", "TestSoC-E7"]


def _board(tmp_path: Path, name: str, *args: str) -> Path:
    out = tmp_path / name
    assert main(["new-board", name, "-o", str(out), *args]) == 0
    return out


def _gen(pte: Path, board: Path, out: Path) -> Path:
    argv = ["gen", "--pte", str(pte), "--board", str(board), "--app", "bringup", "-o", str(out)]
    assert main([*argv, "-q"]) == 0
    return out


@pytest.mark.firmware
@pytest.mark.qemu
def test_pack_and_svd_board_builds_and_runs(tmp_path: Path, pte_u55_shared: Path) -> None:
    need_cross_gcc()
    board = _board(tmp_path, "testsoc", *PACK, "--console-peripheral", "UART0",
                   "--qemu-machine", "mps3-an547")  # fmt: skip
    project = _gen(pte_u55_shared, board, tmp_path / "fw")
    elf = build_project(project, app="bringup")
    result = check_elf(elf, project / "memory_plan.json")
    assert result.ok, [v.message for v in result.violations]
    need_qemu()
    run = run_elf(elf, timeout=30)
    assert run.exit_code == 0, run.output
    assert "bringup: board testsoc, mode Shared_Sram" in run.output  # through the SVD's UART0
    assert "BRINGUP PASS" in run.output
    # the NPU self-test on the virtual NPU: the model's own streams, bit-exact, on this board
    assert main(["build", str(project), "--app", "selftest", "--npu", "virtual"]) == 0
    selftest = project / "build" / "gcc" / "selftest.elf"
    result = check_elf(selftest, project / "memory_plan.json")
    assert result.ok, [v.message for v in result.violations]
    run = run_elf(selftest, timeout=60)
    assert run.exit_code == 0, run.output
    assert "delegate 0: PASS" in run.output and "SELFTEST PASS" in run.output


@pytest.mark.firmware
@pytest.mark.qemu
def test_custom_console_stub_builds_and_runs_silently(tmp_path: Path, pte_u55_shared: Path) -> None:
    """The stub console.c new-board writes compiles warning-free and never blocks."""
    need_cross_gcc()
    board = _board(tmp_path, "stubbed", *PACK, "--console", "custom", "--npu-peripheral", "ETHOSU",
                   "--qemu-machine", "mps3-an547")  # fmt: skip
    assert (board / "console.c").is_file()
    elf = build_project(_gen(pte_u55_shared, board, tmp_path / "fw"), app="bringup")
    need_qemu()
    run = run_elf(elf, timeout=30)
    assert run.exit_code == 0, run.output
    assert "BRINGUP" not in run.output  # the stub prints nothing until written


def test_blocking_todos_stop_what_needs_them(
    tmp_path: Path, pte_u55_shared: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # no SVD beside this copy of the pack: the NPU's base and IRQ are unknown
    pdsc = tmp_path / "pack" / "test_soc.pdsc"
    pdsc.parent.mkdir()
    pdsc.write_bytes((DATA / "test_soc.pdsc").read_bytes())
    board = _board(tmp_path, "nonpu", "--pack", str(pdsc), "--device", "TestSoC-E7")
    project = _gen(pte_u55_shared, board, tmp_path / "fw")  # the bring-up does not need them
    with pytest.raises(KitError, match=r"npu\.base, npu\.irq still TODO, and --npu driver"):
        build_project(project, app="selftest", npu="driver")
    if shutil.which("cmake") and shutil.which("arm-none-eabi-gcc"):
        # a CMake user's build (no ethosu-kit build in between) stops at configure, too
        configure = subprocess.run(
            ["cmake", "--preset", "gcc", "-DETHOSU_KIT_APP=selftest", "-DETHOSU_KIT_NPU=driver"],
            cwd=project, capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert configure.returncode != 0
        assert "npu.base, npu.irq still TODO, and NPU driver needs them" in " ".join(
            configure.stderr.split()
        )
    text = (board / "board.toml").read_text()
    (board / "board.toml").write_text(
        text.replace('vector_region = "ITCM_S"', 'vector_region = "TODO"')
    )
    capsys.readouterr()
    assert main(["gen", "--pte", str(pte_u55_shared), "--board", str(board), "--app", "bringup",
                 "-o", str(tmp_path / "fw2")]) != 0  # fmt: skip
    err = capsys.readouterr().err
    assert "boot.vector_region (the region the core fetches its vector table from" in err
    assert "still TODO" in err and not (tmp_path / "fw2").exists()
