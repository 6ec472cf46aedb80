"""One `run --probe` session over GDB/MI: `ProbeSession` holds GDB (and a QEMU the kit
started) and the console, and reads them all with one selector until a record comes or
the time runs out; the GDB steps before the run (connect, semihosting on, load, the
command-line breakpoint, the start by reset or by SP and PC). The run loop that waits
for the exit is firmware.probe's.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ethosu_kit.core.errors import KitError
from ethosu_kit.core.process import MAX_OUTPUT
from ethosu_kit.firmware.elf import Vectors
from ethosu_kit.firmware.gdb_mi import Gdb, Record, RecordKind, mi_quote
from ethosu_kit.firmware.image import KitImage
from ethosu_kit.firmware.probe_kind import (
    CMDLINE_FUNCTION,
    ImageFacts,
    LoadStep,
    ProbeSpec,
    mi_console,
)
from ethosu_kit.firmware.serial_port import SerialPort
from ethosu_kit.npu.exit_codes import RUN_TOOL, exit_lines

CONNECT_SECONDS = 10.0  # GDB retries a refused connection this long (a server starting)


# -- the session ----------------------------------------------------------------------


class GdbError(Exception):
    """A command GDB answered with ^error (its message)."""


class GdbEnded(Exception):
    """GDB ended, or the server went away, while a command waited for its answer."""


def probe_error(message: str, hint: str | None, code: str) -> KitError:
    error = KitError(message, hint=hint)
    error.exit_code = RUN_TOOL[code]
    return error


@dataclass
class ProbeExit:
    code: int
    how: str  # "GDB reported the exit", "the core halted at SYS_EXIT_EXTENDED", …


class ProbeSession:
    """One run: GDB (and a QEMU the kit started), the console, and the loop that reads
    them all until the firmware ends or the time runs out."""

    def __init__(
        self,
        elf: Path,
        spec: ProbeSpec,
        timeout: float,
        echo: Callable[[bytes], None] | None,
    ) -> None:
        self.elf = elf
        self.spec = spec
        self.timeout = timeout
        self.deadline = time.monotonic() + timeout
        self.echo = echo
        self.selector = selectors.DefaultSelector()
        self.gdb: Gdb | None = None
        self.console: SerialPort | None = None
        self.qemu: Any = None  # probe_qemu.LaunchedQemu
        self.qemu_output = bytearray()
        self.output = bytearray()  # the console: UART or semihosting text
        self.exit_line = False  # the console showed `kit: exit <code>`
        self._scanned = 0  # the console up to here is whole lines already looked at
        self.results: dict[int, Record] = {}
        self.stops: deque[Record] = deque()
        self.exited: int | None = None  # GDB: the inferior exited with this code
        self.gdb_gone = False
        self.disconnected = False
        self.running = False  # the target runs the image: `@` text is its console
        self.core_runs = False  # GDB said *running, and no *stopped since
        self.phase = "connecting to"

    # - children and sources -
    def add(self, source: Any) -> None:
        self.selector.register(source.fileno(), selectors.EVENT_READ, source)

    def remove(self, source: Any) -> None:
        with contextlib.suppress(KeyError, ValueError, OSError):
            self.selector.unregister(source.fileno())

    def close(self) -> None:
        """Kill and reap everything started (every exit path)."""
        if self.gdb is not None:
            self.gdb.kill()
        if self.qemu is not None:
            self.qemu.kill()
        if self.console is not None:
            self.console.close()
        self.selector.close()

    # - the loop -
    def pump(self, until: Callable[[], bool], limit: float | None = None) -> bool:
        """Read every source until `until()` holds (True) or `limit` (a monotonic time)
        passes (False); a KitError when the run's own deadline passes."""
        while not until():
            now = time.monotonic()
            if now >= self.deadline:
                raise self._timeout()
            if limit is not None and now >= limit:
                return False
            wait = min(self.deadline, limit if limit is not None else self.deadline) - now
            for key, _ in self.selector.select(min(max(wait, 0.0), 0.25)):
                self._read(key.data)
        return True

    def _read(self, source: Any) -> None:
        if isinstance(source, Gdb):
            records = source.read()
            if records is None:
                self.gdb_gone = True
                self.remove(source)
                return
            for record in records:
                self._record(record)
        elif isinstance(source, SerialPort):
            data = source.read()
            if data is None:
                self.remove(source)
                return
            self._console_bytes(data)
        else:  # QEMU's own stdout/stderr
            data = os.read(source.fileno(), 1 << 16)
            if not data:
                self.remove(source)
                return
            self.qemu_output += data

    def _console_bytes(self, data: bytes) -> None:
        if len(self.output) + len(data) > MAX_OUTPUT:
            raise probe_error(
                f"{self.elf}: stopped after {len(self.output) >> 20} MiB of console text, "
                "the most the kit keeps",
                "a firmware printing in a loop; fix it or shorten its output",
                "FLOOD",
            )
        self.output += data
        if self.echo is not None:
            self.echo(data)
        end = self.output.rfind(b"\n") + 1
        if end > self._scanned:  # only the lines completed now
            lines = self.output[self._scanned : end].decode("utf-8", "replace")
            self.exit_line = self.exit_line or bool(exit_lines(lines.replace("\r\n", "\n")))
            self._scanned = end

    def _record(self, record: Record) -> None:
        kind = record.kind
        if kind is RecordKind.RESULT and record.token is not None:
            self.results[record.token] = record
        elif kind is RecordKind.TARGET and self.running:
            self._console_bytes(record.data)
        elif kind is RecordKind.NOTIFY and record.cls == "thread-group-exited":
            code = record.get("exit-code")
            if code:
                self.exited = int(code, 8)  # MI writes it in octal
        elif kind is RecordKind.EXEC and record.cls == "running":
            self.core_runs = True
        elif kind is RecordKind.EXEC and record.cls == "stopped":
            self.core_runs = False
            reason = record.get("reason")
            if reason == "exited-normally":
                self.exited = 0
            elif reason == "exited":
                self.exited = int(record.get("exit-code") or "0", 8)
            else:
                self.stops.append(record)
        elif kind is RecordKind.LOG and (
            "Remote connection closed" in record.text or "Remote communication error" in record.text
        ):
            self.disconnected = True

    # - commands -
    def command(self, command: str, timeout: float | None = None) -> Record:
        """Send one MI command and wait for its answer; GdbError for ^error, GdbEnded when
        GDB or the server went away first."""
        assert self.gdb is not None
        token = self.gdb.send(command)
        limit = None if timeout is None else time.monotonic() + timeout
        done = self.pump(lambda: token in self.results or self.gdb_gone, limit)
        if token not in self.results:
            raise GdbEnded("GDB ended" if done else f"no answer to {command} in {timeout:g} s")
        record = self.results.pop(token)
        if record.cls == "error":
            raise GdbError(record.get("msg") or "error")
        return record

    def value(self, expression: str) -> int:
        """An expression GDB evaluates on the target, as an unsigned 32-bit number."""
        as_number = mi_quote(f"(unsigned int)({expression})")
        record = self.command(f"-data-evaluate-expression {as_number}")
        text = record.get("value").split()[0] if record.get("value") else ""
        try:
            return int(text, 0) & 0xFFFFFFFF
        except ValueError:
            raise GdbError(f"{expression} = {record.get('value')!r}") from None

    def _timeout(self) -> KitError:
        lines = len(self.output.decode("utf-8", "replace").splitlines())
        where = f"on {self.spec}" if self.phase == "running" else f"{self.phase} {self.spec}"
        return probe_error(
            f"{self.elf}: no exit after {self.timeout:g} s ({where}): {lines} console lines "
            f"so far{', shown above' if lines else ''}",
            "a firmware must end with exit()/kit_hal_exit(); raise --timeout for long runs"
            + ("" if self.phase == "running" else "; is the GDB server answering?"),
            "TIMEOUT",
        )


def qemu_refused(session: ProbeSession) -> KitError:
    text = session.qemu_output.decode("utf-8", "replace").strip()
    first = text.splitlines()[0] if text else f"exit status {session.qemu.proc.returncode}"
    return probe_error(
        f"{session.elf}: QEMU did not start ({first[:200]})",
        "its machine and cpu come from the board's [qemu] data (docs/running.md)",
        "REFUSED",
    )


def _monitor(session: ProbeSession, spec: ProbeSpec, commands: Sequence[str], why: str) -> None:
    """The server's monitor commands, each refusal an error naming it."""
    for command in commands:
        try:
            session.command(mi_console(command))
        except GdbError as exc:
            raise probe_error(
                f"{session.elf}: the GDB server at {spec.address} refused `{command}` "
                f"({why}): {exc}",
                f"is it a {spec.kind.server.name} server? (started like: {spec.kind.server.start})",
                "REFUSED",
            ) from None
    if commands:  # a monitor reset changed the registers behind GDB's back
        session.command(mi_console("maintenance flush register-cache"))


def _semihosting_on(session: ProbeSession, spec: ProbeSpec, say: Callable[[str], None]) -> None:
    """The server's semihosting on. A server that refuses the command may have it on
    from its own command line: a note, not an error (a call it then does not serve
    stops the core, and that is an error naming the call)."""
    for command in spec.kind.server.semihosting:
        try:
            session.command(mi_console(command))
        except GdbError as exc:
            say(
                f"ethosu-kit run: note: the GDB server at {spec.address} refused `{command}` "
                f"({exc}); semihosting must then be on from its own start "
                f"({spec.kind.server.start})"
            )


def connect_gdb(session: ProbeSession, spec: ProbeSpec, say: Callable[[str], None]) -> None:
    left = max(1, int(min(CONNECT_SECONDS, session.deadline - time.monotonic())))
    # A QEMU the kit just started may not listen yet: GDB retries a refused connection
    # then. A server of the user's is already up, or it is not: refused is the answer.
    retry = "on" if spec.launch or session.qemu is not None else "off"
    for setting in (
        "mi-async on",
        f"tcp auto-retry {retry}",
        f"tcp connect-timeout {left}",
        "remotetimeout 10",  # a server's monitor reset may take seconds (the default: 2)
    ):
        session.command(f"-gdb-set {setting}")
    try:
        session.command(f"-target-select extended-remote {spec.gdb_address}")
    except (GdbError, GdbEnded) as exc:
        if session.qemu is not None and session.qemu.proc.poll() is not None:
            raise qemu_refused(session) from None
        raise probe_error(
            f"{session.elf}: cannot connect to the GDB server at {spec.address} ({exc})",
            f"start the {spec.kind.server.name} server first: {spec.kind.server.start} "
            "(docs/running.md, Running on a board)",
            "REFUSED",
        ) from None
    _semihosting_on(session, spec, say)
    session.phase = "resetting the board through"
    _monitor(session, spec, spec.kind.server.reset, "resetting the core halted")


def load_image(session: ProbeSession, spec: ProbeSpec, steps: Sequence[LoadStep]) -> None:
    session.phase = "loading the image through"
    for step in steps:
        try:
            session.command(step.command)
        except (GdbError, GdbEnded) as exc:
            raise probe_error(
                f"{session.elf}: loading {step.what} through {spec} failed: {exc}",
                "is the board's flash or RAM where the image was linked for? "
                "(the server's own log says more)",
                "REFUSED",
            ) from None


def set_cmdline_breakpoint(session: ProbeSession, image: KitImage, facts: ImageFacts) -> str:
    """A breakpoint at the entry of the SDK's command-line reader: GDB answers it
    (_serve_cmdline), whatever the server does with SYS_GET_CMDLINE. A software one in
    RAM GDB loads in place (any address, no comparator used); else (flash, ROM, code the
    start-up copies into RAM) a hardware one, a comparator of the core's FPB."""
    assert facts.cmdline is not None
    address = facts.cmdline
    region = image.board.region_at(address)
    software = facts.cmdline_in_place and region is not None and region.volatile
    hardware = "" if software else "-h "
    try:
        record = session.command(f"-break-insert {hardware}*{address:#x}")
    except GdbError as exc:
        raise probe_error(
            f"{image.elf}: cannot set the breakpoint that answers the app's command line "
            f"at {address:#010x} ({CMDLINE_FUNCTION}): {exc}",
            "the core's hardware breakpoints may all be taken, or not reach that address",
            "REFUSED",
        ) from None
    bkpt = record.results.get("bkpt")
    return str(bkpt.get("number", "")) if isinstance(bkpt, dict) else ""


def start_image(session: ProbeSession, spec: ProbeSpec, vectors: Vectors, cold: bool) -> None:
    session.phase = "starting the image through"
    session.stops.clear()  # the halts of connecting and resetting: not the image's
    try:
        if cold:  # the core boots from the flash just written, as on power-up
            _monitor(session, spec, spec.kind.server.reset, "resetting the core halted")
            session.running = True
            session.command("-exec-continue")
        else:  # RAM a debugger filled: SP and PC from the image's own vector table
            session.command(f"-data-evaluate-expression {mi_quote(f'$sp = {vectors.sp:#x}')}")
            session.running = True
            session.command(f"-exec-jump *{vectors.start:#x}")
    except (GdbError, GdbEnded) as exc:
        raise probe_error(
            f"{session.elf}: the core did not start through {spec}: {exc}", None, "REFUSED"
        ) from None
    session.phase = "running"
