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
"""

from __future__ import annotations

import contextlib
import os
import selectors
import shutil
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

from ethosu_kit.core.errors import KitError
from ethosu_kit.core.files import MAX_ELF, open_regular
from ethosu_kit.core.process import MAX_OUTPUT, _signals_raise
from ethosu_kit.firmware import probe_qemu
from ethosu_kit.firmware.elf import ELF_ERRORS, read_elf
from ethosu_kit.firmware.flash import manifest_path, read_manifest
from ethosu_kit.firmware.gdb_mi import (
    GDB,
    Gdb,
    Record,
    RecordKind,
    gdb_command,
    gdb_environ,
    mi_quote,
)
from ethosu_kit.firmware.image import KitImage
from ethosu_kit.firmware.qemu import RunResult, stand_in_line
from ethosu_kit.firmware.sandbox import Sandbox
from ethosu_kit.firmware.serial_port import DEFAULT_BAUD, SerialPort
from ethosu_kit.npu.exit_codes import RUN_TOOL, exit_lines

# Arm semihosting, as the kit's SDK calls it (sdk/src/semihosting.c)
BKPT_SEMIHOSTING = 0xBEAB  # Thumb `bkpt 0xab`
SYS_EXIT = 0x18
SYS_EXIT_EXTENDED = 0x20
ADP_STOPPED_APPLICATION_EXIT = 0x20026
CMDLINE_FUNCTION = "kit_semihost_cmdline"  # sdk/src/semihosting_files.c
VECTOR_SECTIONS = (".vectors", ".isr_vector", ".vector_table")

CONNECT_SECONDS = 10.0  # GDB retries a refused connection this long (a server starting)
EXIT_LINE_GRACE = 3.0  # after `kit: exit N`, how long the server may take to report the exit
DRAIN_SECONDS = 2.0  # after the exit, the UART's last bytes (USB serial latency)
QUIET_SECONDS = 0.3  # … ended early once the line is there and the port is quiet this long


@dataclass(frozen=True)
class ProbeServer:
    """What one kind of GDB server needs of GDB: its monitor commands and default port."""

    name: str
    default_port: int
    reset: tuple[str, ...]  # reset the core and leave it halted
    semihosting: tuple[str, ...]  # serve semihosting, file calls through GDB's File-I/O
    start: str  # how a user starts the server (for hints and docs/running.md)


class ProbeKind(Enum):
    """The GDB servers `run --probe` knows (docs/running.md's "Running on a board")."""

    PYOCD = ProbeServer(
        "pyocd",
        3333,
        reset=("monitor reset halt",),
        semihosting=("monitor arm semihosting enable",),
        start="pyocd gdbserver --target <part> --semihosting -O semihost_use_syscalls=true",
    )
    OPENOCD = ProbeServer(
        "openocd",
        3333,
        reset=("monitor reset halt",),
        # fileio: the file calls go to GDB (run's folder), not to OpenOCD's own folder
        semihosting=("monitor arm semihosting enable", "monitor arm semihosting_fileio enable"),
        start="openocd -f interface/<probe>.cfg -f target/<part>.cfg",
    )
    JLINK = ProbeServer(
        "jlink",
        2331,
        reset=("monitor reset 0", "monitor halt"),
        # IOClient 2: semihosting I/O goes to the GDB client (GDB's File-I/O)
        semihosting=("monitor semihosting enable", "monitor semihosting IOClient 2"),
        start="JLinkGDBServer -device <part> -if SWD -speed 4000 -nogui -port 2331",
    )
    QEMU = ProbeServer(
        "qemu",
        1234,
        reset=("monitor system_reset",),  # QEMU's monitor: reads SP and PC from memory
        semihosting=(),  # QEMU's -semihosting-config enable=on,target=gdb does it
        start="qemu-system-arm -M <machine> -cpu <cpu> -display none -monitor none -S "
        "-gdb tcp::1234 -semihosting-config enable=on,target=gdb "
        "-serial tcp::4444,server=on,wait=off",
    )

    @property
    def server(self) -> ProbeServer:
        value: ProbeServer = self.value
        return value


KINDS = {k.server.name: k for k in ProbeKind}


@dataclass(frozen=True)
class ProbeSpec:
    """`--probe KIND[:HOST:PORT]`; `launch`: `--probe qemu` alone, QEMU started by run."""

    kind: ProbeKind
    host: str
    port: int
    launch: bool = False

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    def __str__(self) -> str:
        return (
            f"{self.kind.server.name} (the kit's QEMU)"
            if self.launch
            else (f"{self.kind.server.name} at {self.address}")
        )


def parse_probe(text: str) -> ProbeSpec:
    """`KIND`, `KIND:PORT` or `KIND:HOST:PORT`; a ValueError saying what is wrong."""
    name, _, rest = text.partition(":")
    kind = KINDS.get(name.lower())
    if kind is None:
        raise ValueError(f"{name!r} is not a probe kind: one of {', '.join(KINDS)}")
    if not rest:
        if kind is ProbeKind.QEMU:
            return ProbeSpec(kind, "127.0.0.1", 0, launch=True)
        return ProbeSpec(kind, "localhost", kind.server.default_port)
    host, _, port_text = rest.rpartition(":")
    host = host.removeprefix("[").removesuffix("]") or "localhost"
    if not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise ValueError(f"{text!r}: the port must be a number from 1 to 65535")
    if any(c.isspace() for c in host):
        raise ValueError(f"{text!r}: the host has a space in it")
    return ProbeSpec(kind, host, int(port_text))


# -- what to load and how to start it -------------------------------------------------


@dataclass(frozen=True)
class Vectors:
    """The image's vector table: where it is, its initial SP and reset handler."""

    address: int
    sp: int
    reset: int


@dataclass(frozen=True)
class ImageFacts:
    """What run --probe reads of the ELF before GDB starts."""

    vectors: Vectors
    cmdline: int | None  # kit_semihost_cmdline's address (Thumb bit clear), if linked
    # True: its code is loaded where it runs (not copied there by the start-up, which
    # would copy over a software breakpoint GDB wrote before it)
    cmdline_in_place: bool = False


def image_facts(image: KitImage) -> ImageFacts:
    """The vector table (its `.vectors` section, the kit's startup.c) and the SDK's
    command-line reader of the ELF."""
    try:
        with open_regular(image.elf, MAX_ELF) as (f, _size):
            elf = read_elf(f, VECTOR_SECTIONS)
    except ELF_ERRORS as exc:
        raise KitError(f"{image.elf}: cannot read its vector table ({exc})") from None
    found = elf.symbols.get(CMDLINE_FUNCTION)
    cmdline = found[0] & ~1 if found is not None else None
    in_place = cmdline is not None and any(
        s.vaddr <= cmdline < s.vaddr + s.filesz and s.vaddr == s.paddr for s in elf.segments
    )
    for name in VECTOR_SECTIONS:
        data = elf.data.get(name, b"")
        section = next((s for s in elf.sections if s.name == name), None)
        if section is not None and len(data) >= 8:
            sp = int.from_bytes(data[0:4], "little")
            reset = int.from_bytes(data[4:8], "little")
            return ImageFacts(Vectors(section.addr, sp, reset), cmdline, in_place)
    raise KitError(
        f"{image.elf}: no vector table ({' or '.join(VECTOR_SECTIONS)} section): "
        "run --probe cannot tell where the image starts"
    )


def boots_cold(image: KitImage, vectors: Vectors) -> bool:
    """True when the vector table lies in non-volatile memory: a reset starts the image
    (a cold boot), as on power-up. Else the image lives in RAM a debugger fills."""
    region = image.board.region_at(vectors.address)
    return region is not None and not region.volatile


@dataclass(frozen=True)
class LoadStep:
    what: str  # for the notice line: "fw.MRAM.hex", "the ELF's load segments"
    command: str  # the MI command
    path: Path | None = None  # the file it loads (GDB reads it: bound into its sandbox)


def load_steps(elf: Path) -> tuple[list[LoadStep], str]:
    """(the MI commands that put the image on the board, where they came from): the
    flash artefacts `build` wrote beside the ELF (firmware.flash: each non-volatile
    region's Intel HEX, loaded by GDB's `load`, which programs flash through the server)
    when their manifest is this ELF's, not older than it, and holds every stored byte;
    else the ELF's load segments."""
    manifest_file = manifest_path(elf)
    if not manifest_file.is_file():
        return [_elf_step()], "the ELF"
    manifest = read_manifest(manifest_file)
    if manifest.elf != elf.name or not manifest.files:
        return [_elf_step()], f"the ELF ({manifest_file.name} lists no flash image of it)"
    if manifest_file.stat().st_mtime < elf.stat().st_mtime:
        return [_elf_step()], f"the ELF ({manifest_file.name} is older than it: not used)"
    if manifest.left_out:  # bytes stored in RAM: no flasher writes them, GDB's load does
        return [_elf_step()], f"the ELF ({manifest_file.name} leaves out {manifest.left_out[0]})"
    steps = []
    for image in manifest.files:
        path = (elf.parent / image.hex).resolve()
        if not path.is_file():
            raise KitError(f"{manifest_file}: lists {image.hex}, which is not there ({path})")
        if '"' in str(path) or "\n" in str(path):
            raise KitError(f"{path}: GDB cannot load a file whose path has a quote in it")
        steps.append(LoadStep(path.name, _console(f'load "{path}"'), path))
    return steps, manifest_file.name


def _elf_step() -> LoadStep:
    return LoadStep("the ELF's load segments", "-target-download")


def _console(command: str) -> str:
    """A GDB console command as one MI command."""
    return f"-interpreter-exec console {mi_quote(command)}"


# -- the session ----------------------------------------------------------------------


class _GdbError(Exception):
    """A command GDB answered with ^error (its message)."""


class _Ended(Exception):
    """GDB ended, or the server went away, while a command waited for its answer."""


def _error(message: str, hint: str | None, code: str) -> KitError:
    error = KitError(message, hint=hint)
    error.exit_code = RUN_TOOL[code]
    return error


@dataclass
class _Exit:
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
            raise _error(
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
        """Send one MI command and wait for its answer; _GdbError for ^error, _Ended when
        GDB or the server went away first."""
        assert self.gdb is not None
        token = self.gdb.send(command)
        limit = None if timeout is None else time.monotonic() + timeout
        done = self.pump(lambda: token in self.results or self.gdb_gone, limit)
        if token not in self.results:
            raise _Ended("GDB ended" if done else f"no answer to {command} in {timeout:g} s")
        record = self.results.pop(token)
        if record.cls == "error":
            raise _GdbError(record.get("msg") or "error")
        return record

    def value(self, expression: str) -> int:
        """An expression GDB evaluates on the target, as an unsigned 32-bit number."""
        as_number = mi_quote(f"(unsigned int)({expression})")
        record = self.command(f"-data-evaluate-expression {as_number}")
        text = record.get("value").split()[0] if record.get("value") else ""
        try:
            return int(text, 0) & 0xFFFFFFFF
        except ValueError:
            raise _GdbError(f"{expression} = {record.get('value')!r}") from None

    def _timeout(self) -> KitError:
        lines = len(self.output.decode("utf-8", "replace").splitlines())
        where = f"on {self.spec}" if self.phase == "running" else f"{self.phase} {self.spec}"
        return _error(
            f"{self.elf}: no exit after {self.timeout:g} s ({where}): {lines} console lines "
            f"so far{', shown above' if lines else ''}",
            "a firmware must end with exit()/kit_hal_exit(); raise --timeout for long runs"
            + ("" if self.phase == "running" else "; is the GDB server answering?"),
            "TIMEOUT",
        )


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
        raise _error(
            f"{GDB} is not installed: run --probe drives the board's GDB server with it",
            "apt-get install gdb-multiarch (Debian/Ubuntu)",
            "REFUSED",
        )
    if image.board.qemu_layout and spec.kind is not ProbeKind.QEMU:
        raise _error(
            f"{image.elf}: laid out for {image.board.name}'s QEMU stand-in (gen "
            f"--qemu-stand-in), not for the board {spec} is attached to",
            "generate the project without --qemu-stand-in for the board",
            "REFUSED",
        )
    start = time.monotonic()
    facts = image_facts(image)
    vectors = facts.vectors
    if cmd_line and facts.cmdline is None:
        raise _error(
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
            _connect(session, spec, say)
            cold = boots_cold(image, vectors)
            say(f"ethosu-kit run: loading {', '.join(s.what for s in steps)} (from {source}) "
                f"through {spec}; {_how_it_starts(image, vectors, cold)}")  # fmt: skip
            _load(session, spec, steps)
            breakpoint_number = (
                _cmdline_breakpoint(session, image, facts)
                if cmd_line and facts.cmdline is not None
                else None
            )
            _start(session, spec, vectors, cold)
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
    target = probe_qemu.qemu_target(image)
    if target.stand_in:
        say(stand_in_line(image.board, target))
    session.qemu = probe_qemu.launch(target, confine)
    session.add(session.qemu)
    return ProbeSpec(ProbeKind.QEMU, probe_qemu.LOCALHOST, session.qemu.gdb_port)


def _qemu_refused(session: ProbeSession) -> KitError:
    text = session.qemu_output.decode("utf-8", "replace").strip()
    first = text.splitlines()[0] if text else f"exit status {session.qemu.proc.returncode}"
    return _error(
        f"{session.elf}: QEMU did not start ({first[:200]})",
        "its machine and cpu come from the board's [qemu] data (docs/running.md)",
        "REFUSED",
    )


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
                raise _qemu_refused(session) from None
            session.pump(lambda: False, time.monotonic() + 0.05)


def _monitor(session: ProbeSession, spec: ProbeSpec, commands: Sequence[str], why: str) -> None:
    """The server's monitor commands, each refusal an error naming it."""
    for command in commands:
        try:
            session.command(_console(command))
        except _GdbError as exc:
            raise _error(
                f"{session.elf}: the GDB server at {spec.address} refused `{command}` "
                f"({why}): {exc}",
                f"is it a {spec.kind.server.name} server? (started like: {spec.kind.server.start})",
                "REFUSED",
            ) from None
    if commands:  # a monitor reset changed the registers behind GDB's back
        session.command(_console("maintenance flush register-cache"))


def _semihosting_on(session: ProbeSession, spec: ProbeSpec, say: Callable[[str], None]) -> None:
    """The server's semihosting on. A server that refuses the command may have it on
    from its own command line: a note, not an error (a call it then does not serve
    stops the core, and that is an error naming the call)."""
    for command in spec.kind.server.semihosting:
        try:
            session.command(_console(command))
        except _GdbError as exc:
            say(
                f"ethosu-kit run: note: the GDB server at {spec.address} refused `{command}` "
                f"({exc}); semihosting must then be on from its own start "
                f"({spec.kind.server.start})"
            )


def _connect(session: ProbeSession, spec: ProbeSpec, say: Callable[[str], None]) -> None:
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
        session.command(f"-target-select extended-remote {spec.address}")
    except (_GdbError, _Ended) as exc:
        if session.qemu is not None and session.qemu.proc.poll() is not None:
            raise _qemu_refused(session) from None
        raise _error(
            f"{session.elf}: cannot connect to the GDB server at {spec.address} ({exc})",
            f"start the {spec.kind.server.name} server first: {spec.kind.server.start} "
            "(docs/running.md, Running on a board)",
            "REFUSED",
        ) from None
    _semihosting_on(session, spec, say)
    session.phase = "resetting the board through"
    _monitor(session, spec, spec.kind.server.reset, "resetting the core halted")


def _load(session: ProbeSession, spec: ProbeSpec, steps: Sequence[LoadStep]) -> None:
    session.phase = "loading the image through"
    for step in steps:
        try:
            session.command(step.command)
        except (_GdbError, _Ended) as exc:
            raise _error(
                f"{session.elf}: loading {step.what} through {spec} failed: {exc}",
                "is the board's flash or RAM where the image was linked for? "
                "(the server's own log says more)",
                "REFUSED",
            ) from None


def _cmdline_breakpoint(session: ProbeSession, image: KitImage, facts: ImageFacts) -> str:
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
    except _GdbError as exc:
        raise _error(
            f"{image.elf}: cannot set the breakpoint that answers the app's command line "
            f"at {address:#010x} ({CMDLINE_FUNCTION}): {exc}",
            "the core's hardware breakpoints may all be taken, or not reach that address",
            "REFUSED",
        ) from None
    bkpt = record.results.get("bkpt")
    return str(bkpt.get("number", "")) if isinstance(bkpt, dict) else ""


def _start(session: ProbeSession, spec: ProbeSpec, vectors: Vectors, cold: bool) -> None:
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
            session.command(f"-exec-jump *{vectors.reset & ~1:#x}")
    except (_GdbError, _Ended) as exc:
        raise _error(
            f"{session.elf}: the core did not start through {spec}: {exc}", None, "REFUSED"
        ) from None
    session.phase = "running"


def _wait_exit(
    session: ProbeSession, spec: ProbeSpec, breakpoint_number: str | None, cmd_line: str
) -> _Exit | None:
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
            return _Exit(session.exited, "GDB reported the program's exit")
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


def _stopped(session: ProbeSession, spec: ProbeSpec, record: Record) -> _Exit:
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
                return _Exit(code, "the core halted at the firmware's SYS_EXIT_EXTENDED")
            if op == SYS_EXIT:
                return _Exit(0 if arg == ADP_STOPPED_APPLICATION_EXIT else 1, "SYS_EXIT")
            raise _error(
                f"{session.elf}: the core stopped at semihosting call {op:#04x} at {at:#010x}, "
                f"which the GDB server did not serve",
                f"turn the server's semihosting on ({spec.kind.server.start}; "
                f"run sends {', '.join(spec.kind.server.semihosting) or 'nothing'})",
                "NO_EXIT",
            )
        where = f"{pc:#010x}"
    except (_GdbError, _Ended):
        where = "an address GDB cannot read"
    reason = record.get("signal-name") or record.get("reason") or "stopped"
    frame = record.results.get("frame")
    func = frame.get("func", "") if isinstance(frame, dict) else ""
    raise _error(
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
    with contextlib.suppress(_GdbError, _Ended):
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
    end: _Exit | None,
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
        raise _error(
            f"{image.elf}: the session with {spec} ended without the firmware's exit ({said})",
            "did the board reset or the server stop? its own log says more",
            "NO_EXIT",
        )
    elif console_read and end.code == 0 and image.board.console.kind != "none":
        raise _error(
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
