"""What grew between two pictures (`report --diff old.elf new.elf`) and whether a picture
keeps a budget (`report --budget FILE`): the CI gates, with the NPU buffers named.

The budget file (TOML, or JSON of the same shape) limits the bytes used per region:

    [regions]
    SRAM = "1 MiB"     # a size string (parse_size) or a number of bytes
    DTCM = 65536

"Used" is the linked image's (check-elf's) when the picture has an ELF, else the plan's
(plan.fill's accounting, as memory_report.txt shows).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path
from typing import Any

from ethosu_kit.core.errors import KitError
from ethosu_kit.core.files import MAX_PLAN, parse_json, parse_toml, read_text
from ethosu_kit.core.sizes import parse_size
from ethosu_kit.report.picture import MemoryPicture, RegionPicture

BUDGET_HINT = 'a budget is [regions] with REGION = bytes or "64 KiB" (docs/report.md)'
MAX_BUDGET = replace(MAX_PLAN, what="a budget file")


class What(StrEnum):
    REGION = "region"
    BUFFER = "buffer"  # a plan buffer, reserve or load image
    SECTION = "section"  # an ELF section


@dataclass(frozen=True)
class Change:
    what: What
    name: str
    region: str  # where it is in the new picture (the old one's when it went away)
    old: int | None  # None: not there before
    new: int | None  # None: gone

    @property
    def delta(self) -> int:
        return (self.new or 0) - (self.old or 0)


def used(region: RegionPicture) -> int:
    """The ELF's used bytes when there is an ELF, else the plan's."""
    return region.elf_used if region.elf_used is not None else region.plan_used


def _sizes(picture: MemoryPicture, what: What) -> dict[str, tuple[str, int]]:
    out: dict[str, tuple[str, int]] = {}
    for r in picture.regions:
        blocks = r.elf_blocks if what == What.SECTION else r.plan_blocks
        for b in blocks:
            out[b.name] = (r.name, b.size)
    return out


def diff(old: MemoryPicture, new: MemoryPicture) -> tuple[Change, ...]:
    """Every region, plan buffer and ELF section whose size changed, regions first."""
    changes: list[Change] = []
    old_regions = {r.name: r for r in old.regions}
    for r in new.regions:
        before = old_regions.get(r.name)
        was = used(before) if before else None
        if was != used(r):
            changes.append(Change(What.REGION, r.name, r.name, was, used(r)))
    for what in (What.BUFFER, What.SECTION):
        a, b = _sizes(old, what), _sizes(new, what)
        for name in sorted(set(a) | set(b), key=lambda n: (b.get(n) or a[n])[0] + "/" + n):
            was_at, now_at = a.get(name), b.get(name)
            if was_at == now_at:
                continue
            if was_at and now_at and was_at[1] == now_at[1]:
                continue  # moved to another region, same size: the region rows show it
            region = (now_at or was_at or ("", 0))[0]
            changes.append(
                Change(
                    what, name, region, was_at[1] if was_at else None, now_at[1] if now_at else None
                )
            )
    return tuple(changes)


def change_text(c: Change) -> str:
    sign = "+" if c.delta > 0 else ""
    old = "-" if c.old is None else f"{c.old:,}"
    new = "-" if c.new is None else f"{c.new:,}"
    where = "" if c.what == What.REGION else f" in {c.region}"
    return f"{c.what.value} {c.name}{where}: {old} -> {new} B ({sign}{c.delta:,} B)"


@dataclass(frozen=True)
class Budget:
    regions: dict[str, int]  # region -> the most bytes it may use


def load_budget(path: Path) -> Budget:
    """A budget file (TOML or JSON, by content); one error line naming the file and key."""
    text = read_text(path, MAX_BUDGET)
    data: Any
    try:
        data = parse_json(text) if text.lstrip().startswith("{") else parse_toml(text)
    except ValueError as exc:  # JsonProblem, TomlProblem: syntax, nesting, digits
        raise KitError(f"{path}: {exc}", hint=BUDGET_HINT) from None
    regions = data.get("regions") if isinstance(data, dict) else None
    if not isinstance(regions, dict) or not regions:
        raise KitError(f"{path}: no [regions] table of limits", hint=BUDGET_HINT)
    limits = {}
    for name, value in regions.items():
        try:
            if isinstance(value, bool):
                raise ValueError(value)
            limit = value if isinstance(value, int) else parse_size(str(value))
            if limit < 0:
                raise ValueError(value)
        except ValueError:
            raise KitError(
                f"{path}: regions.{name}: {value!r} is not a size in bytes", hint=BUDGET_HINT
            ) from None
        limits[str(name)] = limit
    return Budget(limits)


def broken(picture: MemoryPicture, budget: Budget, source: str) -> list[str]:
    """One line per region over its limit; a KitError for a region the board lacks."""
    names = {r.name: r for r in picture.regions}
    lines = []
    for name, limit in budget.regions.items():
        r = names.get(name)
        if r is None:
            raise KitError(
                f"{source}: regions.{name}: no region {name} on {picture.board} "
                f"(it has {', '.join(names)})",
                hint=BUDGET_HINT,
            )
        if used(r) > limit:
            lines.append(
                f"region {name} uses {used(r):,} B, over its budget of {limit:,} B "
                f"by {used(r) - limit:,} B"
            )
    return lines


def encode_change(c: Change) -> dict[str, Any]:
    """A change for `--diff --json`."""
    return {"what": c.what.value, "name": c.name, "region": c.region, "old": c.old,
            "new": c.new, "delta": c.delta}  # fmt: skip
