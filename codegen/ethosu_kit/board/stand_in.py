"""[qemu.layout]: the board's memory map laid onto a QEMU stand-in machine.

A board QEMU has no model of runs on a stand-in machine (`[qemu] stand_in`); where the
stand-in has a region elsewhere or smaller, `[qemu.layout]` says so. `gen
--qemu-stand-in` plans and links with the overlay applied (`lay_onto_stand_in`: the
parsed, checked `QemuLayout` written over the file's data, which is then parsed again as
usual); `ethosu-kit run` checks an image against it.
"""

from __future__ import annotations

import copy
from typing import Any

from ethosu_kit.board.model import Board, MemoryRegion, QemuLayout, RegionPlace
from ethosu_kit.board.reader import Table
from ethosu_kit.core.errors import BoardError


def qemu_layout_table(t: Table, regions: tuple[MemoryRegion, ...]) -> QemuLayout:
    """[qemu.layout]: vector_region, and [qemu.layout.region.<NAME>] base/size per region
    the stand-in machine has elsewhere (or smaller)."""
    t.only_schema()
    names = {r.name for r in regions}
    vector_region = t.value("vector_region")
    if vector_region is not None and vector_region not in names:
        raise t.fail("vector_region", f"no region named {vector_region!r}")
    places = []
    moved = t.table("region", required=False)
    for name in moved.data:
        if name not in names:
            raise moved.fail(
                name, f"no region named {name!r} (regions: {', '.join(sorted(names))})"
            )
        place = moved.table(name, schema_table="qemu.layout.region.<NAME>")
        place.only_schema()
        places.append(RegionPlace(name=name, base=place.value("base"), size=place.value("size")))
    return QemuLayout(regions=tuple(places), vector_region=vector_region)


def lay_onto_stand_in(data: dict[str, Any], board: Board) -> dict[str, Any]:
    """`board`'s data (`data`, which it was parsed from) with its [qemu.layout] applied:
    its regions where the stand-in machine has them and its boot region there (a copy;
    the data is then parsed as usual)."""
    layout = board.qemu.layout if board.qemu is not None else None
    if layout is None:
        raise BoardError(
            f"{board.source}: no [qemu.layout], so there is no stand-in layout of this board",
            hint="a board QEMU runs as it is needs no --qemu-stand-in",
        )
    out = copy.deepcopy(data)
    places = {p.name: p for p in layout.regions}
    for entry in out.get("region", []):  # parsed: a list of tables, each with its name
        place = places.get(entry["name"])
        if place is not None:
            entry.update(base=place.base, size=place.size)
    if layout.vector_region is not None:
        out["boot"] = {"vector_region": layout.vector_region}
    return out
