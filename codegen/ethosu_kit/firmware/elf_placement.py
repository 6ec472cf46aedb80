"""check-elf's proofs for each plan buffer: in the region the plan gave it, NPU-reachable
(never a TCM), over the port its QCONFIG/REGIONCFG picks, its initial bytes in the
load region the plan named; and the region lookups every proof shares.
"""

from __future__ import annotations

from collections.abc import Callable

from ethosu_kit.board.model import MemoryRegion as Region
from ethosu_kit.board.model import RegionKind
from ethosu_kit.npu.facts import NPU_ALIGN
from ethosu_kit.plan.regions import buffer_port, port_refusal
from ethosu_kit.plan.report import npu_view
from ethosu_kit.plan.types import Buffer, MemoryPlan

TCM_KINDS = (RegionKind.ITCM, RegionKind.DTCM)


def region_at(regions: list[Region], address: int, size: int) -> Region | None:
    for r in regions:
        if r.contains(address, max(size, 1)):
            return r
    return None


def region_name_of(regions: list[Region], address: int) -> str:
    for r in regions:
        if r.base <= address < r.end:
            return r.name
    return "none"


Violate = Callable[[str, int, str, str, str], None]


def check_ports(
    plan: MemoryPlan,
    symbols: dict[str, tuple[int, int]],
    by_name: dict[str, Region],
    violate: Violate,
    ports: list[str],
) -> None:
    """Each NPU buffer in a region the port its QCONFIG/REGIONCFG value picks reaches
    (the board's registers for the plan's NPU kind and mode); each is listed in `ports`."""
    view = npu_view(plan)
    if view is None:
        return
    for b in plan.buffers:
        port = buffer_port(view, b.role) if b.npu else ""
        region = by_name.get(b.region)
        if not port or region is None or b.symbol not in symbols:
            continue
        ports.append(f"{b.name} in {region.name} ({region.port}): over {port}")
        problem = port_refusal(view, b.name, b.role, region)
        if problem:
            violate(
                b.symbol, symbols[b.symbol][0], b.region, f"{b.name}: {problem}",
                "set the region's npu_port as the SoC wires it, or the board's "
                "[npu.registers] for the mode, and regenerate",
            )  # fmt: skip


def check_buffer(
    b: Buffer,
    *,
    symbols: dict[str, tuple[int, int]],
    regions: list[Region],
    by_name: dict[str, Region],
    loads: list[tuple[int, int, int]],
    mode: str,
    violate: Violate,
) -> None:
    name, symbol, size, want = b.name, b.symbol, b.size, b.region
    if symbol not in symbols:
        violate(
            symbol, 0, want,
            f"{name}: symbol {symbol} is not in the ELF (the plan puts {size} bytes in {want})",
            "link the generated kit_buffers.c / kit_network.S into the firmware",
        )  # fmt: skip
        return
    addr, sym_size = symbols[symbol]
    if 0 < sym_size < size:
        violate(
            symbol, addr, want,
            f"{name}: {symbol} is {sym_size} bytes, the plan needs {size}",
            "regenerate the project so kit_buffers.c matches memory_plan.json",
        )  # fmt: skip
    region = region_at(regions, addr, size)
    actual = region.name if region else region_name_of(regions, addr)
    if region is None and actual == want and want in by_name:
        over = addr + size - by_name[want].end
        violate(
            symbol, addr, want,
            f"{name}: {symbol} at {addr:#010x} ({size} bytes) runs {over} bytes past "
            f"the end of {want} ({by_name[want].end:#010x})",
            "the region overflows: shrink what is in it, or use another memory mode",
        )  # fmt: skip
    elif actual != want:
        allowed = b.allowed_regions or (want,)
        violate(
            symbol, addr, want,
            f"{name}: {symbol} at {addr:#010x} ({size} bytes) is in {actual}, "
            f"the {mode} plan requires {want}"
            + (f" (allowed: {', '.join(allowed)})" if len(allowed) > 1 else ""),
            f"the linker script must place section {b.section} in {want}: "
            f"regenerate linker.ld with gen-firmware, or fix its '> {want}'",
        )  # fmt: skip
    align = max(b.align, NPU_ALIGN if b.npu else 1)
    if addr % align:
        violate(
            symbol, addr, want,
            f"{name}: {symbol} at {addr:#010x} is not {align}-byte aligned "
            f"(off by {addr % align})",
            f"align section {b.section} to {align} (ALIGN({align}) / aligned({align}))",
        )  # fmt: skip
    if b.npu and region is not None and (region.kind in TCM_KINDS or not region.npu):
        why = "a TCM the NPU cannot reach" if region.kind in TCM_KINDS else "not NPU-reachable"
        reachable = [r.name for r in regions if r.npu and r.kind not in TCM_KINDS]
        violate(
            symbol, addr, want,
            f"{name}: {symbol} at {addr:#010x} is in {region.name}, {why}; "
            "the NPU reads or writes it",
            f"place {b.section} in an NPU-reachable region ({', '.join(reachable)})",
        )  # fmt: skip
    if b.initialized and b.load_region:
        _check_load_region(b, addr, loads, by_name, violate)


def _check_load_region(
    b: Buffer,
    vaddr: int,
    loads: list[tuple[int, int, int]],
    by_name: dict[str, Region],
    violate: Violate,
) -> None:
    want = b.load_region or b.region
    for seg_vaddr, paddr, filesz in loads:
        if seg_vaddr <= vaddr < seg_vaddr + filesz:
            lma = paddr + (vaddr - seg_vaddr)
            region = by_name.get(want)
            if region is None or not region.contains(lma, 1):
                violate(
                    b.symbol, lma, want,
                    f"{b.name}: initial contents of {b.symbol} load from {lma:#010x}, "
                    f"the plan stores them in {want}",
                    f"the linker script must give {b.section} 'AT> {want}'",
                )  # fmt: skip
            return
