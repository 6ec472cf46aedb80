"""A board folder drafted by `new-board` from the tests' .pdsc and .svd (a made-up Cortex-M55 +
Ethos-U55 SoC whose memory map is QEMU's mps3-an547) builds the bring-up as generated with the
real cross compiler, passes check-elf and runs in QEMU; its custom-console stub compiles under
-Werror; its blocking TODOs stop what needs them, with the key named."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from ethosu_kit.cli.app import main
from ethosu_kit.core.errors import KitError
from ethosu_kit.firmware.build import build_project
from ethosu_kit.firmware.elf_check import check_elf
from ethosu_kit.firmware.qemu import run_elf
from fw_helpers import need_cross_gcc, need_qemu
from projects import make_project

DATA = Path(__file__).parent / "data"
PACK = ["--pack", str(DATA / "test_soc.pdsc"), "--device", "TestSoC-E7"]


def _board(tmp_path: Path, name: str, *args: str) -> Path:
    out = tmp_path / name
    assert main(["new-board", name, "-o", str(out), *args]) == 0
    return out


@pytest.mark.firmware
@pytest.mark.qemu
def test_pack_and_svd_board_builds_and_runs(tmp_path: Path, pte_u55_shared: Path) -> None:
    need_cross_gcc()
    board = _board(tmp_path, "testsoc", *PACK, "--console-peripheral", "UART0",
                   "--qemu-machine", "mps3-an547")  # fmt: skip
    project = make_project(pte_u55_shared, tmp_path / "fw", board=board, app="bringup").path
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
    elf = build_project(
        make_project(pte_u55_shared, tmp_path / "fw", board=board, app="bringup").path,
        app="bringup",
    )
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
    project = make_project(
        pte_u55_shared, tmp_path / "fw", board=board, app="bringup"
    ).path  # the bring-up does not need them
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


_M7_PDSC = """<?xml version="1.0" encoding="UTF-8"?>
<package schemaVersion="1.7.7"><vendor>KitTest</vendor><name>M7SoC_DFP</name>
<description>made-up Cortex-M7 + Ethos-U55 SoC on QEMU's mps2-an500 memory map</description>
<url>https://example.invalid/</url><releases><release version="1.0.0">r</release></releases>
<devices><family Dfamily="M7SoC" Dvendor="KitTest:0">
  <processor Dcore="Cortex-M7" Dfpu="DP_FPU" Dendian="Little-endian"/>
  <device Dname="M7SoC-1">
    <memory name="SSRAM1" access="rwx" start="0x00000000" size="0x00400000" startup="1"/>
    <memory name="SRAM" access="rwx" start="0x20000000" size="0x00400000"/>
    <memory name="PSRAM" access="rwx" start="0x60000000" size="0x01000000"/>
    <debug svd="m7soc.svd"/>
  </device>
</family></devices></package>
"""
_M7_SVD = """<?xml version="1.0" encoding="utf-8"?>
<device schemaVersion="1.3"><vendor>KitTest</vendor><name>M7SoC_1</name><version>1</version>
<description>d</description>
<cpu><name>CM7</name><revision>r1p0</revision><endian>little</endian><mpuPresent>true</mpuPresent>
<fpuPresent>true</fpuPresent><fpuDP>true</fpuDP><icachePresent>true</icachePresent>
<dcachePresent>true</dcachePresent><nvicPrioBits>3</nvicPrioBits>
<vendorSystickConfig>false</vendorSystickConfig><deviceNumInterrupts>48</deviceNumInterrupts></cpu>
<addressUnitBits>8</addressUnitBits><width>32</width>
<peripherals>
<peripheral><name>NPU0</name><description>Arm Ethos-U55 microNPU</description>
  <baseAddress>0x40030000</baseAddress><interrupt><name>NPU0</name><value>47</value></interrupt>
  <registers><register><name>ID</name><addressOffset>0</addressOffset></register></registers>
</peripheral>
<peripheral><name>UART0</name><baseAddress>0x40004000</baseAddress>
  <registers><register><name>DATA</name><addressOffset>0</addressOffset></register>
  <register><name>STATE</name><addressOffset>4</addressOffset></register>
  <register><name>CTRL</name><addressOffset>8</addressOffset></register>
  <register><name>BAUDDIV</name><addressOffset>16</addressOffset></register></registers>
</peripheral>
</peripherals></device>
"""


@pytest.mark.firmware
@pytest.mark.qemu
def test_cortex_m7_pack_board_runs_on_mps2_an500(tmp_path: Path, pte_u55_shared: Path) -> None:
    """The pack path is not Corstone-shaped: an Armv7-M device (no TrustZone, no MVE, caches
    from its SVD) drafted from a pack, built and run on another QEMU machine."""
    need_cross_gcc()
    (tmp_path / "pack").mkdir()
    (tmp_path / "pack" / "m7soc.pdsc").write_text(_M7_PDSC)
    (tmp_path / "pack" / "m7soc.svd").write_text(_M7_SVD)
    board = _board(tmp_path, "m7soc", "--pack", str(tmp_path / "pack" / "m7soc.pdsc"),
                   "--device", "M7SoC-1", "--qemu-machine", "mps2-an500")  # fmt: skip
    from ethosu_kit.board.loader import load_board

    # the pack marks no memory but SSRAM1 (startup) as filled at reset, so the draft makes
    # no other RAM loadable; QEMU's -kernel loads them all, as the user then says
    toml = board / "board.toml"
    text = toml.read_text()
    psram = text.index('name = "PSRAM"')
    toml.write_text(text[:psram] + text[psram:].replace("loadable = false", "loadable = true", 1))

    b = load_board(board)
    assert (b.cpu.core, b.cpu.fpu, b.cpu.dcache, b.cpu.irqs, b.cpu.trustzone) == (
        "cortex-m7", "dp", True, 48, False)  # fmt: skip
    assert not b.npu.secure  # an Armv7-M core has no secure state to run the NPU in
    assert (b.npu.base, b.npu.irq, b.console.kind, b.console.base) == (
        0x40030000, 47, "cmsdk-apb", 0x40004000)  # fmt: skip
    assert b.todo == ()
    project = make_project(pte_u55_shared, tmp_path / "fw", board=board, app="bringup").path
    need_qemu()
    bringup = build_project(project, app="bringup")
    run = run_elf(bringup, timeout=30)
    assert run.exit_code == 0 and "BRINGUP PASS" in run.output, run.output
    assert main(["build", str(project), "--app", "selftest", "--npu", "virtual"]) == 0
    run = run_elf(project / "build" / "gcc" / "selftest.elf", timeout=60)
    assert run.exit_code == 0 and "SELFTEST PASS" in run.output, run.output
