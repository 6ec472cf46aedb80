"""The readers of board.toml's memory map: [[region]], [boot] and [external_data].

Each reads its table's keys through the schema (reader.Table.value) and adds the rules
the schema cannot say: regions that overlap or share a name, a vector table outside
loadable, executable memory (or in volatile memory on a cold boot), a code RAM that
cannot run copied code, a placement tag naming no region. [boot] and [external_data]
are read against the regions (the loader reads [[region]] first); the other tables'
readers are tables.py's.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

from ethosu_kit.board.checks import ADDRESS_LIMIT, IDENT_RE
from ethosu_kit.board.model import (
    REGION_ATTRS,
    Boot,
    BootCode,
    BootFrom,
    Cpu,
    MemoryRegion,
    NpuPort,
    RegionKind,
    default_npu_port,
    implied_attrs,
)
from ethosu_kit.board.reader import Table
from ethosu_kit.core.errors import BoardError


def boot_from(t: Table | None) -> BootFrom:
    """[boot] from (the regions' implied `loadable` depends on it); LOADER without [boot]."""
    return BootFrom.LOADER if t is None else BootFrom(t.value("from"))


def external_data_table(t: Table, regions: tuple[MemoryRegion, ...]) -> dict[str, str]:
    """[external_data]: TAG = "REGION", where gen places each .ptd by default
    (plan.external checks the NPU reaches it for the mode)."""
    names = [r.name for r in regions]
    for tag, region in t.data.items():
        if not re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", tag):
            raise t.fail(tag, f"{tag!r} is not a placement tag (letters, digits, _ . -)")
        if region not in names:
            raise t.fail(tag, f"{region!r} is not a region of this board ({', '.join(names)})")
    return dict(t.data)


def boot_table(t: Table, regions: tuple[MemoryRegion, ...], cpu: Cpu) -> Boot:
    t.only_schema()
    image_from = boot_from(t)
    name = t.value("vector_region")
    address = t.value("vector_address")
    if name is None and address is None:
        raise t.fail(None, "give vector_region or vector_address (where the core boots)")
    region = None
    if name is not None:
        region = next((r for r in regions if r.name == name), None)
        if region is None:
            known = ", ".join(r.name for r in regions)
            raise t.fail("vector_region", f"no region named {name!r} (regions: {known})")
        address = region.base if address is None else address
    assert address is not None
    key = "vector_address" if "vector_address" in t.data else "vector_region"
    size = cpu.vector_table_bytes
    holder = next((r for r in regions if r.contains(address, size)), None)
    if holder is None or (region is not None and holder is not region):
        where = f"region {region.name!r}" if region else "any region"
        raise t.fail(key, f"0x{address:08x} + {size} bytes of vectors is not inside {where}")
    # A cold-boot board's RAMs are not loadable by default, so a volatile vector region
    # on one is first of all the wrong memory: say that, not only "not loadable".
    if image_from == BootFrom.NV and holder.volatile:
        nv = ", ".join(r.name for r in regions if not r.volatile and r.executable) or "none"
        raise t.fail(
            key,
            f'from = "nv": the core boots from region {holder.name!r} at 0x{address:08x}, '
            f"which is volatile (its vectors are gone at power-up); non-volatile, "
            f'executable regions: {nv} (or from = "loader" if a debugger loads the image)',
            "boot from the on-chip flash/MRAM; a part whose boot ROM copies the image from "
            'external flash into this RAM boots as from = "loader" with loadable = true on '
            "the RAMs the ROM fills (docs/boards.md, Boot)",
        )
    if not (holder.loadable and holder.executable):
        missing = " and ".join(
            f"{flag} = true"
            for flag, ok in (("loadable", holder.loadable), ("executable", holder.executable))
            if not ok
        )
        raise t.fail(
            key,
            f"region {holder.name!r} at 0x{address:08x} must be loadable and executable",
            f"if something fills {holder.name!r} before the core starts (a flasher, a boot "
            f"ROM, a debugger) and the core runs code there, write {missing} on its "
            "[[region]]; else boot from the region the core's reset vector is in",
        )
    if address % cpu.vector_table_align:
        raise t.fail(
            key,
            f"0x{address:08x} is not {cpu.vector_table_align}-byte aligned, as VTOR needs for "
            f"{16 + cpu.irqs} vectors",
        )
    code, code_region = _boot_code(t, regions, image_from)
    return Boot(holder.name, address, image_from, code, code_region)


def _boot_code(
    t: Table, regions: tuple[MemoryRegion, ...], image_from: BootFrom
) -> tuple[BootCode, str | None]:
    """[boot] code and code_region: where a cold-boot image's code runs. The RAM named must
    be one the start-up can copy code into and the core execute from; which RAM when none
    is named, and whether the code fits, are the plan's (plan.planner)."""
    code = BootCode(t.value("code"))
    name = t.value("code_region", None)  # None: the plan picks the RAM
    if code == BootCode.XIP:
        if name is not None:
            raise t.fail("code_region", 'only with code = "copy" (the RAM the code is copied to)')
        return code, None
    if image_from != BootFrom.NV:
        raise t.fail(
            "code",
            '"copy" is for a cold boot (from = "nv"): with from = "loader" the loader '
            "puts the code where it runs (place it with the board's regions)",
        )
    if name is None:
        return code, None
    region = next((r for r in regions if r.name == name), None)
    ok = [r.name for r in regions if r.runs_copied_code]
    if region is None or not region.runs_copied_code:
        what = "no region named" if region is None else "region"
        why = (
            ""
            if region is None
            else " is not volatile, writable and executable RAM the CPU reaches"
        )
        raise t.fail(
            "code_region",
            f'{what} {name!r}{why}: code = "copy" runs the code from such RAM '
            f"({', '.join(ok) or 'the board has none'})",
        )
    return code, region.name


def _npu_port(t: Table, kind: RegionKind, npu: bool) -> tuple[bool, NpuPort]:
    """The region's `npu` and `npu_port`, each implied by the other when only one is
    written: `npu_port = "ext"` alone means the NPU reaches it; `npu = false` alone, port
    "none"; neither: the kind's."""
    if "npu_port" not in t.data:
        return npu, default_npu_port(kind, npu)
    port = NpuPort(t.value("npu_port", default_npu_port(kind, npu).value))
    if "npu" not in t.data:
        return port != NpuPort.NONE, port
    if npu != (port != NpuPort.NONE):
        raise t.fail(
            "npu_port",
            f'"{port}" contradicts npu = {str(npu).lower()}: a region the NPU reaches has '
            'the port that reaches it ("sram", "ext" or "both"), one it does not has "none"',
        )
    return npu, port


def regions_table(raw: Any, file: str, cold_boot: bool = False) -> tuple[MemoryRegion, ...]:
    top = Table({"region": raw}, "", file)
    if raw is None:
        raise top.fail("region", "missing: a board needs at least one [[region]]")
    if not isinstance(raw, list) or not raw or not all(isinstance(r, dict) for r in raw):
        raise top.fail("region", "must be an array of tables ([[region]] blocks), at least one")
    regions: list[MemoryRegion] = []
    for i, data in enumerate(raw):
        label = f"region[{i}]" + (f" {data['name']!r}" if isinstance(data.get("name"), str) else "")
        t = Table(data, label, file, "region")
        t.only_schema()
        name = t.value("name")
        if not IDENT_RE.fullmatch(name):
            raise t.fail("name", f"{name!r} is not a C identifier (linker scripts use it)")
        kind = RegionKind(t.value("kind"))
        base = t.value("base")
        size = t.value("size")
        if base + size > ADDRESS_LIMIT:
            raise t.fail("size", f"0x{base:08x} + 0x{size:x} runs past the 4 GiB address space")
        written = t.bool_("volatile") if "volatile" in t.data else None
        implied = implied_attrs(kind, cold_boot, written)
        attrs = {attr: t.value(attr, getattr(implied, attr)) for attr in REGION_ATTRS}
        attrs["npu"], port = _npu_port(t, kind, attrs["npu"])
        if attrs["npu"] and kind in (RegionKind.ITCM, RegionKind.DTCM):
            raise t.fail("npu", "the NPU cannot reach the TCMs: set npu = false")
        regions.append(
            MemoryRegion(
                name=name,
                kind=kind,
                base=base,
                size=size,
                description=t.value("description"),
                npu_port=port,
                **attrs,
            )
        )
    seen: dict[str, int] = {}
    for i, r in enumerate(regions):
        if r.name in seen:
            raise BoardError(
                f"{file}: region[{i}].name: region {r.name!r} is declared twice "
                f"(also region[{seen[r.name]}])"
            )
        seen[r.name] = i
    ordered = sorted(regions, key=lambda r: r.base)
    for a, b in itertools.pairwise(ordered):
        if b.base < a.end:
            i = regions.index(b)
            raise BoardError(
                f"{file}: region[{i}] {b.name!r}: 0x{b.base:08x}..0x{b.end:08x} overlaps "
                f"region {a.name!r} 0x{a.base:08x}..0x{a.end:08x}"
            )
    return tuple(regions)
