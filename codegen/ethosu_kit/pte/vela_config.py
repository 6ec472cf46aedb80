"""The Vela configuration a .pte was compiled with, as far as the kit needs it: the
installed Vela's `Arm/vela.ini` (found without importing Vela) and the fast-scratch
(region 2) size a memory mode bounds.

The planner sizes the fast scratch with it, and the virtual NPU gives region 2 the same
size off-board, so both follow one rule. The only I/O is reading vela.ini (cached).
"""

from __future__ import annotations

import configparser
import importlib.util
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from ethosu_kit.pte.model import ModelInfo

KIB = 1024


_SIZE_SUFFIX = re.compile(r"_(\d+)(KB|MB)\Z", re.IGNORECASE)


@cache
def vela_ini_path() -> Path | None:
    """The installed ethos-u-vela's Arm/vela.ini, found without importing Vela."""
    try:
        spec = importlib.util.find_spec("ethosu")
    except (ImportError, ValueError):
        return None
    for folder in (spec.submodule_search_locations or []) if spec else []:
        path = Path(folder) / "config_files" / "Arm" / "vela.ini"
        if path.is_file():
            return path
    return None


@cache
def vela_arena_cache_size(memory_mode_name: str) -> int | None:
    """`arena_cache_size` of [Memory_Mode.<name>] in the installed vela.ini (inherit followed)."""
    path = vela_ini_path()
    if path is None:
        return None
    ini = configparser.ConfigParser()
    try:
        ini.read(path, encoding="utf-8")
    except (OSError, configparser.Error):
        return None
    section = f"Memory_Mode.{memory_mode_name}"
    seen: set[str] = set()
    while section in ini and section not in seen:
        seen.add(section)
        if "arena_cache_size" in ini[section]:
            return int(ini[section]["arena_cache_size"], 0)
        section = ini[section].get("inherit", "")
    return None


@dataclass(frozen=True)
class FastScratchSize:
    size: int | None  # None: Vela set no bound; the plan gives the free NPU SRAM
    why: str


def fast_scratch_size(model: ModelInfo, given: int | None = None) -> FastScratchSize:
    """Where the fast-scratch size comes from, in order of authority: `given` (the
    user's --fast-scratch), the compile flags, Vela's vela.ini, the mode's name."""
    spec = model.compile_spec
    if given is not None:
        return FastScratchSize(given, f"--fast-scratch {given}")
    if spec is None:
        return FastScratchSize(0, "no Ethos-U delegate")
    if spec.arena_cache_size is not None:
        return FastScratchSize(
            spec.arena_cache_size, f"Vela flag --arena-cache-size={spec.arena_cache_size}"
        )
    name = spec.memory_mode_name
    if spec.config_ini.endswith("Arm/vela.ini"):
        size = vela_arena_cache_size(name)
        if size is not None:
            return FastScratchSize(
                size, f"arena_cache_size={size} of [Memory_Mode.{name}] in Vela's Arm/vela.ini"
            )
    m = _SIZE_SUFFIX.search(name)
    if m:
        size = int(m.group(1)) * (KIB if m.group(2).upper() == "KB" else KIB * KIB)
        return FastScratchSize(size, f"the memory mode name {name} ({m.group(1)} {m.group(2)})")
    return FastScratchSize(
        None,
        f"{name} sets no arena_cache_size (Vela's default is the whole address range), "
        "so the fast scratch takes the NPU SRAM left",
    )
