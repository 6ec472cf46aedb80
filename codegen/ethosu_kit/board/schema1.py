"""Schema 1 board files, still read: where their keys went in schema 2.

`[uart]` is `[console]` (same keys; any kind needed a base), `qemu_machine = "..."`
is `[qemu].machine`, `fpu = true/false` the core's FPU or none (tables.py), and the
glue folder (`glue_dir`, default the file's folder) is the port: its `board.c`, when
present, provides the `board_init` hook. Schema 1 has no `[boot]`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ethosu_kit.board.model import Port
from ethosu_kit.board.reader import Table

SCHEMAS = (1, 2)
# schema 2's table -> schema 1's key for the same facts
RENAMED = (("console", "uart"), ("qemu", "qemu_machine"), ("port", "glue_dir"))


def check_not_both(t: Table, data: dict[str, Any]) -> None:
    """Refuse a file that gives a fact both ways."""
    for new, old in RENAMED:
        if new in data and old in data:
            raise t.fail(
                old, f"schema 1's {old} and schema 2's [{new}] are both given; keep [{new}]"
            )


def console_key(data: dict[str, Any]) -> str:
    """The table the console is read from."""
    return "uart" if "uart" in data else "console"


def glue_port(t: Table, folder: Path) -> Port:
    """A schema 1 board's glue folder: board.c (kit_hal_board_init) and its headers. The
    one filesystem look-up of parsing: whether board.c exists decides the port."""
    glue = t.value("glue_dir")
    where = folder / glue if glue else folder
    if (where / "board.c").is_file():
        return Port(
            dir=str(where), sources=("board.c",), include_dirs=(".",), hooks=("board_init",)
        )
    return Port(dir=str(where))
