"""`ethosu-kit run ELF --probe KIND[:HOST:PORT]`: run an image on a board through a
debug probe's GDB server (pyOCD, OpenOCD, J-Link) or QEMU's gdbstub, driven by Debian's
`gdb-multiarch` over GDB/MI (firmware.gdb_mi). See docs/running.md, "Running on a board".

The steps, the same for every server (`ProbeKind` holds what differs: its monitor
commands for reset and semihosting, its default port):

1. GDB, run in the run's fresh folder (semihosting File-I/O opens the firmware's
   `kit_input_<i>.bin`/`kit_output_<o>.bin` there, as QEMU and the FVPs do), connects
   to the server, turns its semihosting on and resets the core halted.
2. It loads the build's flash artefacts (`<elf>.flash_manifest.json` beside the ELF,
   firmware.flash: each non-volatile region's Intel HEX, through GDB's `load`, which
   programs flash through the server), else the ELF's load segments (`load`).
3. It starts the image as the board would: an image whose vector table lies in
   non-volatile memory (it boots cold) by a second reset, so the core takes SP and PC
   from it; an image a debugger puts in RAM by setting SP and PC from its vector table.
4. While it runs: the console (the board's UART through `--serial`, or semihosting
   output through GDB), the semihosting command line when `--inputs/-o` want files (a
   breakpoint on `kit_semihost_cmdline` that GDB answers: every server serves it the
   same way, and no server has to know the kit's words), and the end: GDB's
   "exited with code N" (QEMU, a server that reports the exit), the core halted at the
   firmware's SYS_EXIT_EXTENDED call (OpenOCD, J-Link: the code is read from the call's
   block), or the firmware's `kit: exit N` line when the server ignores the exit call.

Bounded by --timeout; GDB (and a QEMU the kit started) never outlive the run, and run
in the run's sandbox (firmware.sandbox, the network kept) as the emulators do.

This module owns the run (`run_on_probe`) and its step 4: the loop, the exit and the
console. Steps 1-3 (GDB over MI) are firmware.probe_session's; the kinds, the image's
facts and the load steps firmware.probe_kind's.
"""

from __future__ import annotations

import contextlib
import shutil
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from ethosu_kit.core.errors import KitError
from ethosu_kit.core.process import _signals_raise
from ethosu_kit.firmware import probe_qemu
from ethosu_kit.firmware.elf import Vectors
from ethosu_kit.firmware.gdb_mi import GDB, Gdb, Record, gdb_command, gdb_environ, mi_quote
from ethosu_kit.firmware.image import KitImage
from ethosu_kit.firmware.probe_kind import (
    ADP_STOPPED_APPLICATION_EXIT,
    BKPT_SEMIHOSTING,
    CMDLINE_FUNCTION,
    SYS_EXIT,
    SYS_EXIT_EXTENDED,
    ProbeKind,
    ProbeSpec,
    boots_cold,
    image_facts,
    load_steps,
)
from ethosu_kit.firmware.probe_session import (
    GdbEnded,
    GdbError,
    ProbeExit,
    ProbeSession,
    connect_gdb,
    load_image,
    probe_error,
    qemu_refused,
    set_cmdline_breakpoint,
    start_image,
)
from ethosu_kit.firmware.qemu import RunResult, runnable_target, stand_in_line
from ethosu_kit.firmware.sandbox import Sandbox
from ethosu_kit.firmware.serial_port import DEFAULT_BAUD, SerialPort
from ethosu_kit.npu.exit_codes import exit_lines

EXIT_LINE_GRACE = 3.0  # after `kit: exit N`, how long the server may take to report the exit
DRAIN_SECONDS = 2.0  # after the exit, the UART's last bytes (USB serial latency)
QUIET_SECONDS = 0.3  # … ended early once the line is there and the port is quiet this long


def run_on_probe(
    elf: Path,
    image: KitImage,
    spec: ProbeSpec,
    *,
    timeout: float,
    cwd: Path,
    cmd_line: Sequence[str] = (),
    serial: str | None = None,
    baud: int | None = None,
    echo: Callable[[bytes], None] | None = None,
    notice: Callable[[str], None] | None = None,
    confine: Sandbox | None = None,
) -> RunResult:
    """Run `image` (named `elf`, as the user gave it) on the board behind `spec`; the
    result's exit code is the firmware's. KitErrors carry run's own exit codes (65 no GDB
    or cannot connect, 75 the time limit, 76 no exit seen). `confine`: the sandbox GDB
    (which serves the firmware's file calls) and a QEMU the kit starts run in; it must
    keep the network (GDB reaches the server over TCP)."""
    if shutil.which(GDB) is None:
        raise probe_error(
            f"{GDB} is not installed: run --probe drives the board's GDB server with it",
            "apt-get install gdb-multiarch (Debian/Ubuntu)",
            "REFUSED",
        )
    if image.board.qemu_layout and spec.kind is not ProbeKind.QEMU:
        raise probe_error(
            f"{image.elf}: laid out for {image.board.name}'s QEMU stand-in (gen "
            f"--qemu-stand-in), not for the board {spec} is attached to",
            "generate the project without --qemu-stand-in for the board",
            "REFUSED",
        )
    start = time.monotonic()
    facts = image_facts(image)
    vectors = facts.vectors
    if cmd_line and facts.cmdline is None:
        raise probe_error(
            f"{image.elf}: --inputs/-o need the app to read its semihosting command line, "
            f"and the image has no {CMDLINE_FUNCTION}",
            "an app that follows the file protocol (the executor_runner; docs/running.md)",
            "REFUSED",
        )
    steps, source = load_steps(image.elf)
    say = notice or (lambda _line: None)
    session = ProbeSession(elf, spec, timeout, echo)
    with _signals_raise("GDB"):
        try:
            if spec.launch:
                spec = _start_qemu(session, image, say, confine)
                serial = serial or session.qemu.serial_url
            if serial is not None:
                session.console = _open_console(session, serial, baud or _board_baud(image))
                session.add(session.console)
            gdb = gdb_command(image.elf.resolve())
            if confine is not None:  # the run's folder, the ELF and the files GDB loads
                files = [image.elf, *(s.path for s in steps if s.path is not None)]
                gdb = confine.wrap(gdb, workdir=cwd, files=files, environ=gdb_environ())
            session.gdb = Gdb(gdb, cwd)
            session.add(session.gdb)
            connect_gdb(session, spec, say)
            cold = boots_cold(image, vectors)
            say(f"ethosu-kit run: loading {', '.join(s.what for s in steps)} (from {source}) "
                f"through {spec}; {_how_it_starts(image, vectors, cold)}")  # fmt: skip
            load_image(session, spec, steps)
            breakpoint_number = (
                set_cmdline_breakpoint(session, image, facts)
                if cmd_line and facts.cmdline is not None
                else None
            )
            start_image(session, spec, vectors, cold)
            end = _wait_exit(session, spec, breakpoint_number, " ".join(cmd_line))
            # the firmware ended within the limit: its last words and GDB's goodbye get
            # their few seconds even at the limit's edge
            session.deadline = max(session.deadline, time.monotonic() + DRAIN_SECONDS + 2)
            _drain(session)
            _quit(session)
        finally:
            session.close()
    return _result(
        session, image=image, spec=spec, console_read=serial is not None or (
            image.board.console.kind == "semihosting"
        ), end=end, seconds=time.monotonic() - start, say=say,
    )  # fmt: skip


def _how_it_starts(image: KitImage, vectors: Vectors, cold: bool) -> str:
    region = image.board.region_at(vectors.address)
    where = f"{region.name + ' at ' if region is not None else ''}{vectors.address:#010x}"
    if cold:
        return f"started by a reset: its vector table is in non-volatile {where} (a cold boot)"
    return f"started with SP and PC from its vector table in {where} (RAM a debugger fills)"


def _board_baud(image: KitImage) -> int:
    baud = image.board.console.baud
    return baud if baud > 0 else DEFAULT_BAUD


def _start_qemu(
    session: ProbeSession, image: KitImage, say: Callable[[str], None], confine: Sandbox | None
) -> ProbeSpec:
    target = runnable_target(image)
    if target.stand_in:
        say(stand_in_line(image.board, target))
    session.qemu = probe_qemu.launch(target, confine)
    session.add(session.qemu)
    return ProbeSpec(ProbeKind.QEMU, probe_qemu.LOCALHOST, session.qemu.gdb_port)


def _open_console(session: ProbeSession, url: str, baud: int) -> SerialPort:
    """The serial port; a QEMU the kit started is given until the deadline to listen."""
    while True:
        try:
            return SerialPort(url, baud)
        except KitError:
            if session.qemu is None or url != session.qemu.serial_url:
                raise  # a port of the user's: there, or not
            if session.qemu.proc.poll() is not None:
                session.pump(lambda: False, time.monotonic() + 0.2)  # its last words
                raise qemu_refused(session) from None
            session.pump(lambda: False, time.monotonic() + 0.05)


def _wait_exit(
    session: ProbeSession, spec: ProbeSpec, breakpoint_number: str | None, cmd_line: str
) -> ProbeExit | None:
    """How the firmware ended; None when the session ended without a word of it, or when
    the console's `kit: exit N` line came and the server reported no exit call after it
    (a server that ignores SYS_EXIT_EXTENDED: the line's code stands, _result)."""

    def reported() -> bool:
        return bool(
            session.exited is not None or session.stops or session.gdb_gone or session.disconnected
        )

    while True:
        if not session.exit_line:
            session.pump(lambda: reported() or session.exit_line)
        # the line came first: the exit call follows, unless the server ignores it
        grace = time.monotonic() + EXIT_LINE_GRACE
        if session.exit_line and not reported() and not session.pump(reported, grace):
            return None
        if session.exited is not None:
            return ProbeExit(session.exited, "GDB reported the program's exit")
        if not session.stops:  # GDB or the server went away
            return None
        record = session.stops.popleft()
        if breakpoint_number and record.get("bkptno") == breakpoint_number:
            _serve_cmdline(session, cmd_line)
            session.command("-exec-continue")
            continue
        return _stopped(session, spec, record)


def _serve_cmdline(session: ProbeSession, cmd_line: str) -> None:
    """kit_semihost_cmdline(buf, size) answered at its entry: the words written into
    buf, 0 returned (r0), execution back at the caller (lr)."""
    buf, size = session.value("$r0"), session.value("$r1")
    data = cmd_line.encode()[: max(size - 1, 0)] + b"\0"
    session.command(f"-data-write-memory-bytes {buf:#x} {data.hex()}")
    session.command(f"-data-evaluate-expression {mi_quote('$r0 = 0')}")
    session.command(f"-data-evaluate-expression {mi_quote('$pc = $lr & ~1')}")


def _stopped(session: ProbeSession, spec: ProbeSpec, record: Record) -> ProbeExit:
    """The core halted: at the firmware's exit call (its code read from the call), or
    somewhere else (a KitError saying where)."""
    try:
        pc = session.value("$pc")
        at = pc if session.value(f"*(unsigned short *){pc:#x}") == BKPT_SEMIHOSTING else None
        if at is None and session.value(f"*(unsigned short *){pc - 2:#x}") == BKPT_SEMIHOSTING:
            at = pc - 2  # the server stepped over the call before it halted
        if at is not None:
            op, arg = session.value("$r0"), session.value("$r1")
            if op == SYS_EXIT_EXTENDED and session.value(f"*(unsigned int *){arg:#x}") == (
                ADP_STOPPED_APPLICATION_EXIT
            ):
                code = session.value(f"*(unsigned int *){arg + 4:#x}")
                return ProbeExit(code, "the core halted at the firmware's SYS_EXIT_EXTENDED")
            if op == SYS_EXIT:
                return ProbeExit(0 if arg == ADP_STOPPED_APPLICATION_EXIT else 1, "SYS_EXIT")
            raise probe_error(
                f"{session.elf}: the core stopped at semihosting call {op:#04x} at {at:#010x}, "
                f"which the GDB server did not serve",
                f"turn the server's semihosting on ({spec.kind.server.start}; "
                f"run sends {', '.join(spec.kind.server.semihosting) or 'nothing'})",
                "NO_EXIT",
            )
        where = f"{pc:#010x}"
    except (GdbError, GdbEnded):
        where = "an address GDB cannot read"
    reason = record.get("signal-name") or record.get("reason") or "stopped"
    frame = record.results.get("frame")
    func = frame.get("func", "") if isinstance(frame, dict) else ""
    raise probe_error(
        f"{session.elf}: the core stopped ({reason}) at {where}"
        f"{f' in {func}' if isinstance(func, str) and func and func != '??' else ''} "
        "before the firmware's exit",
        "a breakpoint or watchpoint of the server's own, or a fault the firmware did not "
        "report; the console above shows how far it came",
        "NO_EXIT",
    )


def _drain(session: ProbeSession) -> None:
    """The console's last bytes after the exit (QEMU: until it closes the port)."""
    if session.console is None or session.console.fileno() not in session.selector.get_map():
        return
    limit = time.monotonic() + DRAIN_SECONDS
    while time.monotonic() < limit:
        size = len(session.output)
        closed = not session.pump(
            lambda: (
                session.console is None
                or session.console.fileno() not in session.selector.get_map()
            ),
            min(limit, time.monotonic() + QUIET_SECONDS),
        )
        if not closed:
            return  # the port closed (QEMU ended)
        if len(session.output) == size and session.exit_line:
            return  # quiet, and the exit line is there


def _quit(session: ProbeSession) -> None:
    """GDB leaves the board as the firmware left it (disconnect: no detach, which some
    servers answer by resuming the core) and quits; close() kills what is left."""
    if session.gdb_gone:
        return
    with contextlib.suppress(GdbError, GdbEnded):
        if session.core_runs and not session.disconnected and session.exited is None:
            # the exit line came, the server ignored the exit call: halt the parked core
            session.command("-exec-interrupt", timeout=1.0)
            session.pump(lambda: not session.core_runs, time.monotonic() + 1.0)
        if not session.disconnected and session.exited is None:
            session.command("-target-disconnect", timeout=1.0)
        assert session.gdb is not None
        session.gdb.send("-gdb-exit")
        session.pump(lambda: session.gdb_gone, time.monotonic() + 1.0)


def _result(
    session: ProbeSession,
    *,
    image: KitImage,
    spec: ProbeSpec,
    console_read: bool,
    end: ProbeExit | None,
    seconds: float,
    say: Callable[[str], None],
) -> RunResult:
    """The run's RunResult; the exit code is the firmware's `kit: exit N` line when the
    console showed it, else the code of its exit call."""
    output = session.output.decode("utf-8", "replace").replace("\r\n", "\n")
    found = exit_lines(output)
    assert session.gdb is not None
    if found:
        code = int(found[-1])
        if end is not None and end.code != code:
            say(f"ethosu-kit run: note: the firmware printed `kit: exit {code}`, its exit call "
                f"said {end.code} ({end.how}); the line's code is taken")  # fmt: skip
    elif end is None:
        qemu = session.qemu_output.decode("utf-8", "replace").strip().splitlines()
        said = f"QEMU: {qemu[0][:200]}" if qemu else session.gdb.last_log() or "GDB said nothing"
        raise probe_error(
            f"{image.elf}: the session with {spec} ended without the firmware's exit ({said})",
            "did the board reset or the server stop? its own log says more",
            "NO_EXIT",
        )
    elif console_read and end.code == 0 and image.board.console.kind != "none":
        raise probe_error(
            f"{image.elf}: the firmware exited 0 without its last line `kit: exit <code>` "
            "on the console: the app never said how it ended",
            "a kit app calls kit_platform_init() first and ends through kit_app_result(code) "
            "(docs/apps.md); is --serial the board's console UART, at its baud?",
            "NO_EXIT",
        )
    else:
        code = end.code
        if not console_read and image.board.console.kind != "none":
            say(f"ethosu-kit run: note: the board's console ({image.board.console.kind}) was "
                "not read: --serial DEVICE shows it")  # fmt: skip
    return RunResult(
        exit_code=code,
        output=output,
        seconds=seconds,
        timed_out=False,
        command=session.gdb.command,
    )
