"""GDB's machine interface (GDB/MI 3), as much of it as `run --probe` speaks.

`parse_record(line)` reads one line GDB writes on its MI channel into a `Record`: a
result (`^done`, `^error,msg="…"`), an async event (`*stopped,reason="…"`,
`=thread-group-exited,exit-code="01"`), or a stream (`~` GDB's console, `@` the target's
output: semihosting console text served by GDB's File-I/O, `&` GDB's log). Values are
C strings (str), tuples (dict) and lists (list). `Gdb` runs `gdb-multiarch
--interpreter=mi3` as a child of its own process group and hands its records over as
they come; the caller (firmware.probe) owns the loop, the time limit and the child's end.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TypeAlias

from ethosu_kit.core.process import _kill_group, spawn

GDB = "gdb-multiarch"  # Debian's GDB for every architecture (Arm included)


def gdb_environ() -> dict[str, str]:
    """GDB's environment: the C locale, so GDB escapes every byte it does not print,
    whatever the user's locale, and its messages are the ones matched here."""
    return {**os.environ, "LC_ALL": "C"}


Value: TypeAlias = "str | dict[str, Value] | list[Value]"


class RecordKind(StrEnum):
    RESULT = "^"  # the answer to a command: done, running, connected, error, exit
    EXEC = "*"  # the target's run state: running, stopped
    STATUS = "+"  # progress (a download)
    NOTIFY = "="  # thread groups started/exited, breakpoints changed, …
    CONSOLE = "~"  # GDB's own console text
    TARGET = "@"  # the program's output through GDB (semihosting File-I/O writes)
    LOG = "&"  # GDB's log: errors and warnings
    PROMPT = "("  # "(gdb)": GDB waits for a command


@dataclass(frozen=True)
class Record:
    kind: RecordKind
    token: int | None = None  # the number a command was sent with, echoed on its answer
    cls: str = ""  # done, error, stopped, thread-group-exited, …
    results: dict[str, Value] = field(default_factory=dict)
    text: str = ""  # a stream record's text

    @property
    def data(self) -> bytes:
        """A stream record's text as the bytes it stands for (Gdb reads one character per
        byte; GDB escapes what it does not print as octal, one byte each)."""
        return self.text.encode("latin-1", "replace")

    def get(self, key: str) -> str:
        """A string result, "" when absent or not a string."""
        value = self.results.get(key, "")
        return value if isinstance(value, str) else ""


class MiSyntaxError(ValueError):
    pass


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "a": "\a", "b": "\b",
            "f": "\f", "v": "\v", "e": "\x1b"}  # fmt: skip


def _cstring(line: str, i: int) -> tuple[str, int]:
    """The C string starting at line[i] (a quote), and the index after it. GDB escapes
    quotes, backslashes, control characters (\\n, octal \\ooo) and passes other bytes."""
    if i >= len(line) or line[i] != '"':
        raise MiSyntaxError(f"expected a string at {i}")
    out: list[str] = []
    i += 1
    while i < len(line):
        c = line[i]
        if c == '"':
            return "".join(out), i + 1
        if c != "\\":
            out.append(c)
            i += 1
            continue
        i += 1
        if i >= len(line):
            break
        c = line[i]
        if c in "01234567":
            digits = c
            while len(digits) < 3 and i + 1 < len(line) and line[i + 1] in "01234567":
                i += 1
                digits += line[i]
            out.append(chr(int(digits, 8)))
        else:
            out.append(_ESCAPES.get(c, c))
        i += 1
    raise MiSyntaxError("unterminated string")


def _value(line: str, i: int) -> tuple[Value, int]:
    if i >= len(line):
        raise MiSyntaxError("expected a value")
    c = line[i]
    if c == '"':
        return _cstring(line, i)
    if c == "{":
        results, i = _results(line, i + 1, "}")
        return results, i
    if c == "[":
        i += 1
        items: list[Value] = []
        while i < len(line) and line[i] != "]":
            if line[i] in '"{[':
                item, i = _value(line, i)
            else:  # a list of results: [frame={…},frame={…}]
                _name, i = _name_at(line, i)
                item, i = _value(line, i)
            items.append(item)
            if i < len(line) and line[i] == ",":
                i += 1
        if i >= len(line):
            raise MiSyntaxError("unterminated list")
        return items, i + 1
    raise MiSyntaxError(f"unexpected {c!r} at {i}")


def _name_at(line: str, i: int) -> tuple[str, int]:
    eq = line.find("=", i)
    if eq < 0:
        raise MiSyntaxError(f"expected name= at {i}")
    return line[i:eq], eq + 1


def _results(line: str, i: int, end: str | None) -> tuple[dict[str, Value], int]:
    """name=value pairs from line[i], up to `end` (a closing brace) or the line's end."""
    out: dict[str, Value] = {}
    while i < len(line):
        if end is not None and line[i] == end:
            return out, i + 1
        name, i = _name_at(line, i)
        out[name], i = _value(line, i)
        if i < len(line) and line[i] == ",":
            i += 1
    if end is not None:
        raise MiSyntaxError("unterminated tuple")
    return out, i


def parse_record(line: str) -> Record:
    """One MI output line (without its line end) as a Record; MiSyntaxError if it is none."""
    line = line.rstrip("\r\n")
    if line.startswith("(gdb)"):
        return Record(RecordKind.PROMPT)
    digits = len(line) - len(line.lstrip("0123456789"))
    token = int(line[:digits]) if digits else None
    body = line[digits:]
    if not body:
        raise MiSyntaxError("empty record")
    try:
        kind = RecordKind(body[0])
    except ValueError:
        raise MiSyntaxError(f"not an MI record: {line[:60]!r}") from None
    if kind in (RecordKind.CONSOLE, RecordKind.TARGET, RecordKind.LOG):
        text, _ = _cstring(body, 1)
        return Record(kind, token, text=text)
    comma = body.find(",")
    cls = body[1:] if comma < 0 else body[1:comma]
    results = _results(body, comma + 1, None)[0] if comma >= 0 else {}
    return Record(kind, token, cls, results)


def mi_quote(text: str) -> str:
    """`text` as an MI command argument (a C string)."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


def gdb_command(elf: Path) -> tuple[str, ...]:
    """GDB on `elf`, speaking MI 3, reading no init file and no script the ELF names
    (an image's .debug_gdb_scripts section would otherwise run Python in GDB)."""
    return (
        GDB, "--nx", "--quiet", "--interpreter=mi3",
        "-iex", "set auto-load off",
        "-iex", "set pagination off",
        "-iex", "set confirm off",
        "-iex", "set width 0",
        "-iex", "set remote system-call-allowed 0",
        str(elf),
    )  # fmt: skip


class Gdb:
    """gdb-multiarch as a child: its own process group (a terminal's Ctrl-C reaches the
    kit only), PR_SET_PDEATHSIG on Linux, killed with its group by `kill()`. Commands are
    numbered (`send` returns the token its result record carries)."""

    def __init__(self, cmd: Sequence[str], cwd: Path) -> None:
        self.command = tuple(cmd)
        # semihosting File-I/O opens files relative to GDB's folder (cwd)
        self.proc = spawn(cmd, cmd[0], cwd=cwd, stdin=subprocess.PIPE, env=gdb_environ())
        assert self.proc.stdout is not None
        self._fd = self.proc.stdout.fileno()
        self._pending = b""
        self._token = 0
        self.log: list[str] = []  # GDB's console and log text, for error messages

    def fileno(self) -> int:
        return self._fd

    def send(self, command: str) -> int:
        """Write one MI command; its token."""
        self._token += 1
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(f"{self._token}{command}\n".encode())
            self.proc.stdin.flush()
        except (BrokenPipeError, ValueError):
            pass  # GDB is gone: the reader sees its output end
        return self._token

    def read(self) -> list[Record] | None:
        """The records of what GDB wrote since (call when its fd is readable); None when
        GDB closed its output (it exited)."""
        data = os.read(self._fd, 1 << 16)
        if not data:
            return None
        lines = (self._pending + data).split(b"\n")
        self._pending = lines.pop()
        records = []
        for raw in lines:
            # one character per byte: a string's octal escapes and its raw bytes alike,
            # so the target's text (`@`) goes back to its own bytes (Record.data)
            text = raw.decode("latin-1")
            if not text.strip():
                continue
            try:
                record = parse_record(text)
            except MiSyntaxError:
                self.log.append(text)  # not MI: GDB's own stderr (a crash, a warning)
                continue
            if record.kind in (RecordKind.CONSOLE, RecordKind.LOG):
                self.log.append(record.text)
            records.append(record)
        return records

    def last_log(self, chars: int = 300) -> str:
        """GDB's last words (for an error line): its log and console text, on one line."""
        text = " ".join(self.log).encode("latin-1", "replace").decode("utf-8", "replace")
        return " ".join(text.split())[-chars:]

    def kill(self) -> None:
        """End GDB and everything of its group, reap it (every exit path calls this)."""
        if self.proc.returncode is None:
            _kill_group(self.proc)
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
