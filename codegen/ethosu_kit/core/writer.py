"""The only writer: put a generated project on disk, atomically, never over a user's edit.

`write_project(files, out_dir, force)` builds the whole project in a temporary
sibling folder and swaps it in with renames, so a failure leaves either the old
folder or the new one, never a half-written one. `.ethosu-kit/manifest.json` records
the sha256 of every file the kit wrote; on regeneration a file whose content no
longer matches its hash was edited by the user and is not overwritten without
`--force`. Files the kit did not generate (a build/ folder, notes) are moved into
the new folder untouched.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from ethosu_kit import __version__
from ethosu_kit.core.errors import OutputError
from ethosu_kit.core.files import MAX_MANIFEST, parse_json, read_text
from ethosu_kit.core.staging import (
    clean_stale,
    output_lock,
    refuse_kit_tree,
    signals_deferred,
    temp_dir,
)

MANIFEST = ".ethosu-kit/manifest.json"
MANIFEST_FORMAT = 1


@dataclass
class WriteResult:
    out_dir: Path
    written: list[str] = field(default_factory=list)  # new or changed
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)  # generated before, not any more
    kept: list[str] = field(default_factory=list)  # user entries moved over untouched


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on `path` (created if needed): two processes filling one
    cache entry (a lowered model, a built library) must not both do the work."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def write_file_atomic(path: Path, data: bytes) -> None:
    """Write one file through a temporary sibling and a rename: a reader (or a crash)
    sees the old file or the new one, never half of it."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        Path(tmp).chmod(0o644)  # mkstemp's 0600 is for the temporary name only
        Path(tmp).replace(path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_folder(files: Mapping[str, bytes], out_dir: Path) -> None:
    """Files into a folder that has no manifest (a board folder from `new-board`). A new
    folder is built beside its place and renamed into it, so a failure leaves none; in
    an existing one each file is replaced atomically and every other file stays."""
    for rel in files:
        _check_relpath(rel)
    if out_dir.exists():
        for rel, data in files.items():
            (out_dir / rel).parent.mkdir(parents=True, exist_ok=True)
            write_file_atomic(out_dir / rel, data)
        return
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=out_dir.parent, prefix=f".{out_dir.name}."))
    try:
        for rel, data in files.items():
            (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
            (tmp / rel).write_bytes(data)
        tmp.chmod(_folder_mode(out_dir))
        tmp.rename(out_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _check_relpath(rel: str) -> None:
    p = PurePosixPath(rel)
    if p.is_absolute() or ".." in p.parts or not p.parts or rel == MANIFEST:
        raise ValueError(f"generated path {rel!r} is not a plain relative path")


def read_manifest(out_dir: Path) -> dict[str, str] | None:
    """relative path -> sha256 of what the kit last wrote, or None when not a kit folder."""
    path = out_dir / MANIFEST
    if not path.is_file():
        return None

    text = read_text(path, MAX_MANIFEST, OutputError)
    try:
        data = parse_json(text)
        files = data["files"]
        if not isinstance(files, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in files.items()
        ):
            raise TypeError("files")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise OutputError(
            f"{path}: unreadable manifest ({exc})",
            hint="delete the folder or regenerate with --force",
        ) from exc
    return dict(files)


def _file_hash(path: Path) -> str | None:
    """sha256 of a regular file (not followed through a link), None when there is none."""
    try:
        if not stat.S_ISREG(path.lstat().st_mode):
            return None
        h = hashlib.sha256()
        with path.open("rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
        return h.hexdigest()
    except OSError:
        return None


def _linked(out_dir: Path, rel: str) -> str | None:
    """The part of `rel` (itself or a folder on its way) that is a symbolic link, if any:
    the kit never writes or reads through a link inside the project."""
    parts = PurePosixPath(rel).parts
    for i in range(1, len(parts) + 1):
        sub = str(PurePosixPath(*parts[:i]))
        if (out_dir / sub).is_symlink():
            return sub
        if not (out_dir / sub).is_dir():
            return None
    return None


def _user_entries(root: Path, tracked: set[str]) -> Iterator[str]:
    """Entries under `root` the kit does not own, as large as possible (whole folders)."""
    tracked_dirs = {str(PurePosixPath(t).parent) for t in tracked}
    for t in list(tracked_dirs):
        parts = PurePosixPath(t).parts
        for i in range(1, len(parts)):
            tracked_dirs.add(str(PurePosixPath(*parts[:i])))

    def walk(folder: Path, rel: PurePosixPath) -> Iterator[str]:
        for entry in sorted(folder.iterdir()):
            r = rel / entry.name
            key = str(r)
            if key in tracked:
                continue
            if key in tracked_dirs and entry.is_symlink():
                continue  # a link where the kit writes a folder: dropped with the old folder
            if entry.is_dir() and not entry.is_symlink() and key in tracked_dirs:
                yield from walk(entry, r)
            else:
                yield key

    yield from walk(root, PurePosixPath("."))


def _plan_changes(
    files: Mapping[str, bytes], out_dir: Path, force: bool
) -> tuple[dict[str, str] | None, list[str]]:
    """Refuse before writing anything; return the old manifest and the conflicts forced over."""
    if out_dir.exists() and not out_dir.is_dir():
        raise OutputError(f"{out_dir}: exists and is not a folder", hint="choose another -o")
    for parent in out_dir.parents:
        if parent.exists() or parent.is_symlink():
            if not parent.is_dir():
                raise OutputError(
                    f"{out_dir}: {parent} is a file, not a folder", hint="choose another -o"
                )
            break
    if not out_dir.is_dir() or not any(out_dir.iterdir()):
        return None, []
    old = read_manifest(out_dir)
    if old is None:
        if not force:
            raise OutputError(
                f"{out_dir}: folder is not empty and was not generated by ethosu-kit "
                f"(no {MANIFEST})",
                hint="choose an empty or new folder, or pass --force to generate into it "
                "(files the kit does not generate are kept)",
            )
        old = {}
    conflicts = []
    links = sorted({link for rel in set(old) | set(files) if (link := _linked(out_dir, rel))})
    if links and not force:
        raise OutputError(
            f"{out_dir}: {', '.join(links)} is a symbolic link where the kit writes "
            f"{'files' if len(links) > 1 else 'a file or folder'}; the kit never writes "
            "through a link",
            hint="remove the link, or pass --force to replace the link itself (what it "
            "points to is left untouched)",
        )
    for rel in sorted(set(old) | set(files)):
        if _linked(out_dir, rel):
            continue  # replaced by --force: the link goes, its target stays
        current = _file_hash(out_dir / rel)
        if current is None:
            continue  # deleted by the user, or never there: nothing to lose
        # a path not in the manifest is the user's own file where the kit now writes one
        edited = current != (old[rel] if rel in old else sha256(files[rel]))
        if edited:
            conflicts.append(rel)
    if conflicts and not force:
        names = ", ".join(conflicts[:5]) + (
            f" and {len(conflicts) - 5} more" if len(conflicts) > 5 else ""
        )
        raise OutputError(
            f"{out_dir}: {len(conflicts)} file(s) changed since generation, "
            f"not overwritten: {names}",
            hint="keep your edits elsewhere, or pass --force to overwrite them",
        )
    return old, conflicts


def write_project(files: Mapping[str, bytes], out_dir: Path, force: bool = False) -> WriteResult:
    """Write `files` (relative path -> bytes) as the project in `out_dir`, atomically.

    A failure (a full disk, no permission) is an OutputError and leaves the old folder
    or nothing; so does a signal: SIGINT, and SIGTERM/SIGHUP through the CLI's handler
    (`ethosu_kit.cli.app`), raise inside and the temporary folder is removed.
    """
    for rel in files:
        _check_relpath(rel)
    out_dir = out_dir.resolve()
    refuse_kit_tree(out_dir)
    try:
        with output_lock(out_dir):
            clean_stale(out_dir)
            old, _forced = _plan_changes(files, out_dir, force)
            return _write(files, out_dir, old)
    except OSError as exc:
        where = exc.filename or out_dir
        raise OutputError(
            f"{out_dir}: cannot write the project ({where}: {exc.strerror or exc})"
        ) from None


def _write(files: Mapping[str, bytes], out_dir: Path, old: dict[str, str] | None) -> WriteResult:
    result = WriteResult(out_dir)
    created_parents = _make_parents(out_dir.parent)
    tmp = temp_dir(out_dir, "new")
    moved: list[str] = []
    try:
        tmp.chmod(_folder_mode(out_dir))
        for rel, data in files.items():
            target = tmp / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        manifest = {
            "format": MANIFEST_FORMAT,
            "generator": "ethosu-kit",
            "version": __version__,
            "files": {rel: sha256(data) for rel, data in sorted(files.items())},
        }
        (tmp / MANIFEST).parent.mkdir(parents=True, exist_ok=True)
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
        had_folder = out_dir.is_dir()
        if had_folder:
            tracked = set(files) | set(old or {}) | {MANIFEST}
            for rel in _user_entries(out_dir, tracked):
                (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
                (out_dir / rel).rename(tmp / rel)
                moved.append(rel)
            with signals_deferred():
                _swap(tmp, out_dir)
        else:
            tmp.rename(out_dir)
    except BaseException:
        for rel in reversed(moved):  # give the user's files back before cleaning up
            if (tmp / rel).exists() or (tmp / rel).is_symlink():
                (tmp / rel).rename(out_dir / rel)
        shutil.rmtree(tmp, ignore_errors=True)
        for d in reversed(created_parents):
            with contextlib.suppress(OSError):
                d.rmdir()
        raise
    previous = old or {}
    for rel, data in sorted(files.items()):
        (result.unchanged if previous.get(rel) == sha256(data) else result.written).append(rel)
    result.removed = sorted(set(previous) - set(files))
    result.kept = moved
    return result


@dataclass(frozen=True)
class Before:
    """An output folder before a command that writes it more than once (gen --stack auto:
    the project with default sizes, its build, the sized project), so that its summary
    tells what changed since the command started, not since its own first write."""

    manifest: dict[str, str] | None  # what the kit had generated there (None: nothing)
    entries: frozenset[str]  # the user's entries there (_user_entries)


def before_writing(files: Mapping[str, bytes], out_dir: Path) -> Before:
    if not out_dir.is_dir():
        return Before(None, frozenset())
    old = read_manifest(out_dir)
    tracked = set(files) | set(old or {}) | {MANIFEST}
    return Before(old, frozenset(_user_entries(out_dir, tracked)))


def since(result: WriteResult, before: Before, files: Mapping[str, bytes]) -> WriteResult:
    """`result` of the last write, counted against the folder as it was `before`: a file
    is unchanged only if the kit had written those bytes there before the command, an
    entry is the user's (kept) only if it was there before (not the command's own build
    folder or measured_usage.json)."""
    previous = before.manifest or {}
    out = WriteResult(result.out_dir)
    for rel, data in sorted(files.items()):
        (out.unchanged if previous.get(rel) == sha256(data) else out.written).append(rel)
    out.removed = sorted(set(previous) - set(files))
    out.kept = [rel for rel in result.kept if rel in before.entries]
    return out


@contextlib.contextmanager
def restored_on_failure(out_dir: Path) -> Iterator[None]:
    """Run a step that writes into `out_dir` more than once (gen --stack auto: the
    project with the default sizes, a measuring build in it, then the sized project);
    if the step fails, put the folder back as it was: the copy taken first, or no folder
    (and none of the parents it created) when there was none."""
    out_dir = out_dir.resolve()
    refuse_kit_tree(out_dir)
    with output_lock(out_dir):
        clean_stale(out_dir)
        with _restored(out_dir):
            yield


@contextlib.contextmanager
def _restored(out_dir: Path) -> Iterator[None]:
    missing = []
    p = out_dir
    while not p.exists() and not p.is_symlink():
        missing.append(p)
        p = p.parent
    backup = None
    if out_dir.is_dir():
        backup = temp_dir(out_dir, "before")
        backup.rmdir()
        try:
            shutil.copytree(out_dir, backup, symlinks=True)
        except OSError as exc:
            shutil.rmtree(backup, ignore_errors=True)
            raise OutputError(
                f"{out_dir}: cannot keep a copy to restore on failure ({exc.strerror or exc})"
            ) from None
    try:
        yield
    except BaseException:
        with signals_deferred():
            if backup is not None:
                shutil.rmtree(out_dir, ignore_errors=True)
                backup.rename(out_dir)
            elif missing:
                shutil.rmtree(out_dir, ignore_errors=True)
                for d in missing[1:]:
                    with contextlib.suppress(OSError):
                        d.rmdir()
        raise
    if backup is not None:
        shutil.rmtree(backup, ignore_errors=True)


def _swap(new: Path, out_dir: Path) -> None:
    """Replace folder `out_dir` by `new` with two renames; restore on failure."""
    backup = temp_dir(out_dir, "old")
    backup.rmdir()
    out_dir.rename(backup)
    try:
        new.rename(out_dir)
    except BaseException:
        backup.rename(out_dir)
        raise
    shutil.rmtree(backup, ignore_errors=True)


def _folder_mode(out_dir: Path) -> int:
    """mkdtemp makes 0700 folders; the project gets the mode a plain mkdir would give."""
    if out_dir.is_dir():
        return out_dir.stat().st_mode & 0o7777
    umask = os.umask(0)
    os.umask(umask)
    return 0o777 & ~umask


def _make_parents(folder: Path) -> list[Path]:
    """mkdir -p that remembers what it created, so a failure can remove it again."""
    missing = []
    p = folder
    while not p.exists():
        missing.append(p)
        p = p.parent
    created = []
    for d in reversed(missing):
        d.mkdir()
        created.append(d)
    return created
