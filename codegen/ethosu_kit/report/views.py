"""The picture's views, each a pure function of a MemoryPicture: `svg(picture)` (the map,
one <g> per region and one <rect> per block, with data- attributes), `html(picture)` (the
self-contained page: the map inline, the tables, no request outside the page) and
`terminal(picture, console)` (rich, for an SSH session; fits 80 columns).

Each region is drawn to its own scale (a 32 KiB TCM and a 256 MiB DDR are both a full
bar): its base and end on the address axis, ticks at the quarters, and a break between
regions where the address space has a gap, labelled with the gap's size.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

import jinja2
from markupsafe import escape
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ethosu_kit.core import paths
from ethosu_kit.core.jinja import environment
from ethosu_kit.core.sizes import size_text
from ethosu_kit.core.text import add_text_row, printable
from ethosu_kit.report.picture import KIND_COLOUR, Block, Kind, MemoryPicture, RegionPicture

# SVG geometry (px)
WIDTH = 1100
BAR_X = 190
BAR_W = 760
BAR_H = 26
ROW_GAP = 6
GAP_H = 22  # the break drawn where the address space has a gap
TOP = 40
LABEL_MIN_W = 70  # a block this wide carries its name
MIN_BLOCK_W = 1.5  # a 16-byte buffer in 256 MiB still shows

TERMINAL_BAR = 56  # cells of a region's bar in the terminal view


def hexaddr(n: int) -> str:
    return f"0x{n:08x}"


def num(n: int | None) -> str:
    return "-" if n is None else f"{n:,}"


def esc(text: object) -> str:
    """Text for HTML/SVG: names and the plan's whys come from user files (escaped, and
    controls shown as '?': XML forbids most of them)."""
    return str(escape(printable(str(text))))


FILTERS = {"hex": hexaddr, "num": num, "human": size_text, "e": esc}


@functools.cache
def _env() -> jinja2.Environment:
    return environment([paths.templates_dir() / "report"], FILTERS)


@dataclass(frozen=True)
class RectView:
    block: Block
    x: float
    y: float
    w: float
    h: float


@dataclass(frozen=True)
class RegionView:
    region: RegionPicture
    y: float  # top of the region's row
    h: float
    gap_y: float | None  # where its break marker is drawn (None: no gap before it)
    rects: tuple[RectView, ...]
    ticks: tuple[tuple[float, int], ...]  # (x, address)
    bars: tuple[tuple[str, float], ...]  # (label "plan"/"ELF", y)


@dataclass(frozen=True)
class MapView:
    width: int
    height: float
    bar_x: int
    bar_w: int
    bar_h: int
    regions: tuple[RegionView, ...]
    legend: tuple[tuple[Kind, str, float, float], ...]  # kind, colour, x, y


def layout(picture: MemoryPicture) -> MapView:
    """Where everything goes on the map: the geometry only, the template draws it."""
    kinds = picture.kinds()
    # the legend under the title, eight kinds a row
    legend = tuple(
        (k, KIND_COLOUR[k], 20 + (i % 8) * 130.0, TOP - 6 + (i // 8) * 18.0)
        for i, k in enumerate(kinds)
    )
    y = TOP + 18.0 * (1 + (len(kinds) - 1) // 8 if kinds else 0) + 4
    regions = []
    with_elf = bool(picture.elf)
    for r in picture.regions:
        gap_y = None
        if r.gap_before > 0:
            gap_y = y + GAP_H / 2
            y += GAP_H
        bars = [("plan", y + 16)]
        if with_elf:
            bars.append(("ELF", y + 16 + BAR_H + 2))
        rects = []
        for label, bar_y in bars:
            blocks = r.plan_blocks if label == "plan" else r.elf_blocks
            for b in blocks:
                x = BAR_X + BAR_W * b.offset / r.size
                w = max(MIN_BLOCK_W, BAR_W * b.size / r.size)
                w = min(w, BAR_X + BAR_W - x) if x < BAR_X + BAR_W else MIN_BLOCK_W
                rects.append(RectView(b, x, bar_y, w, BAR_H))
        h = 16 + len(bars) * (BAR_H + 2) + 14
        ticks = tuple((BAR_X + BAR_W * q / 4, r.base + r.size * q // 4) for q in range(5))
        regions.append(RegionView(r, y, h, gap_y, tuple(rects), ticks, tuple(bars)))
        y += h + ROW_GAP
    return MapView(WIDTH, y + 10, BAR_X, BAR_W, BAR_H, tuple(regions), legend)


def svg(picture: MemoryPicture, *, standalone: bool = True) -> str:
    """The map as SVG: `standalone` adds the XML namespace a file of its own needs (the page
    inlines it without, so the page names no URL at all)."""
    return (
        _env()
        .get_template("map.svg.j2")
        .render(p=picture, m=layout(picture), standalone=standalone, label_min_w=LABEL_MIN_W)
    )


def render(template: str, **context: object) -> str:
    """A template of the report's (render/templates/report) with the views' filters."""
    return _env().get_template(template).render(**context)


def html(picture: MemoryPicture, sections: Sequence[str] = ()) -> str:
    """The page: everything inline (styles, the map), no script, no link, no URL.
    `sections`: HTML put after the heading (advise's table)."""
    return render(
        "page.html.j2",
        p=picture,
        map_svg=svg(picture, standalone=False),
        colours=KIND_COLOUR,
        sections=tuple(sections),
    )


def _bar(r: RegionPicture, blocks: tuple[Block, ...]) -> Text:
    """A region as TERMINAL_BAR cells, each coloured by the block over it ('·' is free)."""
    cells: list[Kind | None] = [None] * TERMINAL_BAR
    for b in blocks:
        first = b.offset * TERMINAL_BAR // r.size
        last = max(first + 1, -(-(b.offset + b.size) * TERMINAL_BAR // r.size))
        for i in range(min(first, TERMINAL_BAR - 1), min(last, TERMINAL_BAR)):
            cells[i] = b.kind
    bar = Text()
    for kind in cells:
        if kind is None:
            bar.append("·", style="dim")
        else:
            bar.append("█", style=KIND_COLOUR[kind])
    return bar


def terminal(picture: MemoryPicture, console: Console) -> None:
    """The picture for a terminal: per region its bar(s) and blocks, then the NPU's ports,
    the copies and the largest symbols. Fits 80 columns."""
    title = f"{picture.board}, {picture.mode}, {picture.accelerator}"
    console.print(_t(title, style="bold"))
    legend = Text("  ")
    for k in picture.kinds():
        legend.append("█ ", style=KIND_COLOUR[k])
        legend.append(f"{k.value}  ")
    console.print(legend)
    for r in picture.regions:
        if r.gap_before:
            console.print(_t(f"  ≈ gap {size_text(r.gap_before)}", style="dim"))
        flags = f" NPU {r.npu_port} port" if r.npu else ""
        head = _t(f"{r.name} ", style="bold")
        head.append(
            printable(f"{hexaddr(r.base)}..{hexaddr(r.end)} {size_text(r.size)} {r.kind}{flags}")
        )
        console.print(head)
        line = Text("  plan ")
        line.append_text(_bar(r, r.plan_blocks))
        line.append(f" {100 * r.plan_used // r.size:>3}%")
        console.print(line)
        if picture.elf:
            line = Text("  ELF  ")
            line.append_text(_bar(r, r.elf_blocks))
            line.append(f" {100 * (r.elf_used or 0) // r.size:>3}%")
            console.print(line)
        table = Table(box=None, show_header=False, padding=(0, 1), pad_edge=False)
        for justify in ("left", "left", "left", "right", "right"):
            table.add_column(justify=justify, overflow="ellipsis", no_wrap=True)
        for b in (*r.plan_blocks, *r.elf_blocks):
            cells = (b.name, f"{b.source.value} {b.kind.value}", hexaddr(r.base + b.offset))
            table.add_row(Text("  █", style=b.colour), *map(_t, cells), _t(num(b.size)))
        free = f"free {num(r.plan_free)} (plan)"
        if r.elf_free is not None:
            free += f", {num(r.elf_free)} (ELF)"
        add_text_row(table, "  ·", free, "", "", "")
        console.print(table)
    if picture.npu is not None:
        n = picture.npu
        table = Table(
            title=_t(f"NPU {n.accelerator}, {n.mode} (registers: {n.registers_from})"),
            title_justify="left",
        )
        for col in ("register", "value", "port", "addresses", "in"):
            table.add_column(col, overflow="fold")
        for row in n.rows:
            where = f"{row.buffer} in {row.region} ({row.region_port})" if row.buffer else "-"
            if not row.reached:
                where += ": NOT on this port"
            add_text_row(table, row.register, str(row.value), row.port, row.addresses, where)
        console.print(table)
        console.print(_t(f"NPU reaches: {', '.join(n.reachable)}"))
    for c in picture.copies:
        console.print(
            Text(
                f"copied at reset: {c.name} ({num(c.size)} B) load {hexaddr(c.load_address)} "
                f"({c.load_region}) -> run {hexaddr(c.run_address)} ({c.run_region})"
            )
        )
    if picture.elf:
        table = Table(title=_t("largest symbols per region"), title_justify="left")
        for col, justify in (("region", "left"), ("symbol", "left"), ("bytes", "right")):
            table.add_column(col, justify=justify, overflow="ellipsis", no_wrap=True)  # type: ignore[arg-type]
        for r in picture.regions:
            for s in r.symbols[:3]:
                add_text_row(table, r.name, s.name, num(s.size))
        console.print(table)
    for v in picture.violations:
        console.print(_t(f"check-elf: {v}", style="red"))
    for note in picture.notes:
        console.print(_t(f"note: {note}"))


def _t(text: str, style: str = "") -> Text:
    """Plain text for the terminal: names come from user files, so no markup and no
    control characters."""
    return Text(printable(text), style=style)
