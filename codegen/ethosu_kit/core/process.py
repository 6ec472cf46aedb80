"""Run an emulator (QEMU, an FVP) as a child that never outlives the kit.

The child gets its own session and process group, so a terminal's Ctrl-C reaches
only the kit, which then ends the whole group; on Linux it also gets
PR_SET_PDEATHSIG, so even a `kill -9` of the kit takes the emulator with it. On
every other exit path (normal end, time limit, output limit, an exception,
SIGINT/SIGTERM/SIGHUP while it runs) the group is killed with SIGKILL and the child
reaped before the function returns or raises. The output (UART on stdout) is read
as it comes, echoed if asked, and capped.
"""

from __future__ import annotations

import contextlib
import ctypes
import math
import os
import selectors
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

from ethosu_kit.core.errors import KitError

# --timeout: more than a day of emulation is a mistake, not a run
MAX_TIMEOUT = 24 * 3600.0
# UART text kept (and echoed) at most; a firmware printing in a loop is stopped there
MAX_OUTPUT = 64 << 20

_FORWARDED = (signal.SIGTERM, signal.SIGHUP)


class Interrupted(KitError):
    """The kit got SIGINT/SIGTERM/SIGHUP while the child ran; the child is gone."""

    def __init__(self, signum: int, what: str) -> None:
        name = signal.Signals(signum).name
        super().__init__(f"interrupted by {name}: {what} stopped")
        self.exit_code = 128 + signum


@dataclass(frozen=True)
class ChildResult:
    returncode: int | None  # None: killed by the kit (time or output limit)
    output: bytes
    seconds: float
    timed_out: bool
    output_overflow: bool


def check_timeout(seconds: float, option: str = "--timeout") -> float:
    """`seconds` if it is a usable time limit, else a KitError naming the limit."""
    if not math.isfinite(seconds) or seconds <= 0 or seconds > MAX_TIMEOUT:
        raise KitError(
            f"{option} {seconds:g}: must be a number of seconds > 0 and at most "
            f"{MAX_TIMEOUT:g} (one day)",
            hint="e.g. --timeout 30; firmware that should run longer is stuck",
        )
    return seconds


def _die_with_parent_hook() -> Callable[[], None] | None:
    """A preexec_fn that makes the child get SIGKILL when the kit dies (Linux only)."""
    if not sys.platform.startswith("linux"):
        return None

    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()
    pr_set_pdeathsig = 1

    def hook() -> None:
        prctl(pr_set_pdeathsig, int(signal.SIGKILL))
        if os.getppid() != parent:  # the kit died before prctl took effect
            os._exit(1)

    return hook


def spawn(
    cmd: Sequence[str],
    what: str,
    *,
    cwd: Path | None = None,
    stdin: int = subprocess.DEVNULL,
    hint: str | None = None,
    env: Mapping[str, str] | None = None,
) -> subprocess.Popen[bytes]:
    """Start `cmd` in its own process group (`_kill_group` ends all of it), stdout and
    stderr together on one pipe, SIGKILLed if the kit dies first (Linux). A child that
    cannot start is a KitError: "cannot start `what`: why"."""
    try:
        return subprocess.Popen(
            list(cmd),
            stdin=stdin,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            cwd=cwd,
            start_new_session=True,
            preexec_fn=_die_with_parent_hook(),  # noqa: PLW1509 - set before exec, no threads touched
            env=env,
        )
    except OSError as exc:
        raise KitError(f"cannot start {what}: {exc.strerror or exc}", hint=hint) from None


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL the child's whole group, then reap the child (call before it is reaped)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


@contextlib.contextmanager
def _signals_raise(what: str) -> Iterator[None]:
    """SIGTERM and SIGHUP raise Interrupted while the child runs (SIGINT already raises
    KeyboardInterrupt), so the `finally` that kills the child runs on them too."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, _frame: FrameType | None) -> None:
        raise Interrupted(signum, what)

    previous = {s: signal.signal(s, handler) for s in _FORWARDED}
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)


def run_child(
    cmd: Sequence[str],
    timeout: float,
    *,
    what: str,
    cwd: Path | None = None,
    echo: Callable[[bytes], None] | None = None,
    max_output: int = MAX_OUTPUT,
) -> ChildResult:
    """Run `cmd` (stdout and stderr together) for at most `timeout` seconds.

    `what` names the child in messages ("QEMU"). A KeyboardInterrupt or Interrupted
    propagates after the child's group is killed and reaped.
    """
    check_timeout(timeout)
    start = time.monotonic()
    deadline = start + timeout
    chunks: list[bytes] = []
    total = 0
    timed_out = overflow = False
    with _signals_raise(what):
        proc = spawn(cmd, f"{what} ({cmd[0]})", cwd=cwd)
        try:
            assert proc.stdout is not None
            fd = proc.stdout.fileno()
            with selectors.DefaultSelector() as sel:
                sel.register(fd, selectors.EVENT_READ)
                while True:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        timed_out = True
                        break
                    if not sel.select(min(left, 1.0)):
                        continue
                    data = os.read(fd, 1 << 16)
                    if not data:
                        break  # the child closed its output: it is exiting
                    if total + len(data) > max_output:
                        overflow = True
                        break
                    total += len(data)
                    chunks.append(data)
                    if echo is not None:
                        echo(data)
            if timed_out or overflow:
                _kill_group(proc)
            else:
                try:
                    proc.wait(timeout=max(deadline - time.monotonic(), 0.001))
                except subprocess.TimeoutExpired:
                    timed_out = True
                    _kill_group(proc)
        finally:
            # every path, the exceptional ones included: nothing of the group survives.
            # (Only an unreaped leader's group is signalled: its pid cannot be reused.)
            if proc.returncode is None:
                _kill_group(proc)
            if proc.stdout is not None:
                proc.stdout.close()
    killed = timed_out or overflow
    return ChildResult(
        returncode=None if killed else proc.returncode,
        output=b"".join(chunks),
        seconds=time.monotonic() - start,
        timed_out=timed_out,
        output_overflow=overflow,
    )
