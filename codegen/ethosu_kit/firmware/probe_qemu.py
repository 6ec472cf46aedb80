"""`run --probe qemu`: QEMU started as a board with a debug probe on it.

The board's QEMU machine (its `[qemu]` data, checked as `run` checks it) starts halted
with nothing loaded and its GDB server listening (`-S -gdb tcp:127.0.0.1:PORT`),
semihosting served through GDB (`target=gdb`: GDB's File-I/O opens the files, in GDB's
folder) and its first UART on a TCP port (`-serial tcp:…,server=on,wait=off`), which
`run` reads as it reads a board's UART (`--serial socket://…`). Everything after the
start is the generic probe path (firmware.probe): GDB connects, loads, resets and runs.
"""

from __future__ import annotations

import socket
import subprocess
from dataclasses import dataclass

from ethosu_kit.core.process import _kill_group, spawn
from ethosu_kit.firmware.qemu import QEMU, QemuTarget
from ethosu_kit.firmware.sandbox import Sandbox

LOCALHOST = "127.0.0.1"


def free_port() -> int:
    """A TCP port nothing listens on now (QEMU binds it a moment later)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((LOCALHOST, 0))
        return int(s.getsockname()[1])


def gdbstub_command(target: QemuTarget, gdb_port: int, serial_port: int) -> tuple[str, ...]:
    """QEMU halted at reset with an empty memory, its GDB server and UART on local ports."""
    return (
        QEMU,
        "-M", target.machine,
        *(("-cpu", target.cpu) if target.cpu else ()),
        "-display", "none",
        "-monitor", "none",
        "-S",  # halted: GDB loads, resets and starts it
        "-gdb", f"tcp:{LOCALHOST}:{gdb_port}",
        "-semihosting-config", "enable=on,target=gdb",
        "-serial", f"tcp:{LOCALHOST}:{serial_port},server=on,wait=off",
    )  # fmt: skip


@dataclass
class LaunchedQemu:
    proc: subprocess.Popen[bytes]
    command: tuple[str, ...]
    target: QemuTarget
    gdb_port: int
    serial_url: str

    def fileno(self) -> int:
        assert self.proc.stdout is not None
        return self.proc.stdout.fileno()

    def kill(self) -> None:
        if self.proc.returncode is None:
            _kill_group(self.proc)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


def launch(target: QemuTarget, confine: Sandbox | None = None) -> LaunchedQemu:
    """Start QEMU (own process group, dies with the kit; in `confine`, which keeps the
    network for its TCP ports: it opens no file, GDB serves its semihosting); the caller
    kills it."""
    gdb_port, serial_port = free_port(), free_port()
    while serial_port == gdb_port:
        serial_port = free_port()
    cmd = gdbstub_command(target, gdb_port, serial_port)
    run = confine.wrap(cmd, workdir=None) if confine is not None else cmd
    proc = spawn(run, QEMU, hint="apt-get install qemu-system-arm (QEMU >= 7.2)")
    return LaunchedQemu(proc, cmd, target, gdb_port, f"socket://{LOCALHOST}:{serial_port}")
