"""The render stage's Jinja environment: our templates and the kit's linker templates,
with the filters they print values through (hex, sizes, C and CMake escapes).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

import jinja2

from ethosu_kit.core import jinja, paths
from ethosu_kit.core.text import c_string, cident, cmake_string, comment_safe


def hex_text(value: int, width: int = 8) -> str:
    return f"0x{value:0{width}X}"


def kib(value: int) -> str:
    """Human size: exact KiB/MiB when it divides, else bytes."""
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if value >= scale and value % scale == 0:
            return f"{value // scale} {unit}"
    if value >= 1 << 10:
        return f"{value / 1024:.1f} KiB"
    return f"{value} B"


def cmake_path(text: str) -> str:
    """A path inside a CMake quoted argument (the quotes are the template's)."""
    return cmake_string(text)[1:-1]


FILTERS: dict[str, Callable[..., str]] = {
    "hex": hex_text,
    "kib": kib,
    "cident": cident,
    "c_string": c_string,
    "cmake_string": cmake_string,
    "cmake_path": cmake_path,
    "comment": comment_safe,
}


@cache
def _environment(template_dir: str, linker_dir: str) -> jinja2.Environment:
    return jinja.environment([template_dir, linker_dir], FILTERS)


def environment() -> jinja2.Environment:
    """Ours first, then the linker templates (cached per pair of folders)."""
    return _environment(str(paths.templates_dir()), str(paths.linker_templates_dir()))
