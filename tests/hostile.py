"""The hostile-input contract, checked on the real CLI in a child process.

A hostile input must give: a non-zero exit (or 0 with sane output where the input
is legal), exactly one `error:` line and at most one `hint:` line on stderr, no
traceback and no `internal error`, no hang (a timeout fails the test), no process
left behind (the child runs in its own session; nothing may remain in its process
group after it exits) and no partial output (the caller names the paths that must
not exist afterwards).
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import subprocess
import sys
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

TIMEOUT = 60.0
# examples the property tests ran, by kind (printed in pytest's terminal summary)
EXAMPLES: Counter[str] = Counter()


def example(kind: str, path: Path, data: bytes) -> Path:
    """A property test's example of `kind`, counted and written to `path` for the CLI."""
    EXAMPLES[kind] += 1
    path.write_bytes(data)
    return path


@dataclass(frozen=True)
class Result:
    args: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str

    def __str__(self) -> str:
        return (
            f"ethosu-kit {' '.join(self.args)} -> {self.returncode}\n"
            f"--- stdout\n{self.stdout[-2000:]}\n--- stderr\n{self.stderr[-4000:]}"
        )


def live_processes() -> Iterator[tuple[Path, list[str]]]:
    """Each running process (zombies left out): its /proc folder and the fields of its
    stat after the command name (state, ppid, pgrp, ...). One that ends meanwhile is passed."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z":
            yield entry, fields


def _group_members(pgid: int) -> list[int]:
    return [int(entry.name) for entry, fields in live_processes() if int(fields[2]) == pgid]


def parse_args(*args: str | Path) -> Result:
    """Only the CLI's argument parsing (`cli.app.build_parser`), in-process: for checks
    that argparse's type functions make (sizes, seeds), no subprocess and no .pte is read,
    so a path that does not exist does. A refusal is a Result for assert_refused; a
    success has returncode 0 (nothing runs)."""
    from ethosu_kit.cli.app import build_parser

    argv = tuple(str(a) for a in args)  # the command first: it selects its arguments
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            build_parser(argv[0]).parse_args(argv)
    except SystemExit as exc:
        return Result(argv, int(exc.code or 0), "", err.getvalue())
    return Result(argv, 0, "", err.getvalue())


def run_kit(
    *args: str | Path,
    timeout: float = TIMEOUT,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    stdin: int | None = subprocess.DEVNULL,
) -> Result:
    """`python -m ethosu_kit ARGS` in its own session; fails on a hang or a leftover."""
    argv = tuple(str(a) for a in args)
    full_env = dict(os.environ)
    full_env.pop("ETHOSU_KIT_DEBUG", None)
    full_env.update(env or {})
    proc = subprocess.Popen(
        [sys.executable, "-m", "ethosu_kit", *argv],
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=full_env,
        cwd=cwd,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        raise AssertionError(f"ethosu-kit {' '.join(argv)} hung for {timeout} s\n{err}") from None
    left = _group_members(proc.pid)
    if left:
        os.killpg(proc.pid, signal.SIGKILL)
        raise AssertionError(f"ethosu-kit {' '.join(argv)} left processes behind: {left}")
    return Result(argv, proc.returncode, out, err)


def assert_refused(
    result: Result, *needles: str, absent: Iterable[Path] = (), code: int | None = None
) -> str:
    """One `error:` line (containing every needle), an optional `hint:`, non-zero exit."""
    assert result.returncode != 0, result
    assert result.returncode != 70, f"internal error instead of a user error:\n{result}"
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr, result
    # an unconfined emulator's one `warning:` line (firmware/sandbox.py) is not a refusal
    lines = [line for line in result.stderr.splitlines() if not line.startswith("warning: ")]
    assert 1 <= len(lines) <= 2, result
    assert lines[0].startswith("error: "), result
    assert all(line.startswith("hint: ") for line in lines[1:]), result
    for needle in needles:
        assert needle in lines[0], f"{needle!r} not in {lines[0]!r}"
    if code is not None:
        assert result.returncode == code, result
    for path in absent:
        assert not path.exists() and not path.is_symlink(), f"{path}: partial output left\n{result}"
        leftovers = [p for p in path.parent.glob(f".{path.name}.*")] if path.parent.is_dir() else []
        assert not leftovers, f"temporary output left: {leftovers}"
    return lines[0]


def assert_contract(result: Result, absent: Iterable[Path] = ()) -> None:
    """Either a clean success or a one-line refusal: never a traceback or internal error."""
    if result.returncode == 0:
        assert "Traceback" not in result.stderr and "internal error" not in result.stderr, result
        assert not any(line.startswith("error:") for line in result.stderr.splitlines()), result
        return
    assert_refused(result, absent=absent)
