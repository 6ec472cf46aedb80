"""Text made safe for where the kit writes it: C identifiers, C strings, CMake
arguments, comments, the terminal. One escaper per target, shared by every stage.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text

from ethosu_kit.core.errors import KitError


def printable(text: str) -> str:
    """`text` with every control character shown as '?': names from a .pte or a board
    file never move the user's cursor or recolour the terminal."""
    return "".join("?" if (ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0) else c for c in text)


def add_text_row(table: Any, *cells: str) -> None:
    """A rich table row of plain text: `[` in a name is not markup, controls are '?'."""
    table.add_row(*(Text(printable(c)) for c in cells))


def cident(text: str) -> str:
    """An upper-case C identifier fragment: `temp_pool` -> `TEMP_POOL`."""
    out = "".join(c if c.isalnum() else "_" for c in text).upper()
    return out if out and not out[0].isdigit() else f"_{out}"


def comment_safe(text: str) -> str:
    """`text` made safe inside any comment the kit writes (C/ld `/* */`, CMake `#`,
    scatter `;`): one line (control characters become '?'), and no `*/` to end it.
    Paths and names a user gives land in the headers of every generated file."""
    line = "".join("?" if (ord(c) < 0x20 or ord(c) == 0x7F) else c for c in text)
    return line.replace("*/", "*_/").replace("/*", "/_*")


def c_string(text: str) -> str:
    """A C string literal: quotes and backslashes escaped, anything not printable
    ASCII as an octal escape (a newline cannot end the literal, nor `??/` a trigraph)."""
    out = []
    for c in text:
        if c in '\\"':
            out.append("\\" + c)
        elif c == "?":
            out.append("\\?")
        elif " " <= c <= "~":
            out.append(c)
        else:
            out.extend(f"\\{b:03o}" for b in c.encode("utf-8"))
    return '"' + "".join(out) + '"'


_CMAKE_ESCAPES = {"\\": "\\\\", '"': '\\"', "$": "\\$", ";": "\\;", "\n": "\\n",
                  "\r": "\\r", "\t": "\\t"}  # fmt: skip


def cmake_string(text: str) -> str:
    """A CMake quoted argument holding exactly `text`: no variable reference, no
    generator of a second list element (`;`), no line break of its own."""
    if any(ord(c) < 0x20 and c not in "\n\r\t" for c in text):
        raise KitError(f"{text!r}: a control character cannot be written into CMake")
    return '"' + "".join(_CMAKE_ESCAPES.get(c, c) for c in text) + '"'
