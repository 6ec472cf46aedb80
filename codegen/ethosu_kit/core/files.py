"""Reading a user's file: its type checked before a byte is read, what is read capped.

Every command that reads a file the user names (a .pte, a board.toml, a .npy/.npz
input, a vectors file, a memory_plan.json, an ELF) goes through here, so a FIFO
never blocks the kit, a character device (`/dev/zero`, `/dev/urandom`) or a
directory never reaches a parser, and a gigantic file is refused by its size
before it is read:

- the file is opened with `O_NONBLOCK` (opening a FIFO with no writer would block
  otherwise) and `O_NOCTTY`, then `fstat`ed: only a regular file is read, and
  the check is made on the file actually opened, not on a name that may change;
- its size is checked against a named `Limit` before reading, and the read stops
  at the limit anyway (a file growing meanwhile, a /proc file that reports 0);
- each failure is one `KitError` (or the caller's subclass) naming the file, what
  it was read as and, for the size, the limit by name. A limit is raised with its
  environment variable, e.g. `ETHOSU_KIT_MAX_PTE_BYTES=4GiB`.

`read_bytes` / `read_text` read a whole file; `open_regular` hands back the open,
checked file for streaming readers (numpy, zipfile, pyelftools).
`parse_json` / `parse_toml` parse what was read: a nesting or a number too deep or
too long for the parser is a ValueError (JsonProblem, TomlProblem), like bad syntax.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
import sys
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from ethosu_kit.core.errors import KitError
from ethosu_kit.core.sizes import parse_size, size_text

_CHUNK = 1 << 20


@dataclass(frozen=True)
class Limit:
    """The most bytes the kit reads from one kind of file; `env` raises it."""

    env: str  # e.g. ETHOSU_KIT_MAX_PTE_BYTES
    default: int
    what: str  # "a .pte", for the message

    @property
    def bytes(self) -> int:
        text = os.environ.get(self.env, "").strip()
        if not text:
            return self.default

        try:
            value = parse_size(text)
        except ValueError:
            raise KitError(
                f"{self.env}={text!r}: not a size", hint="use e.g. 4GiB, 512MiB or 1048576"
            ) from None
        if value <= 0:
            raise KitError(f"{self.env}={text!r}: must be > 0")
        return value


# A .pte is placed in a 32-bit address space; the largest board memory is a few GiB.
MAX_PTE = Limit("ETHOSU_KIT_MAX_PTE_BYTES", 2 << 30, "a .pte")
MAX_BOARD = Limit("ETHOSU_KIT_MAX_BOARD_BYTES", 1 << 20, "a board file")
# A vendor's .pdsc or device SVD: the largest SVDs (every register of a big SoC) are ~30 MiB.
MAX_DEVICE_FILE = Limit("ETHOSU_KIT_MAX_DEVICE_FILE_BYTES", 64 << 20, "a .pdsc or SVD file")
# NPU inputs are feature maps of at most a few MiB; an .npz is read member by member.
MAX_INPUT = Limit("ETHOSU_KIT_MAX_INPUT_BYTES", 256 << 20, "an input file")
MAX_PLAN = Limit("ETHOSU_KIT_MAX_PLAN_BYTES", 16 << 20, "a memory plan")
MAX_ELF = Limit("ETHOSU_KIT_MAX_ELF_BYTES", 1 << 30, "an ELF")
# A board's own C, headers and CMake file, copied by `new-board --from`.
MAX_PORT_FILE = Limit("ETHOSU_KIT_MAX_PORT_FILE_BYTES", 4 << 20, "a board's port file")
MAX_MANIFEST = Limit("ETHOSU_KIT_MAX_MANIFEST_BYTES", 16 << 20, "a manifest")


# JSON the kit reads back (memory_plan.json, manifest.json, the measurement record) is
# a few levels deep and holds addresses and sizes: nesting and digit runs are bounded
# before the parser sees them (the C parser recurses per level; int() refuses 4,300
# digits with a ValueError of its own).
MAX_JSON_DEPTH = 32
MAX_JSON_DIGITS = 40
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_JSON_BRACKET = re.compile(r"[\[\]{}]")


class JsonProblem(ValueError):
    """Why a text is not JSON the kit reads; the caller names the file."""


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_JSON_DIGITS:
        raise JsonProblem(f"a number of {len(text)} digits (at most {MAX_JSON_DIGITS})")
    return int(text)


def _bounded_float(text: str) -> float:
    if len(text) > MAX_JSON_DIGITS + 10:
        raise JsonProblem(f"a number of {len(text)} characters")
    return float(text)


def parse_json(text: str) -> Any:
    """`json.loads` with nesting and number lengths bounded first; JsonProblem (a
    ValueError) on anything else than JSON within the bounds."""
    depth = deepest = 0
    for m in _JSON_BRACKET.finditer(_JSON_STRING.sub('""', text)):
        depth += 1 if m.group() in "[{" else -1
        if depth > deepest:
            deepest = depth
            if deepest > MAX_JSON_DEPTH:
                raise JsonProblem(f"nested deeper than {MAX_JSON_DEPTH} levels")
    try:
        return json.loads(text, parse_int=_bounded_int, parse_float=_bounded_float)
    except JsonProblem:
        raise
    except json.JSONDecodeError as exc:
        raise JsonProblem(f"not JSON (line {exc.lineno}: {exc.msg})") from None
    except (ValueError, RecursionError) as exc:
        raise JsonProblem(f"not JSON ({str(exc)[:80]})") from None


class TomlProblem(ValueError):
    """Why a text is not TOML the kit reads; the caller names the file."""


def parse_toml(text: str) -> dict[str, Any]:
    """`tomllib.loads` with its two failures that are not TOMLDecodeError (an integer
    beyond Python's digit limit: a ValueError from int(); nesting deeper than the
    stack: tomllib recurses per level of arrays and inline tables) as TomlProblem (a
    ValueError) like a syntax error: the reader of every TOML file the user names."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise TomlProblem(f"not valid TOML: {exc}") from None
    except ValueError:
        raise TomlProblem(
            f"an integer of more than {sys.get_int_max_str_digits():,} digits"
        ) from None
    except RecursionError:
        raise TomlProblem("values nested deeper than the TOML reader follows") from None


def _kind(mode: int) -> str | None:
    """What a non-regular file is, in words (None for a regular file)."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def too_large(path: Path | str, size: int, limit: Limit, error: type[KitError]) -> KitError:
    """The error for `size` bytes over `limit` (also for sizes a file only declares)."""
    cap = limit.bytes
    return error(
        f"{path}: {size_text(size)} ({size} bytes) is more than the kit reads from "
        f"{limit.what} ({limit.env} = {cap})",
        hint=f"if the file is right, raise the limit: {limit.env}=<bytes> (e.g. 4GiB)",
    )


def _open_error(path: Path | str, exc: OSError, what: str, error: type[KitError]) -> KitError:
    if isinstance(exc, FileNotFoundError):
        return error(f"{path}: no such file")
    if isinstance(exc, IsADirectoryError):
        return error(f"{path}: is a directory, not {what}")
    if isinstance(exc, NotADirectoryError):
        return error(f"{path}: a folder on its path is a file")
    if isinstance(exc, PermissionError):
        return error(f"{path}: permission denied")
    return error(f"{path}: cannot read ({exc.strerror or exc})")


@contextlib.contextmanager
def open_regular(
    path: Path | str, limit: Limit, error: type[KitError] = KitError
) -> Iterator[tuple[BinaryIO, int]]:
    """(the open file, its size) of a regular file no larger than `limit`; else `error`."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise _open_error(path, exc, limit.what, error) from None
    try:
        st = os.fstat(fd)
        kind = _kind(st.st_mode)
        if kind is not None:
            raise error(f"{path}: is {kind}, not {limit.what}", hint="give a regular file")
        if st.st_size > limit.bytes:
            raise too_large(path, st.st_size, limit, error)
        # back to blocking reads: a regular file never blocks, and buffered readers
        # (numpy, zipfile) do not expect EAGAIN
        os.set_blocking(fd, True)
        f = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with f:
        yield f, st.st_size


def read_bytes(path: Path | str, limit: Limit, error: type[KitError] = KitError) -> bytes:
    """The whole of a regular file, at most `limit` bytes."""
    cap = limit.bytes
    with open_regular(path, limit, error) as (f, size):
        chunks = []
        total = 0
        try:
            while True:
                chunk = f.read(min(_CHUNK, cap + 1 - total))
                if not chunk:
                    break
                chunks.append(chunk)
                total += len(chunk)
                if total > cap:  # grew after the size check (or a size-0 /proc file)
                    raise too_large(path, max(total, size), limit, error)
        except OSError as exc:
            raise _open_error(path, exc, limit.what, error) from None
        return b"".join(chunks)


def read_text(path: Path | str, limit: Limit, error: type[KitError] = KitError) -> str:
    """`read_bytes` decoded as UTF-8; a byte that is not names its offset."""
    data = read_bytes(path, limit, error)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(
            f"{path}: not UTF-8 text (byte {exc.start} is 0x{data[exc.start]:02x})"
        ) from None
