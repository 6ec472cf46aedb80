"""[port]: the board's own code, read without touching the filesystem, checked after.

`port_table` reads the keys; `check_port_files` then checks each path against a view
of the board's folder (`FolderFiles`: the real folder; `MemoryFiles`: the files a
draft is about to write), so `new-board` validates a draft before any folder exists.
A path is checked for existence, then for staying inside the folder.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import Protocol

from ethosu_kit.board.checks import fail, port_path_problem
from ethosu_kit.board.hooks import HOOK_NAMES
from ethosu_kit.board.model import Board, Port
from ethosu_kit.board.reader import Table, one_of


class PortFiles(Protocol):
    """What the checks need to know of the board's folder."""

    def describe(self) -> str: ...  # the folder, for messages
    def is_file(self, rel: str) -> bool: ...
    def is_dir(self, rel: str) -> bool: ...
    def leads_out(self, rel: str) -> Path | None: ...  # where a link out of it goes


class FolderFiles:
    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def describe(self) -> str:
        return str(self.folder)

    def is_file(self, rel: str) -> bool:
        return (self.folder / rel).is_file()

    def is_dir(self, rel: str) -> bool:
        return (self.folder / rel).is_dir()

    def leads_out(self, rel: str) -> Path | None:
        target = (self.folder / rel).resolve()
        return None if target.is_relative_to(self.folder.resolve()) else target


class MemoryFiles:
    """The files of a folder not written yet: relative path -> contents."""

    def __init__(self, files: dict[str, bytes], folder: Path) -> None:
        self.files = {PurePosixPath(rel) for rel in files}
        self.folder = folder

    def describe(self) -> str:
        return str(self.folder)

    def is_file(self, rel: str) -> bool:
        return PurePosixPath(rel) in self.files

    def is_dir(self, rel: str) -> bool:
        folder = PurePosixPath(rel)
        return str(folder) == "." or any(folder in p.parents for p in self.files)

    def leads_out(self, rel: str) -> Path | None:
        return None  # no links among files in memory


def port_table(t: Table, folder: Path) -> Port:
    t.only_schema()
    sources = t.value("sources")
    includes = t.value("include_dirs")
    cmake = t.value("cmake")
    hooks = t.value("hooks")
    for i, hook in enumerate(hooks):
        one_of(t, f"hooks[{i}]", hook, HOOK_NAMES)
        if hook in hooks[:i]:
            raise t.fail(f"hooks[{i}]", f"{hook!r} is named twice")
    if hooks and not sources:
        raise t.fail("hooks", "hooks are implemented by [port].sources, and there are none")
    return Port(
        dir=str(folder),
        sources=tuple(sources),
        include_dirs=tuple(includes),
        cmake=cmake or None,
        hooks=tuple(hooks),
    )


def _paths(port: Port) -> list[tuple[str, str, bool]]:
    """(key, relative path, is a folder) of every path [port] names, in the file's order."""
    paths = [(f"sources[{i}]", rel, False) for i, rel in enumerate(port.sources)]
    paths += [(f"include_dirs[{i}]", rel, True) for i, rel in enumerate(port.include_dirs)]
    return paths + ([("cmake", port.cmake, False)] if port.cmake else [])


def check_port_files(board: Board, files: PortFiles) -> None:
    """Every [port] path names a file (or folder) inside the board's folder."""
    t = Table({}, "port", board.source)
    for key, rel, want_dir in _paths(board.port):
        if not (files.is_dir(rel) if want_dir else files.is_file(rel)):
            what = "folder" if want_dir else "file"
            raise t.fail(key, f"{rel!r}: no such {what} in {files.describe()}")
    for key, rel, _ in _paths(board.port):
        refused = port_path_problem(rel)
        if refused:
            raise fail(board, f"port.{key}", *refused)
    for key, rel, _ in _paths(board.port):
        target = files.leads_out(rel)
        if target is not None:
            raise fail(
                board, f"port.{key}", f"{rel!r} leads out of the board's folder (to {target})"
            )
