"""A draft's files: board.toml from render/templates/board.toml.j2 (and the console stub),
through the kit's one Jinja environment; validated with the real loader from memory;
written without touching a user's other files.
"""

from __future__ import annotations

import json
import re
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from ethosu_kit import __version__
from ethosu_kit.board.draft.facts import Draft
from ethosu_kit.board.loader import load_board_text
from ethosu_kit.board.ports import MemoryFiles
from ethosu_kit.board.todo import TODO
from ethosu_kit.core import jinja
from ethosu_kit.core.errors import BoardError, KitError
from ethosu_kit.core.files import MAX_BOARD
from ethosu_kit.core.paths import templates_dir
from ethosu_kit.core.writer import write_folder as write_files

if TYPE_CHECKING:
    import jinja2

    from ethosu_kit.board.model import Board

_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f]+")


def comment(text: str) -> str:
    """Text safe inside a one-line # comment (a newline would end it and start TOML)."""
    return _CONTROL_RE.sub(" ", text).strip()


def c_comment(text: str) -> str:
    """Text safe inside a C block comment: one line, and no */ to end it early."""
    return comment(text).replace("*/", "* /").replace("/*", "/ *")


def _environment() -> jinja2.Environment:
    filters = {"toml": toml_value, "comment": comment, "c_comment": c_comment,
               "toml_key": toml_key, "hex": lambda n: f"0x{n:08x}"}  # fmt: skip
    return jinja.environment([templates_dir()], filters)


_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def toml_key(key: str) -> str:
    return key if _BARE_KEY.match(key) else json.dumps(key)


def toml_value(value: Any) -> str:
    """One TOML value (strings JSON-escaped: a valid TOML basic string, no injection)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{toml_key(k)} = {toml_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(f"no TOML for {type(value).__name__}")


def render_console_stub(d: Draft) -> str:
    text: str = _environment().get_template("board_console.c.j2").render(d=d)
    return text


def render_board_toml(d: Draft) -> str:
    env = _environment()
    text: str = env.get_template("board.toml.j2").render(d=d, version=__version__, TODO=TODO)
    return text


def render_folder(d: Draft) -> dict[str, bytes]:
    files = dict(d.port_files)
    files["board.toml"] = render_board_toml(d).encode("utf-8")
    return files


def _check_rel(rel: str) -> None:
    p = PurePosixPath(rel)
    if p.is_absolute() or ".." in p.parts or not p.parts:
        raise BoardError(f"{rel!r}: a board file must stay inside the board's folder")


def validate(files: dict[str, bytes], name_for_errors: str) -> Board:
    """Load the drafted folder with the real loader, from memory: its port's paths are
    checked against the files about to be written."""
    for rel in files:
        _check_rel(rel)
    folder = Path(name_for_errors).resolve().parent
    limit = MAX_BOARD.bytes  # the loader's own limit: never draft a board `boards` refuses
    if len(files["board.toml"]) > limit:
        raise BoardError(
            f"{name_for_errors}: the drafted board.toml would be {len(files['board.toml']):,} "
            f"bytes, more than the kit reads ({MAX_BOARD.env}={limit:,})"
        )
    text = files["board.toml"].decode("utf-8")
    return load_board_text(text, name_for_errors, folder, MemoryFiles(files, folder))


def write_folder(files: dict[str, bytes], out: Path, force: bool) -> list[str]:
    """Write the folder; never over a user's files: a non-empty `out` needs `force`, and
    then only the files drafted here are replaced (others stay), each atomically."""
    if out.exists() and not out.is_dir():
        raise KitError(f"{out}: exists and is not a folder")
    if out.is_dir() and any(out.iterdir()) and not force:
        raise KitError(
            f"{out}: exists and is not empty; not writing a board into it",
            hint="give a new folder, or --force to replace the files new-board writes "
            "(board.toml and its stubs; other files stay)",
        )
    write_files(files, out)
    return sorted(files)
