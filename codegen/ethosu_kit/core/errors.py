"""The one error type users see.

Every failure a user can cause (bad file, bad board, does not fit, wrong ELF)
raises KitError with a one-line message that names the file, the key or region
and the number. The CLI prints it as `error: <message>` and exits non-zero, never
with a traceback.
"""

from __future__ import annotations


class KitError(Exception):
    """A user-facing failure. `hint` is the way out, printed on its own line."""

    exit_code = 2

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message


class PteError(KitError):
    """The .pte cannot be read or is not what the command needs."""


class BoardError(KitError):
    """A board file is missing, malformed or inconsistent."""


class PlanError(KitError):
    """The model cannot be placed on the board in the requested mode."""


class FitError(PlanError):
    """A region overflows. The message names the region, needed and available bytes."""

    exit_code = 3


class ElfCheckError(KitError):
    """The linked ELF violates the plan."""

    exit_code = 4


class OutputError(KitError):
    """The output folder cannot be written as asked."""
