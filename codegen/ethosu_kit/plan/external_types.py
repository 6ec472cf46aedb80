"""The plan's record of one .ptd (named external data); plan.external places it."""

from __future__ import annotations

from dataclasses import dataclass

from ethosu_kit.core.text import cident

PREFIX = "ptd_"


@dataclass(frozen=True)
class ExternalPtd:
    """One .ptd the program needs, and where it was asked to go."""

    tag: str
    nbytes: int  # the file's size
    sha256: str  # the file's
    blocks: tuple[str, ...]  # the Vela block kinds it holds for the program (cmd_data, …)
    keys: tuple[str, ...]  # the keys the program reads from it
    region: str | None = None  # --place-data; None: the default
    slot_address: int | None = None  # --ptd-slot: a fixed reserved slot
    slot_size: int | None = None

    @property
    def buffer(self) -> str:
        return buffer_name(self.tag)

    @property
    def size(self) -> int:
        """The bytes the plan reserves: the slot's, else the file's."""
        return self.slot_size if self.slot_size is not None else self.nbytes


def buffer_name(tag: str) -> str:
    return PREFIX + cident(tag).lower().lstrip("_")
