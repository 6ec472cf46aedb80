"""`ethosu-kit run` on the Arm FVPs (issue 11 item 4), which cannot run here.

The command line is checked as a golden per board and NPU: the FVP executable and
instance names from the board's [fvp] table, the MAC count from the image, the UART
on stdout, semihosting with the run's working directory and command line. Without
the FVP: one clear error. With a stand-in FVP on PATH (a script that prints its
arguments and the firmware's `kit: exit` line), `--emulator auto` takes it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ethosu_kit.firmware.fvp import fvp_command
from ethosu_kit.firmware.image import identify
from fw_helpers import Built, built
from hostile import assert_refused, run_kit

pytestmark = pytest.mark.firmware

U55_128_CS300 = (
    "-C", "ethosu.num_macs=128",
    "-C", "mps3_board.visualisation.disable-visualisation=1",
    "-C", "mps3_board.telnetterminal0.start_telnet=0",
    "-C", "mps3_board.uart0.out_file=-",
    "-C", "mps3_board.uart0.unbuffered_output=1",
    "-C", "mps3_board.uart0.shutdown_on_eot=1",
    "-C", "cpu0.semihosting-enable=1",
    "-C", "cpu0.semihosting-stack_base=0",
    "-C", "cpu0.semihosting-heap_limit=0",
    "-C", "cpu0.semihosting-cwd=/work/run",
    "-C", "cpu0.semihosting-cmd_line=bringup.elf --kit-inputs",
)  # fmt: skip


def _cmd(b: Built, exe: str) -> tuple[str, ...]:
    image = identify(b.elf)
    return fvp_command(image, exe, cwd=Path("/work/run"), cmd_line=(b.elf.name, "--kit-inputs"))


def test_cs300_u55_command_line(pte_u55_shared: Path, root: Path) -> None:
    b = built(pte_u55_shared, "cs300", "Shared_Sram", root)
    assert _cmd(b, "FVP_Corstone_SSE-300_Ethos-U55") == (
        "FVP_Corstone_SSE-300_Ethos-U55",
        *U55_128_CS300,
        "-a",
        str(b.elf.resolve()),
    )


def test_cs300_u65_command_line(pte_u65_dedicated: Path, root: Path) -> None:
    b = built(pte_u65_dedicated, "cs300", "Dedicated_Sram", root)
    image = identify(b.elf)
    assert image.npu_kind == "ethos-u65"
    from ethosu_kit.firmware.fvp import fvp_executable_name

    assert fvp_executable_name(image) == "FVP_Corstone_SSE-300_Ethos-U65"
    cmd = _cmd(b, "FVP_Corstone_SSE-300_Ethos-U65")
    assert cmd[1:3] == ("-C", f"ethosu.num_macs={image.npu_macs}")
    assert image.npu_macs in (256, 512)


def test_cs320_u85_command_line(pte_u85_dedicated: Path, root: Path) -> None:
    b = built(pte_u85_dedicated, "cs320", "Dedicated_Sram", root)
    image = identify(b.elf)
    sub = "mps4_board.subsystem"
    assert _cmd(b, "FVP_Corstone_SSE-320") == (
        "FVP_Corstone_SSE-320",
        "-C", f"{sub}.ethosu.num_macs={image.npu_macs}",
        "-C", "mps4_board.visualisation.disable-visualisation=1",
        "-C", "mps4_board.telnetterminal0.start_telnet=0",
        "-C", "mps4_board.uart0.out_file=-",
        "-C", "mps4_board.uart0.unbuffered_output=1",
        "-C", "mps4_board.uart0.shutdown_on_eot=1",
        "-C", f"{sub}.cpu0.semihosting-enable=1",
        "-C", f"{sub}.cpu0.semihosting-stack_base=0",
        "-C", f"{sub}.cpu0.semihosting-heap_limit=0",
        "-C", f"{sub}.cpu0.semihosting-cwd=/work/run",
        "-C", f"{sub}.cpu0.semihosting-cmd_line=bringup.elf --kit-inputs",
        "-C", "vis_hdlcd.disable_visualisation=1",
        "-a", str(b.elf.resolve()),
    )  # fmt: skip


def test_absent_fvp_is_one_error(pte_u55_shared: Path, root: Path, tmp_path: Path) -> None:
    b = built(pte_u55_shared, "cs300", "Shared_Sram", root)
    env = {"PATH": f"{tmp_path}:{os.environ['PATH']}"}
    result = run_kit("run", b.elf, "--emulator", "fvp", env=env)
    assert_refused(result, "FVP_Corstone_SSE-300_Ethos-U55 is not on PATH", code=65)
    result = run_kit("run", b.elf, "--fvp", tmp_path / "FVP_missing")
    assert_refused(result, "--fvp", "no such file", code=65)


def test_auto_takes_an_installed_fvp(pte_u55_shared: Path, root: Path, tmp_path: Path) -> None:
    """A stand-in FVP on PATH: auto picks it over QEMU, gets the board's parameters, and
    the firmware's `kit: exit` line is the exit code (an FVP's own status need not be)."""
    b = built(pte_u55_shared, "cs300", "Shared_Sram", root)
    fake = tmp_path / "FVP_Corstone_SSE-300_Ethos-U55"
    fake.write_text('#!/bin/sh\necho "fvp args: $*"\necho "kit: exit 3"\nexit 0\n')
    fake.chmod(0o755)
    env = {"PATH": f"{tmp_path}:{os.environ['PATH']}"}
    result = run_kit("run", b.elf, env=env)
    assert result.returncode == 3, result
    assert "ethosu.num_macs=128" in result.stdout
    assert f"-a {b.elf.resolve()}" in result.stdout


def test_an_fvp_run_without_the_exit_line_is_not_a_pass(
    pte_u55_shared: Path, root: Path, tmp_path: Path
) -> None:
    """The wrong FVP, or one that never loaded the image, exits 0 without the firmware's
    `kit: exit` line: that is not the app passing (it once said `exit code 0 (OK)`)."""
    b = built(pte_u55_shared, "cs300", "Shared_Sram", root)
    fake = tmp_path / "not_an_fvp"
    fake.write_text("#!/bin/sh\necho 'some other simulator'\nexit 0\n")
    fake.chmod(0o755)
    result = run_kit("run", b.elf, "--fvp", fake)
    assert_refused(result, "without the firmware's last line `kit: exit <code>`", code=76)
    assert "OK" not in result.stderr
