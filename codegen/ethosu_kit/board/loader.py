"""Load and validate a board.toml into a `Board`.

Stage 0 of the data flow. A board is data: the built-in ones live in
`boards/<name>/board.toml`, a custom one is any file of the same schema. Every
problem raises `BoardError` naming the file, the key and what is wrong, e.g.
`my.toml: region[2] 'SRAM'.size: must be > 0, got -4`.

The keys, their types and defaults are schema.py's (docs/boards.md shows them); each
table is read by its reader (tables.py, memory_map.py, runners.py, ports.py,
stand_in.py) through the one typed reader (reader.py). A schema 1 file keeps loading
(schema1.py); a drafted board's "TODO" facts are todo.py's. Parsing reads no files: the
[port] paths are checked against the board's folder after it (`load_board_file`).

Numbers may be TOML integers (0x10000000, 512_000) or strings: "0x8000",
"512 KiB", "2 MiB", "1 GiB".
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from ethosu_kit.board import schema1
from ethosu_kit.board.checks import BOARD_NAME_RE, check_board
from ethosu_kit.board.memory_map import boot_from, boot_table, external_data_table, regions_table
from ethosu_kit.board.model import Board, BootFrom
from ethosu_kit.board.ports import FolderFiles, PortFiles, check_port_files, port_table
from ethosu_kit.board.reader import Table
from ethosu_kit.board.runners import fvp_table, qemu_table
from ethosu_kit.board.schema1 import SCHEMAS
from ethosu_kit.board.stand_in import lay_onto_stand_in
from ethosu_kit.board.tables import console_table, cpu_table, glue_table, npu_table
from ethosu_kit.board.todo import require, take_todos
from ethosu_kit.core.errors import BoardError
from ethosu_kit.core.files import MAX_BOARD, TomlProblem, parse_toml, read_text
from ethosu_kit.core.paths import boards_dir

__all__ = ["builtin_boards", "load_board", "load_board_file", "parse_board", "require",
           "stand_in_board"]  # fmt: skip

SCHEMA_VERSION = 2


def parse_board(
    text: str, source: str, folder: Path | None = None, *, qemu_layout: bool = False
) -> Board:
    """Validate board.toml text; `source` names the file in messages, `folder` holds its
    port sources (default: the folder of `source`). The port's files are not looked at
    (`check_port_files`), except a schema 1 file's board.c (schema1.glue_port).
    `qemu_layout`: the board laid onto its QEMU stand-in, its [qemu.layout] as parsed
    (typed, checked) applied to the data, which is then parsed again."""
    try:
        data = parse_toml(text)
    except TomlProblem as exc:
        raise BoardError(f"{source}: {exc}") from None
    todo = take_todos(data)
    board = _board(data, source, folder, todo, qemu_layout=False)
    if qemu_layout:
        board = _board(lay_onto_stand_in(data, board), source, folder, todo, qemu_layout=True)
    return board


def _board(
    data: dict[str, Any],
    source: str,
    folder: Path | None,
    todo: tuple[str, ...],
    *,
    qemu_layout: bool,
) -> Board:
    t = Table(data, "", source, "")
    t.only_schema()
    schema = t.value("schema")
    if schema not in SCHEMAS:
        raise t.fail("schema", f"version {schema} is not known; this kit reads {SCHEMAS}")
    schema1.check_not_both(t, data)
    name = t.value("name")
    if not BOARD_NAME_RE.fullmatch(name):
        raise t.fail("name", f"{name!r}: use lower case letters, digits and '-'")
    folder = (folder or Path(source).parent).resolve()

    npu = npu_table(t.table("npu", schema_table="npu"))
    cpu = cpu_table(t.table("cpu", schema_table="cpu"), npu.irq)
    boot_t = t.table("boot", schema_table="boot") if "boot" in data else None
    regions = regions_table(data.get("region"), source, boot_from(boot_t) == BootFrom.NV)
    console = console_table(t.table(schema1.console_key(data), schema_table="console"), schema)
    if "qemu_machine" in data:
        machine = t.value("qemu_machine")
        qemu = qemu_table(Table({"machine": machine}, "qemu_machine", source, "qemu"), cpu.core)
    elif "qemu" in data:
        qemu = qemu_table(t.table("qemu", schema_table="qemu"), cpu.core, regions)
    else:
        qemu = None
    if "port" in data:
        port = port_table(t.table("port", schema_table="port"), folder)
    else:
        port = schema1.glue_port(t, folder)
    aliases = tuple(t.value("aliases"))
    description = t.value("description")
    board = Board(
        name=name,
        aliases=aliases,
        description=description,
        source=source,
        cpu=cpu,
        npu=npu,
        console=console,
        regions=regions,
        port=port,
        boot=boot_table(boot_t, regions, cpu) if boot_t is not None else None,
        qemu=qemu,
        qemu_layout=qemu_layout,
        fvp=fvp_table(t.table("fvp", schema_table="fvp"), npu) if "fvp" in data else None,
        schema=schema,
        glue=glue_table(t.table("glue", required=False)),
        external_data=external_data_table(t.table("external_data", required=False), regions),
        todo=todo,
    )
    check_board(board)  # plausible addresses, safe flags and text
    return board


def load_board_text(
    text: str, source: str, folder: Path, files: PortFiles, *, qemu_layout: bool = False
) -> Board:
    """`parse_board`, then the [port] paths checked against `files` (the board's folder)."""
    board = parse_board(text, source, folder, qemu_layout=qemu_layout)
    check_port_files(board, files)
    return board


def load_board_file(path: Path, *, qemu_layout: bool = False) -> Board:
    if path.is_dir():
        path = path / "board.toml"

    text = read_text(path, MAX_BOARD, BoardError)
    folder = path.resolve().parent
    return load_board_text(text, str(path), folder, FolderFiles(folder), qemu_layout=qemu_layout)


def stand_in_board(board: Board) -> Board:
    """`board` laid onto its QEMU stand-in ([qemu.layout]), from the same board file;
    a BoardError when the board has no stand-in layout."""
    if board.qemu_layout:
        return board
    return load_board_file(Path(board.source), qemu_layout=True)


@cache
def _builtin() -> tuple[Board, ...]:
    return tuple(load_board_file(p) for p in sorted(boards_dir().glob("*/board.toml")))


def builtin_boards() -> list[Board]:
    return list(_builtin())


def load_board(name_or_path: str | Path) -> Board:
    """A built-in board by name or alias (see `ethosu-kit boards`), a board folder or a
    board.toml path."""
    text = str(name_or_path)
    path = Path(text)
    if isinstance(name_or_path, Path) or text.endswith(".toml") or "/" in text or path.is_dir():
        return load_board_file(path)
    for board in _builtin():
        if text.lower() == board.name or text.lower() in board.aliases:
            return board
    known = ", ".join(f"{b.name} ({', '.join(b.aliases)})" for b in _builtin())
    raise BoardError(
        f"unknown board {text!r}",
        hint=f"built-in boards: {known}; or give the path of a board.toml",
    )
