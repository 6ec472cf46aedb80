"""advise's views, pure functions of an `Advice`: the terminal table (rich), the HTML
section (the report's templates and filters: `_advice.html.j2`), and the page: the
recommended candidate's memory picture with the section on top, or the section alone
when nothing fits. Speeds are labelled as Vela's estimate everywhere.
"""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ethosu_kit.core.sizes import size_text
from ethosu_kit.core.text import add_text_row, printable
from ethosu_kit.pte.vela_compile import VELA_MEMORIES, VelaEstimate
from ethosu_kit.report import picture, views
from ethosu_kit.report.advise import ESTIMATE_LABEL, Advice

MEMORY_NAMES = dict(
    zip(VELA_MEMORIES, ("SRAM", "DRAM", "on-chip flash", "off-chip flash"), strict=True)
)


def memories(e: VelaEstimate) -> str:
    """The memories Vela's estimate uses: bytes moved per inference / cycles on them."""
    parts = [
        f"{MEMORY_NAMES[m]} {size_text(e.bytes_total.get(m, 0))} / "
        f"{e.cycles_access.get(m, 0):,} cyc"
        for m in VELA_MEMORIES
        if e.bytes_total.get(m, 0) or e.cycles_access.get(m, 0)
    ]
    return "; ".join(parts) or "-"


def picked(advice: Advice) -> frozenset[int]:
    return frozenset(p.index for p in advice.picks if p.index >= 0)


def section(advice: Advice) -> str:
    """The advice as an HTML section (for the report page or a page of its own)."""
    return views.render(
        "_advice.html.j2",
        a=advice,
        picked=picked(advice),
        pick_cells=frozenset((p.index, p.board) for p in advice.picks if p.index >= 0),
        memories=memories,
    )


def page(advice: Advice) -> str:
    """The page: the first recommended candidate's memory picture with the advice on top;
    the advice alone when no candidate fits (no plan to picture)."""
    for p in advice.picks:
        if p.index >= 0:
            fit = advice.outcomes[p.index].fits[advice.boards.index(p.board)]
            if fit.plan is not None:
                return views.html(picture.build_picture(fit.plan), sections=(section(advice),))
    return views.render("advice.html.j2", a=advice, section=section(advice))


def _t(text: str, style: str = "") -> Text:
    return Text(printable(text), style=style)


def terminal(advice: Advice, console: Console) -> None:
    """One table: per candidate its fit on each board and Vela's estimate; then the pick
    per board with the compile spec that lowers it."""
    table = Table(
        title=_t(f"advise: {advice.model} (speeds: {ESTIMATE_LABEL})"),
        title_justify="left",
        show_lines=True,
    )
    table.add_column("candidate", overflow="fold")
    for b in advice.boards:
        table.add_column(b, overflow="fold")
    table.add_column("cycles, time", justify="right", overflow="fold")
    table.add_column("per memory: bytes / cycles", overflow="fold")
    chosen = picked(advice)
    for i, o in enumerate(advice.outcomes):
        name = o.candidate + (" *" if i in chosen else "")
        if o.error:
            add_text_row(table, name, *([o.error] + [""] * len(advice.boards)), "")
            continue
        assert o.estimate is not None
        speed = f"{o.estimate.cycles_total:,} cyc, {o.estimate.inference_time * 1e6:,.1f} us"
        add_text_row(table, name, *(f.text for f in o.fits), speed, memories(o.estimate))
    console.print(table)
    console.print(_t(f"* recommended; cycles, time and bytes are {ESTIMATE_LABEL}"))
    for p in advice.picks:
        if p.candidate:
            console.print(_t(f"{p.board}: {p.candidate}, {p.why}", style="bold"))
            console.print(_t(f"  lower with: {p.compile_spec}"))
            if p.lower_command:
                console.print(_t(f"  or: {p.lower_command}"))
        else:
            console.print(_t(f"{p.board}: {p.why}", style="bold red"))
    for n in advice.notes:
        console.print(_t(f"note: {n}"))
