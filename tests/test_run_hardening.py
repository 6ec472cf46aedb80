"""`ethosu-kit run` under hostile input (issue 10: run time limits, foreign ELFs).

Real commands in a subprocess, asserting the kit's error contract: exactly one
`error:` line (plus an optional `hint:`), a non-zero exit, no traceback, and no
QEMU process left behind, on every exit path (time limit, SIGINT, SIGTERM, SIGHUP,
even SIGKILL of the kit). The firmware that never exits is a real kit image built
here with the real cross compiler: a vector table and a loop, plus the `.kit.info`
section the kit's images carry.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ethosu_kit.core.process import run_child
from hostile import Result, assert_refused, run_kit

pytestmark = pytest.mark.firmware

LOOP_S = r"""
    .syntax unified
    .thumb
    .section .vectors, "a"
    .word 0x30010000
    .word reset
    .text
    .thumb_func
    .global reset
reset:
    ldr r0, =0x59303000   @ UART0 of the Corstone-300 (CMSDK APB), secure alias
    movs r1, #1
    str r1, [r0, #8]      @ CTRL: TX enable
    movs r1, #'x'
loop:
#ifdef CHATTY
    str r1, [r0]
#endif
    b loop
"""


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"{name} is not installed")
    return path


def kit_loop_image(
    folder: Path, board: str = "corstone-300", *, chatty: bool = False, text: int = 0x10000400
) -> Path:
    """A kit image (ELF + .kit.info) for `board` that never exits (its code at `text`)."""
    gcc = _tool("arm-none-eabi-gcc")
    objcopy = _tool("arm-none-eabi-objcopy")
    folder.mkdir(parents=True, exist_ok=True)
    src = folder / "loop.S"
    src.write_text(LOOP_S)
    elf = folder / f"{'chatty' if chatty else 'loop'}-{text:x}.elf"
    subprocess.run(
        [gcc, "-mcpu=cortex-m55", "-nostdlib", "-e", "reset",
         *(["-DCHATTY"] if chatty else []),
         "-Wl,--section-start=.vectors=0x10000000", f"-Wl,-Ttext={text:#x}",
         str(src), "-o", str(elf)],
        check=True,
    )  # fmt: skip
    info = folder / "info.bin"
    info.write_bytes(f"board={board}\nmode=Shared_Sram\nnpu=ethos-u55\nmacs=128\n\0".encode())
    subprocess.run(
        [objcopy, "--add-section", f".kit.info={info}",
         "--set-section-flags", ".kit.info=noload,readonly", str(elf)],
        check=True,
    )  # fmt: skip
    return elf


def qemu_pids(marker: Path) -> list[int]:
    """PIDs of live QEMU processes whose command line names `marker` (a unique tmp path)."""
    pattern = f"qemu-system-arm.*{re.escape(str(marker))}"
    found = subprocess.run(
        [_tool("pgrep"), "-f", pattern], capture_output=True, text=True, check=False
    )
    return [int(pid) for pid in found.stdout.split()]


@pytest.fixture(scope="module")
def loop_elf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return kit_loop_image(tmp_path_factory.mktemp("run_loop"))


def need_qemu() -> None:
    _tool("qemu-system-arm")


@pytest.mark.parametrize(
    "value", ["0", "-1", "-0.5", "nan", "inf", "-inf", "1e400", "86401", "1e30", "abc", ""]
)
def test_bad_timeouts_are_one_error(loop_elf: Path, value: str) -> None:
    result = run_kit("run", loop_elf, f"--timeout={value}")
    assert_refused(result, "--timeout", code=64)
    assert not qemu_pids(loop_elf)


@pytest.mark.qemu
def test_timeout_kills_qemu_and_exits_75(loop_elf: Path) -> None:
    need_qemu()
    start = time.monotonic()
    result = run_kit("run", loop_elf, "--timeout", "1.5")
    assert time.monotonic() - start < 20
    assert_refused(result, "no exit after 1.5 s in QEMU", code=75)
    assert not qemu_pids(loop_elf)


def _as_from_a_shell() -> None:
    """The child starts with the signals a user's shell gives it: none ignored or blocked
    (a test runner may have left SIGINT ignored or masked, which a child inherits)."""
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)


def _start_and_wait_for_qemu(elf: Path) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "ethosu_kit", "run", str(elf), "--timeout", "120"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=_as_from_a_shell,  # noqa: PLW1509 - the test's own child, no threads involved
    )
    deadline = time.monotonic() + 30
    while not qemu_pids(elf):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "QEMU did not start"
        time.sleep(0.05)
    return proc


def _gone(elf: Path, within: float = 10) -> bool:
    deadline = time.monotonic() + within
    while qemu_pids(elf):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@pytest.mark.qemu
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_signal_to_the_kit_ends_qemu(loop_elf: Path, sig: signal.Signals) -> None:
    need_qemu()
    proc = _start_and_wait_for_qemu(loop_elf)
    proc.send_signal(sig)
    try:
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # leave nothing for the next test to find
        for pid in qemu_pids(loop_elf):
            os.kill(pid, signal.SIGKILL)
        raise
    assert_refused(Result(("run",), proc.returncode, out, err), "interrupted", code=128 + sig)
    assert _gone(loop_elf), "QEMU outlived ethosu-kit"


@pytest.mark.qemu
def test_sigkill_of_the_kit_takes_qemu_along(loop_elf: Path) -> None:
    if not sys.platform.startswith("linux"):
        pytest.skip("PR_SET_PDEATHSIG is Linux only")
    need_qemu()
    proc = _start_and_wait_for_qemu(loop_elf)
    proc.kill()
    proc.communicate(timeout=30)
    assert _gone(loop_elf), "QEMU outlived a SIGKILLed ethosu-kit"


@pytest.mark.qemu
def test_endless_output_is_capped(tmp_path: Path) -> None:
    """A firmware printing forever: the kit stops it at the output cap (here 64 KiB)."""
    need_qemu()
    elf = kit_loop_image(tmp_path, chatty=True)
    from ethosu_kit.board.loader import load_board
    from ethosu_kit.firmware.qemu import qemu_command, qemu_target

    target = qemu_target(load_board("cs300"))
    assert target is not None
    child = run_child(qemu_command(elf, target), 60, what="QEMU", max_output=64 << 10)
    assert child.output_overflow and child.returncode is None
    assert len(child.output) <= 64 << 10
    assert not qemu_pids(elf)


def test_foreign_files_are_refused_before_qemu(tmp_path: Path) -> None:
    gcc = _tool("arm-none-eabi-gcc")
    src = tmp_path / "m.c"
    src.write_text("int main(void) { return 0; }\n")
    obj = tmp_path / "m.o"
    subprocess.run([gcc, "-mcpu=cortex-m55", "-c", str(src), "-o", str(obj)], check=True)
    no_info = tmp_path / "no_info.elf"
    subprocess.run(
        [gcc, "-mcpu=cortex-m55", "--specs=nosys.specs", str(src), "-o", str(no_info)],
        check=True,
    )
    big = tmp_path / "be.o"
    be = [gcc, "-mbig-endian", "-mcpu=cortex-r5", "-c", str(src), "-o", str(big)]
    subprocess.run(be, check=False)  # a multilib without big-endian leaves it out
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    text = tmp_path / "text.elf"
    text.write_text("not an elf\n")
    cases = {
        sys.executable: "64-bit ELF" if sys.maxsize > 2**32 else "not for Arm",
        str(obj): "relocatable object",
        str(no_info): "no .kit.info",
        str(fifo): "FIFO",
        "/dev/zero": "character device",
        str(tmp_path): "directory",
        str(text): "not an ELF file",
        str(tmp_path / "missing.elf"): "no such file",
    }
    if big.is_file():
        cases[str(big)] = "big-endian"
    for path, why in cases.items():
        assert_refused(run_kit("run", path, "--timeout", "5"), why, code=65)
        assert not qemu_pids(Path(path))


def test_unknown_board_is_refused(tmp_path: Path) -> None:
    elf = kit_loop_image(tmp_path, board="my-custom-soc")
    assert_refused(run_kit("run", elf, "--timeout", "5"), "'my-custom-soc'", "not a built-in board")
    assert not qemu_pids(elf)


def test_an_image_outside_the_machines_memory_is_refused(tmp_path: Path) -> None:
    """Code linked where the board (and QEMU's machine) has no memory: refused, not run."""
    elf = kit_loop_image(tmp_path, text=0x12000000)
    result = run_kit("run", elf, "--timeout", "5")
    assert_refused(result, "at 0x12000000 are outside the memory QEMU's mps3-an547", code=65)
    assert not qemu_pids(elf)


def test_a_machine_qemu_does_not_have_is_refused(tmp_path: Path, pte_u55_shared: Path) -> None:
    """A board whose [qemu] machine this QEMU lacks: one error naming the key, not QEMU's
    own start-up failure (exit 1), which `run` would report as the firmware's FAIL."""
    need_qemu()
    board = tmp_path / "board"
    made = run_kit("new-board", "x", "-o", board, "--from", "cs300", "--qemu-machine", "mps2-an999")
    assert made.returncode == 0, made
    fw = tmp_path / "fw"
    gen = run_kit("gen", "--pte", pte_u55_shared, "--board", board, "-o", fw, "-q")
    assert gen.returncode == 0, gen
    elf = kit_loop_image(fw / "build" / "gcc", board="x")  # found through fw/memory_plan.json
    result = run_kit("run", elf, "--timeout", "5")
    line = assert_refused(
        result, "board.toml: qemu.machine 'mps2-an999'", "has no such machine", code=65
    )
    assert "mps2-an386" in result.stderr and line
    assert not qemu_pids(elf)
