"""Memory reports of a plan: every region, its base and size, what is in it, what is free.

`report_text(plan)` is for people (memory_report.txt, the gen command's summary);
`report_json(plan)` for tools (memory_report.json). Both are pure. Code and data are
sized by the linker, so they show as 0 bytes here; `ethosu-kit check-elf` reports
the linked sizes. "used" and "free" are the planner's own accounting
(plan.fill.region_fill): buffers, the code/data reserves and load-image copies, so the
free space shown is what a bigger buffer could still take.
"""

from __future__ import annotations

import io
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ethosu_kit.core.sizes import size_text
from ethosu_kit.plan.fill import region_fill
from ethosu_kit.plan.regions import NpuView, buffer_port
from ethosu_kit.plan.types import Buffer, MemoryPlan, Role

REPORT_FORMAT_VERSION = 1


def npu_view(plan: MemoryPlan) -> NpuView | None:
    """The ports the plan's NPU buffers are read over (None: a CPU-only program)."""
    accel = plan.accelerator
    return None if accel is None else NpuView.of(plan.board, accel.kind, plan.mode)


def _buffer_port(view: NpuView | None, b: Buffer) -> str:
    return buffer_port(view, b.role) if view is not None and b.npu else ""


def report_json(plan: MemoryPlan) -> dict[str, Any]:
    """Every region: base, size, used, free bytes, the NPU port that reaches it, and its
    buffers (offset-free, by order), each NPU one with the port it is read over."""
    view = npu_view(plan)
    regions = []
    for use in region_fill(plan):
        r = use.region
        buffers = [plan.buffer(name) for name in use.buffers]
        regions.append(
            {
                "name": r.name,
                "kind": r.kind.value,
                "base": r.base,
                "size": r.size,
                "used": use.used,
                "free": use.free,
                "on_chip": r.on_chip,
                "npu": r.npu,
                "npu_port": r.port.value,
                "buffers": [
                    {
                        "name": b.name,
                        "role": b.role.value,
                        "symbol": b.symbol,
                        "section": b.section,
                        "size": b.size,
                        "align": b.align,
                        "npu": b.npu,
                        "npu_port": _buffer_port(view, b) or None,
                        "linker_sized": b.role in (Role.CODE, Role.DATA),
                        "load_region": b.load_region,
                        "why": b.why,
                    }
                    for b in buffers
                ],
            }
        )
    ram = sum(
        b.size
        for b in plan.buffers
        if plan.board.region(b.region).volatile and b.role not in (Role.CODE, Role.DATA)
    )
    return {
        "format": REPORT_FORMAT_VERSION,
        "board": plan.board.name,
        "mode": plan.mode.value,
        "accelerator": plan.accelerator_name,
        "model": {"path": plan.model_path, "sha256": plan.model_sha256},
        "ram_planned": ram,
        "regions": regions,
        "notes": list(plan.notes),
        **({"programs": programs_json(plan)} if plan.multi else {}),
    }


def programs_json(plan: MemoryPlan) -> dict[str, Any]:
    """Who shares what in an image of several programs: each buffer's owners and what
    each needs of it, each program's need alone, the shared total and the bytes saved."""
    alone = {p.name: plan.alone_bytes(p.name) for p in plan.programs}
    return {
        "buffers": [
            {
                "name": s.buffer,
                "size": plan.buffer(s.buffer).size,
                "shared": s.shared,
                "owners": {o.program: o.need for o in s.owners},
            }
            for s in plan.sharing
        ],
        "each_program_alone": alone,
        "sum_alone": sum(alone.values()),
        "shared_total": plan.shared_total,
        "saved": sum(alone.values()) - plan.shared_total,
        "ram_sum_alone": sum(plan.alone_bytes(n, ram=True) for n in alone),
        "ram_shared_total": plan.shared_bytes(ram=True),
    }


def programs_text(plan: MemoryPlan) -> str:
    """The who-shares-what table of an image of several programs (empty for one)."""
    if not plan.multi:
        return ""
    table = Table(
        title="programs: who shares what (bytes; a shared buffer is the largest need)",
        title_justify="left",
    )
    names = [p.name for p in plan.programs]
    table.add_column("buffer")
    table.add_column("size", justify="right")
    for name in names:
        table.add_column(name, justify="right")
    for s in plan.sharing:
        needs = {o.program: o.need for o in s.owners}
        table.add_row(
            s.buffer + (" (shared)" if s.shared else ""),
            f"{plan.buffer(s.buffer).size:,}",
            *(f"{needs[n]:,}" if n in needs else "-" for n in names),
        )
    alone = [plan.alone_bytes(n) for n in names]
    table.add_row("each program alone", f"{sum(alone):,}", *(f"{a:,}" for a in alone))
    out = io.StringIO()
    console = Console(file=out, width=140, no_color=True, highlight=False, emoji=False)
    console.print(table, markup=False)
    saved = sum(alone) - plan.shared_total
    console.print(
        f"programs: {sum(alone):,} B as one image per program, {plan.shared_total:,} B "
        f"shared in this image: {saved:,} B saved",
        markup=False,
    )
    ram_alone = sum(plan.alone_bytes(n, ram=True) for n in names)
    ram_shared = plan.shared_bytes(ram=True)
    console.print(
        f"programs in RAM: {ram_alone:,} B as one image per program, {ram_shared:,} B shared "
        f"in this image: {ram_alone - ram_shared:,} B saved",
        markup=False,
    )
    return out.getvalue()


def report_text(plan: MemoryPlan) -> str:
    """A table per plan: region, base, size, used, free, then its buffers with the why."""
    view = npu_view(plan)
    table = Table(
        title=f"memory plan: {plan.board.name}, {plan.mode.value}, {plan.accelerator_name}",
        title_justify="left",
        show_lines=True,
    )
    for column, justify in (
        ("region", "left"),
        ("base", "left"),
        ("size", "right"),
        ("used", "right"),
        ("free", "right"),
        ("contents (bytes): why", "left"),
    ):
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    for use in region_fill(plan):
        r = use.region
        lines = []
        for name in use.buffers:
            b = plan.buffer(name)
            size = "linker-sized" if b.role in (Role.CODE, Role.DATA) else f"{b.size:,}"
            port = _buffer_port(view, b)
            npu = f" [NPU over {port}]" if port else " [NPU]" if b.npu else ""
            load = f" [loaded from {b.load_region}]" if b.load_region else ""
            lines.append(f"{b.name} ({size}){npu}{load}: {b.why}")
        pct = f" ({100 * use.used / r.size:.0f}%)" if use.used else ""
        cells = (
            f"{r.name}\n{r.kind.value}" + (f"\nNPU port: {r.port.value}" if r.npu else ""),
            f"0x{r.base:08x}",
            f"{r.size:,}\n{size_text(r.size)}",
            f"{use.used:,}{pct}",
            f"{use.free:,}",
            "\n".join(lines) or "-",
        )
        table.add_row(*(Text(c) for c in cells))  # Text: brackets are not markup
    out = io.StringIO()
    console = Console(file=out, width=140, no_color=True, highlight=False, emoji=False)
    console.print(table, markup=False)
    for note in plan.notes:
        console.print(f"note: {note}", markup=False)
    return out.getvalue() + programs_text(plan)
