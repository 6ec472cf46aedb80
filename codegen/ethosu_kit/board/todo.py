"""The TODO sentinel of a drafted board, in one place.

A board drafted by `ethosu-kit new-board` may leave the facts of TODO_KEYS as the
string "TODO": a guess would build firmware that hangs or faults. The board loads (so
`boards` can report it and the bring-up builds); what needs a fact calls `require`,
which refuses with an error naming the key. Every other key is read as usual ("TODO"
is an error there). `new-board` writes the same sentinel (board/draft).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ethosu_kit.core.errors import BoardError

if TYPE_CHECKING:
    from ethosu_kit.board.model import Board

TODO = "TODO"
TODO_KEYS: dict[str, str] = {
    "npu.base": "the NPU's register base address",
    "npu.irq": "the NPU's interrupt number",
    "boot.vector_region": "the region the core fetches its vector table from at reset",
}
# what a placeholder reads as while the fact is unknown; None drops the key's table
_STAND_IN: dict[str, int | None] = {"npu.base": 0, "npu.irq": 0, "boot.vector_region": None}


def is_todo(value: Any) -> bool:
    return isinstance(value, str) and value == TODO


def take_todos(data: dict[str, Any]) -> tuple[str, ...]:
    """Find the TODO_KEYS left "TODO" and put stand-ins in `data` so the rest validates."""
    found = []
    for key in TODO_KEYS:
        table, _, leaf = key.partition(".")
        section = data.get(table)
        if isinstance(section, dict) and is_todo(section.get(leaf)):
            found.append(key)
            stand_in = _STAND_IN[key]
            if stand_in is None:
                del data[table]
            else:
                section[leaf] = stand_in
    return tuple(found)


def require(board: Board, keys: tuple[str, ...] | list[str], needed_for: str) -> None:
    """Refuse when one of `keys` is still TODO in the board file, naming it."""
    missing = [k for k in keys if k in board.todo]
    if missing:
        what = "; ".join(f"{k} ({TODO_KEYS.get(k, 'unknown')})" for k in missing)
        raise BoardError(
            f"{board.source}: {what}: still TODO, and {needed_for} needs "
            + ("it" if len(missing) == 1 else "them"),
            hint='write the value in place of "TODO" (`ethosu-kit boards '
            f"{Path(board.source).parent}` lists what is left)",
        )
