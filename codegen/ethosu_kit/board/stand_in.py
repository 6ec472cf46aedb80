"""[qemu.layout]: the board's memory map laid onto a QEMU stand-in machine.

A board QEMU has no model of runs on a stand-in machine (`[qemu] stand_in`); where the
stand-in has a region elsewhere or smaller, `[qemu.layout]` says so. `gen
--qemu-stand-in` plans and links with the overlay applied (`lay_onto_stand_in`, on the
file's data before it is parsed as usual); `ethosu-kit run` checks an image against it.
"""

from __future__ import annotations

import copy
from typing import Any

from ethosu_kit.board.model import MemoryRegion, QemuLayout, RegionPlace
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


def lay_onto_stand_in(data: dict[str, Any], source: str) -> dict[str, Any]:
    """The board's data with [qemu.layout] applied: its regions where the stand-in machine
    has them and its boot region there (a copy; the data is then parsed as usual)."""
    layout = data.get("qemu", {}).get("layout") if isinstance(data.get("qemu"), dict) else None
    if not isinstance(layout, dict):
        raise BoardError(
            f"{source}: no [qemu.layout], so there is no stand-in layout of this board",
            hint="a board QEMU runs as it is needs no --qemu-stand-in",
        )
    out = copy.deepcopy(data)
    moved = layout.get("region", {})
    for entry in out.get("region", []) if isinstance(out.get("region"), list) else []:
        if isinstance(entry, dict) and isinstance(moved, dict) and entry.get("name") in moved:
            place = moved[entry["name"]]
            if isinstance(place, dict):
                entry.update({k: v for k, v in place.items() if k in ("base", "size")})
    if "vector_region" in layout:
        out["boot"] = {"vector_region": layout["vector_region"]}
    return out
