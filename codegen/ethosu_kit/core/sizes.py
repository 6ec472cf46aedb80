"""Sizes: reading size strings, printing sizes, aligning up. One place for each, so a
board file, the command line and every report agree.
"""

from __future__ import annotations

import re

_UNITS = {"": 1, "B": 1, "KIB": 1 << 10, "K": 1 << 10, "KB": 1 << 10, "MIB": 1 << 20,
          "M": 1 << 20, "MB": 1 << 20, "GIB": 1 << 30, "G": 1 << 30, "GB": 1 << 30}  # fmt: skip


# digit runs bounded (a 5,000-digit number is no size, and int() refuses it with an
# internal ValueError of its own); whole string: "512\n" is read, "512\nx" is not
_SIZE_RE = re.compile(r"\s*(0x[0-9a-f_]{1,40}|[0-9_]{1,40})\s*([a-z]{0,3})\s*", re.IGNORECASE)


def parse_size(text: str) -> int:
    """`393216`, `0x60000`, `512_000`, `384KiB`, `384 K`, `2 MiB`, `1 GiB` -> bytes.

    The one reader of size strings, so a board file and the command line agree.
    """
    m = _SIZE_RE.fullmatch(text) if len(text) <= 100 else None
    unit = m.group(2).upper() if m else ""
    if not m or unit not in _UNITS:
        raise ValueError(f"cannot read {text!r} as a size")
    return int(m.group(1).replace("_", ""), 0) * _UNITS[unit]


def size_text(n: int) -> str:
    """512 KiB, 2 MiB, 1000 B: exact for whole units, else two decimals."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            value = n / (1 << shift)
            return f"{value:.0f} {unit}" if value == int(value) else f"{value:.2f} {unit}"
    return f"{n} B"


def align_up(n: int, align: int) -> int:
    """`n` rounded up to a multiple of `align` (> 0)."""
    return -(-n // align) * align
