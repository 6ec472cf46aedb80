"""Named external data (.ptd): where each placement tag's file goes, and its buffer.

A pte lowered with `VelaExternalBlockPlacements` names its Vela command streams and
weights by key; the bytes are in one .ptd per placement tag. Each .ptd becomes one plan
buffer, `ptd_<tag>` (role EXTERNAL_DATA), with the file as its contents: the NPU reads
the blocks in place, so it goes only where the NPU reaches and 16-byte aligned. Where:

- the tag's mapping (`gen --place-data TAG=REGION`), a region the NPU reaches (in
  Sram_Only the NPU reaches only on-chip SRAM);
- else the default: non-volatile memory the NPU reaches first (weights survive reset,
  as the network does), then external RAM; in Sram_Only, the on-chip SRAM.

A tag may have a fixed slot (`--ptd-slot TAG=ADDRESS:SIZE`): the buffer is then the
whole slot, at that address, so another .ptd (new weights) can be flashed there without
relinking; the image checks at start-up that the slot holds the program's keys.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from ethosu_kit.board.model import Board, MemoryRegion
from ethosu_kit.core.errors import KitError, PlanError
from ethosu_kit.core.sizes import parse_size
from ethosu_kit.npu.facts import NPU_ALIGN, VELA_REGION_WEIGHTS, MemoryMode
from ethosu_kit.plan.external_types import ExternalPtd
from ethosu_kit.plan.placer import Want
from ethosu_kit.plan.regions import NpuView, network_regions, npu_sram
from ethosu_kit.plan.types import Role
from ethosu_kit.pte.ptd import ExternalBlock, ExternalData

TAG = re.compile(r"[A-Za-z0-9_.-]{1,64}")


def parse_place(items: Sequence[str] | None, what: str = "--place-data") -> dict[str, str]:
    """`TAG=REGION` pairs (the command line's); one error line for a malformed one."""
    out: dict[str, str] = {}
    for item in items or ():
        tag, sep, region = item.partition("=")
        if not sep or not TAG.fullmatch(tag) or not region:
            raise KitError(f"{what} {item!r}: expected TAG=REGION, e.g. weight_data=QSPI")
        # a repeated tag would silently take the last region: the user meant one of them
        if tag in out:
            raise KitError(f"{what} {tag!r} given twice ({out[tag]} and {region})")
        out[tag] = region
    return out


def parse_slots(items: Sequence[str] | None) -> dict[str, tuple[int, int]]:
    """`TAG=ADDRESS:SIZE` (numbers in C notation, SIZE also `64KiB`)."""
    out: dict[str, tuple[int, int]] = {}
    for item in items or ():
        tag, sep, rest = item.partition("=")
        address, colon, size = rest.partition(":")
        try:
            if not sep or not colon or not TAG.fullmatch(tag):
                raise ValueError
            slot = (int(address, 0), parse_size(size))
        except ValueError:
            raise KitError(
                f"--ptd-slot {item!r}: expected TAG=ADDRESS:SIZE, e.g. weight_data=0x38400000:64KiB"
            ) from None
        # refused here, not as "not inside one region", which sends the user to the board
        if slot[1] <= 0:
            raise KitError(f"--ptd-slot {item!r}: the slot's SIZE must be above 0")
        if tag in out:
            raise KitError(f"--ptd-slot {tag!r} given twice: one slot per tag")
        out[tag] = slot
    return out


def _reaches(board: Board, mode: MemoryMode, view: NpuView | None) -> list[MemoryRegion]:
    """Regions the NPU reads the blocks from in `mode`, default choice first: where the
    network could go (the blocks are the network's command streams and weights, read
    over QCONFIG's and REGIONCFG_0's ports), non-volatile first."""
    if view is None:
        return network_regions(board, None)
    ports = (view.command, view.region(VELA_REGION_WEIGHTS))
    if mode == MemoryMode.SRAM_ONLY:
        return [r for r in npu_sram(board, ports[1]) if r.npu_reaches(ports[0])]
    return network_regions(board, ports)


def external_wants(
    ptds: Sequence[ExternalPtd], board: Board, mode: MemoryMode, view: NpuView | None
) -> list[Want]:
    """One want per .ptd; refuses a tag mapped where the NPU does not reach."""
    reach = _reaches(board, mode, view)
    out = []
    for p in ptds:
        if p.region is not None:
            names = [r.name for r in board.regions]
            if p.region not in names:
                raise PlanError(
                    f"{p.tag}={p.region} (--place-data or [external_data]): board "
                    f"{board.name} has no region {p.region!r}",
                    hint=f"its regions: {', '.join(names)}",
                )
            region = board.region(p.region)
            if region not in reach:
                why = (
                    "in Sram_Only the NPU reads only on-chip SRAM"
                    if mode == MemoryMode.SRAM_ONLY
                    else "the NPU does not reach it"
                    if not region.npu
                    else "nothing can store the .ptd there"
                )
                raise PlanError(
                    f"{p.tag}={p.region} (--place-data or [external_data]): the .ptd "
                    f"holds {', '.join(p.blocks)}, which the NPU reads in place, and {why}",
                    hint=f"the regions the NPU reaches here: {', '.join(r.name for r in reach)}",
                )
            candidates = [region]
        else:
            candidates = reach
        if p.slot_address is not None:
            found = board.region_at(p.slot_address, p.size)
            if found is None or found not in reach:
                raise PlanError(
                    f"--ptd-slot {p.tag}=0x{p.slot_address:08x}:{p.size}: "
                    + ("not inside one region" if found is None else
                       f"in {found.name}, which the NPU does not reach here")
                    + " of board " + board.name,
                    hint=f"the regions the NPU reaches here: {', '.join(r.name for r in reach)}",
                )  # fmt: skip
            if p.region is not None and found.name != p.region:
                raise PlanError(
                    f"--ptd-slot {p.tag} at 0x{p.slot_address:08x} is in {found.name}, "
                    f"--place-data puts it in {p.region}"
                )
            if p.slot_address % NPU_ALIGN:
                raise PlanError(
                    f"--ptd-slot {p.tag}=0x{p.slot_address:08x}: not {NPU_ALIGN}-byte aligned"
                )
            if p.size < p.nbytes:
                raise PlanError(
                    f"--ptd-slot {p.tag}: {p.size} B is less than the .ptd's {p.nbytes} B",
                    hint="give the slot the file's size and some headroom",
                )
            candidates = [found]
        where = (
            f"placed in {p.region} (--place-data or [external_data])"
            if p.region
            else "default: NV memory the NPU reaches first"
        )
        slot = (
            f"; fixed slot 0x{p.slot_address:08x}, {p.size} B ({p.size - p.nbytes} B headroom)"
            if p.slot_address is not None
            else ""
        )
        want = Want(
            name=p.buffer,
            role=Role.EXTERNAL_DATA,
            size=p.size,
            candidates=candidates,
            why=f"{p.tag}.ptd, {p.nbytes} B ({', '.join(p.blocks)} of {len(p.keys)} key(s), "
            f"read in place by the NPU; {where}){slot}",
            hint="place the .ptd elsewhere (--place-data TAG=REGION) or use a bigger board",
            npu=True,
            initialized=True,
        )
        out.append(want)
    return out


def external_ptds(
    blocks: Sequence[ExternalBlock],
    external: ExternalData,
    place: Mapping[str, str],
    slots: Mapping[str, tuple[int, int]],
) -> tuple[ExternalPtd, ...]:
    """The .ptd files the program reads (a file beside the pte that it does not read is
    left out) with where each was asked to go; a mapping for a tag no such file has is
    refused."""
    out = []
    for f in external.files:
        mine = [b for b in blocks if b.tag == f.tag]
        if not mine:
            continue
        if not TAG.fullmatch(f.tag):
            raise KitError(
                f"{f.path}: tag {f.tag!r} (the file's name) is not a plain name "
                "(letters, digits, _ . -)",
                hint="rename the .ptd: the tag names its section and buffer",
            )
        slot = slots.get(f.tag)
        out.append(
            ExternalPtd(
                tag=f.tag,
                nbytes=len(f.data),
                sha256=f.sha256,
                blocks=tuple(sorted({b.block for b in mine})),
                keys=tuple(dict.fromkeys(b.key for b in mine)),
                region=place.get(f.tag),
                slot_address=slot[0] if slot else None,
                slot_size=slot[1] if slot else None,
            )
        )
    tags = {p.tag for p in out}
    for option, table in (("--place-data", place), ("--ptd-slot", slots)):
        for tag in table:
            if tag not in tags:
                raise KitError(
                    f"{option} {tag}: no .ptd with tag '{tag}' holds data of this program "
                    f"({'tags: ' + ', '.join(sorted(tags)) if tags else 'it has no external data'})"
                )
    return tuple(out)
