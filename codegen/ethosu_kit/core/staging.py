"""Where a write stages its folders, and who else may be writing: the temporary folders
beside an output folder (named by kind and PID so a later write can clean up after a
killed one), the lock that makes concurrent writers into one folder take turns, the
signals held while folders are swapped, and the refusal to write into the kit's tree.
core.writer is the only user.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import shutil
import signal
import tempfile
from collections.abc import Iterator
from pathlib import Path

from ethosu_kit.core.errors import OutputError
from ethosu_kit.core.paths import kit_root


@contextlib.contextmanager
def signals_deferred() -> Iterator[None]:
    """Hold SIGINT/SIGTERM/SIGHUP while the old folder is swapped out and removed: a
    signal there would leave a `.name.old-*` folder behind. Delivered right after."""
    held = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
    try:
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    except (AttributeError, OSError, ValueError):  # no pthread_sigmask here
        yield
        return
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


# Temporary folders beside the output are named `.<name>.ethosu-kit-<kind>-<pid>-<random>`:
# recognisable, and owned by a process the next writer can check. A writer killed by
# SIGKILL leaves its folder behind; the next write into the same folder removes it once
# that process is gone (or, when the output folder itself is missing because the kill
# fell between the swap's two renames, puts the old project back).
_TEMP_KINDS = ("new", "old", "before")
_held: dict[Path, int] = {}


def temp_dir(out_dir: Path, kind: str) -> Path:
    prefix = f".{out_dir.name}.ethosu-kit-{kind}-{os.getpid()}-"
    return Path(tempfile.mkdtemp(prefix=prefix, dir=out_dir.parent))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True  # someone else's (or not a pid): leave it
    return True


def clean_stale(out_dir: Path) -> list[Path]:
    """Remove the temporary folders of dead writers beside `out_dir`; the removed."""
    parent = out_dir.parent
    if not parent.is_dir():
        return []
    removed = []
    pattern = re.compile(
        rf"\.{re.escape(out_dir.name)}\.ethosu-kit-({'|'.join(_TEMP_KINDS)})-(\d{{1,10}})-[^/]*"
    )
    for entry in sorted(parent.iterdir()):
        m = pattern.fullmatch(entry.name)
        if not m or entry.is_symlink() or not entry.is_dir() or _alive(int(m.group(2))):
            continue
        if m.group(1) in ("old", "before") and not out_dir.exists():
            entry.rename(out_dir)  # the project as it was before the killed write
            continue
        shutil.rmtree(entry, ignore_errors=True)
        removed.append(entry)
    return removed


@contextlib.contextmanager
def output_lock(out_dir: Path) -> Iterator[None]:
    """Hold an exclusive lock on `out_dir`'s parent folder while writing `out_dir`, so
    concurrent gens into one folder take turns (re-entrant within the process)."""
    parent = out_dir.parent
    if parent in _held or not parent.is_dir():
        _held[parent] = _held.get(parent, 0) + 1
        try:
            yield
        finally:
            _held[parent] -= 1
            if not _held[parent]:
                del _held[parent]
        return
    fd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        _held[parent] = 1
        try:
            yield
        finally:
            del _held[parent]
    finally:
        os.close(fd)


def refuse_kit_tree(out_dir: Path) -> None:
    """Never write over the kit: its own folder, a folder that holds it, or one of its
    source folders (a project may live in a folder of its own inside a checkout)."""
    try:
        root = kit_root().resolve()
    except RuntimeError:
        return
    inside_source = any(
        out_dir == root / top or (root / top) in out_dir.parents for top in _KIT_FOLDERS
    )
    if out_dir == root or out_dir in root.parents or inside_source:
        raise OutputError(
            f"{out_dir}: is the kit's own folder, holds it or is one of its source folders "
            f"({root}); the kit never writes there",
            hint="generate into a folder of its own, e.g. -o ~/fw",
        )


_KIT_FOLDERS = ("codegen", "sdk", "drivers", "boards", "apps", "cmake", "linker", "docs",
                "scripts", "tests", ".git")  # fmt: skip
