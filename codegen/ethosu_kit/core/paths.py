"""Where the kit's firmware sources live: in the wheel (`_kit/`) or in the source tree."""

from __future__ import annotations

from functools import cache
from pathlib import Path

_PKG = Path(__file__).resolve().parents[1]  # the ethosu_kit package


@cache
def kit_root() -> Path:
    """The folder holding boards/ linker/ sdk/ drivers/ apps/ cmake/.

    A wheel carries them under ethosu_kit/_kit; a source checkout (editable install,
    or PYTHONPATH=codegen) has them two levels above this package.
    """
    bundled = _PKG / "_kit"
    if (bundled / "boards").is_dir():
        return bundled
    source = _PKG.parents[1]
    if (source / "boards").is_dir():
        return source
    raise RuntimeError(f"ethosu_kit: cannot find the kit's firmware sources near {_PKG}")


def boards_dir() -> Path:
    return kit_root() / "boards"


def linker_templates_dir() -> Path:
    return kit_root() / "linker"


def cmake_dir() -> Path:
    return kit_root() / "cmake"


def package_dir() -> Path:
    """The ethosu_kit package itself (its Python sources and templates)."""
    return _PKG


def templates_dir() -> Path:
    return _PKG / "render" / "templates"
