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
    """A region overflows. The message names the region, needed and available bytes;
    the planner also gives them as fields (`ethosu-kit advise` tabulates them)."""

    exit_code = 3

    def __init__(
        self,
        message: str,
        hint: str | None = None,
        *,
        region: str = "",
        needed: int = 0,
        available: int = 0,
    ) -> None:
        super().__init__(message, hint)
        self.region = region
        self.needed = needed
        self.available = available

    @property
    def short(self) -> int:
        """Bytes the region lacks (0 when the raiser gave no figures)."""
        return max(0, self.needed - self.available)


class ElfCheckError(KitError):
    """The linked ELF violates the plan."""

    exit_code = 4


class OutputError(KitError):
    """The output folder cannot be written as asked."""
