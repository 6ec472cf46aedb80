"""The plan's cold boot ([boot] from = "nv"): where the code runs when the board copies
it into RAM at reset ([boot] code = "copy": `copied_code`, the run region and the
non-volatile region that stores it, each with the code's reserve), and the plan's note
saying what is stored where and copied at reset (`cold_boot_note`).
"""

from __future__ import annotations

from ethosu_kit.board.model import Board, MemoryRegion
from ethosu_kit.core.errors import FitError, PlanError
from ethosu_kit.core.sizes import size_text
from ethosu_kit.plan.fill import RESERVE_ALIGN
from ethosu_kit.plan.placer import Placer
from ethosu_kit.plan.regions import code_rank, select
from ethosu_kit.plan.types import Buffer, PlanOptions, Role


def copied_code(
    placer: Placer, size: int, options: PlanOptions
) -> tuple[MemoryRegion, MemoryRegion, list[MemoryRegion]]:
    """[boot] code = "copy": the code's run region (the board's code_region, else the
    fastest executable RAM the reserve fits in) and the non-volatile region that stores
    it, each with the reserve kept free. Refused, naming the RAM and the bytes, when it
    does not fit: the board asked for the copy, so running in place instead would be
    a silent change of what it runs from."""
    board = placer.board
    assert board.boot is not None
    stores = select(board, lambda r: r.executable and r.cpu and not r.volatile, code_rank)
    load = placer.reserve(stores, "code (load image)", size)
    named = board.boot.code_region
    rams = (
        [board.region(named)] if named else select(board, lambda r: r.runs_copied_code, code_rank)
    )
    if not rams:
        raise PlanError(
            f'{board.source}: [boot] code = "copy", but board {board.name} has no '
            "volatile, writable, executable RAM to copy the code into",
            hint='declare the ITCM or executable SRAM as a [[region]], or code = "xip"',
        )
    for region in rams:
        if placer.fill.fits(region, size, RESERVE_ALIGN):
            placer.fill.put(region, "code (reserve)", size, RESERVE_ALIGN)
            return region, load, rams
    region = rams[0]
    free = placer.fill.free(region, RESERVE_ALIGN)
    whose = "--code-reserve" if options.code_reserve else f"app {options.app}"
    raise FitError(
        f'{board.source}: [boot] code = "copy": the code ({size:,} bytes kept for '
        f"{whose}) does not fit in {region.name} (0x{region.base:08x}, "
        f"{size_text(region.size)}, {free:,} bytes free)",
        hint=f"name a larger RAM as [boot] code_region, pass gen --code-reserve SIZE if the "
        f'code is smaller (the link checks the real size), or code = "xip" (run in '
        f"place from {load.name})",
        region=region.name,
        needed=size,
        available=free,
    )


def cold_boot_note(
    board: Board,
    code: MemoryRegion,
    data: MemoryRegion,
    buffers: list[Buffer],
    *,
    code_load: MemoryRegion | None = None,
    code_size: int = 0,
) -> str:
    """What a cold boot ([boot] from = "nv") stores where and copies at reset: code runs in
    place or ([boot] code = "copy") is copied into RAM, .data and buffers stored in one
    region and run from another are copied by the start-up. A buffer with contents in a
    RAM the board marks loadable is named: nothing fills it at power-up, and check-elf
    refuses the image."""
    store = code_load or code
    if code_load is not None:
        parts = [
            f'code copied ([boot] code = "copy"): .text, .rodata, .ARM.exidx and '
            f".init_array stored in {code_load.name}, copied to {code.name} at reset and "
            f"run there ({code_size:,} B kept for them in each, the app's estimate; the "
            f"linker sizes them, check-elf prints the bytes copied); the vectors, the reset "
            f"code (.text.boot) and the copy tables stay in {code_load.name}"
        ]
    else:
        parts = [f"code runs in place from {code.name}"]
    if code.volatile and code_load is None:
        parts = [f"code in {code.name}, RAM that nothing fills at power-up (check-elf refuses)"]
    parts.append(f".data's initial values stored in {store.name}, copied to {data.name} at reset")
    copied = [
        b
        for b in buffers
        if b.initialized and b.load_region and b.role not in (Role.CODE, Role.DATA)
    ]
    parts += [f"{b.name} stored in {b.load_region}, copied to {b.region} at reset" for b in copied]
    in_ram = [
        b
        for b in buffers
        if b.initialized
        and not b.load_region
        and b.role not in (Role.CODE, Role.DATA)  # said above
        and board.region(b.region).volatile
    ]
    parts += [
        f"{b.name} in {b.region}, RAM that nothing fills at power-up (the board marks it "
        "loadable; check-elf refuses)"
        for b in in_ram
        if b.role not in (Role.CODE, Role.DATA)
    ]
    return 'cold boot ([boot] from = "nv"): ' + "; ".join(parts)
