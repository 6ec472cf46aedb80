"""What `ethosu-kit inspect` prints: ModelInfo for people (rich tables) or for tools (JSON)."""

from __future__ import annotations

import io
import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table

from ethosu_kit.core.text import add_text_row, printable
from ethosu_kit.pte.model import Delegate, MethodInfo, ModelInfo

if TYPE_CHECKING:
    from rich.table import Table


_NUMERIC = frozenset({"bytes", "offset", "elem", "blob", "command", "weights", "scratch"})


def _bytes(n: int) -> str:
    """Exact bytes, with KiB/MiB beside them when that helps reading."""
    if n >= 1 << 20:
        return f"{n:,} B ({n / (1 << 20):.2f} MiB)"
    if n >= 1 << 10:
        return f"{n:,} B ({n / (1 << 10):.1f} KiB)"
    return f"{n:,} B"


def _shape(shape: tuple[int, ...]) -> str:
    return "[" + ", ".join(str(d) for d in shape) + "]"


def _spec_value(value: bytes) -> str:
    try:
        text = value.decode("utf-8")
    except UnicodeDecodeError:
        return value.hex()
    return text if text.isprintable() else value.hex()


def _table(title: str, columns: tuple[str, ...], rows: Iterable[tuple[str, ...]]) -> Table:
    """A table of plain-text rows, numbers right-aligned."""
    table = Table(title=title, title_justify="left")
    for c in columns:
        table.add_column(c, justify="right" if c in _NUMERIC else "left")
    for row in rows:
        add_text_row(table, *row)
    return table


def _io_table(m: MethodInfo) -> Table:
    rows = (
        (kind, str(i), t.dtype, _shape(t.shape), f"{t.nbytes:,}")
        for kind, tensors in (("input", m.inputs), ("output", m.outputs))
        for i, t in enumerate(tensors)
    )
    return _table("inputs and outputs", ("", "#", "dtype", "shape", "bytes"), rows)


def _delegate_row(i: int, d: Delegate) -> tuple[str, ...]:
    spec, vela = d.ethosu, d.vela
    return (
        str(i),
        d.backend_id,
        f"{d.processed_bytes:,}",
        str(spec.accelerator) if spec else "",
        spec.memory_mode_name if spec else "",
        f"{vela.cmd_bytes:,} ({vela.cop.command_words} words)" if vela else "",
        f"{vela.weight_bytes:,}" if vela else "",
        f"{vela.scratch_size:,}" if vela else "",
    )


def _delegate_table(m: MethodInfo) -> Table:
    columns = ("#", "backend", "blob", "target", "memory mode", "command", "weights", "scratch")
    rows = (_delegate_row(i, d) for i, d in enumerate(m.delegates))
    return _table("delegates (bytes)", columns, rows)


def _vela_io_table(m: MethodInfo) -> Table:
    columns = ("delegate", "", "#", "shape", "elem", "region", "offset", "bytes")
    rows = (
        (str(i), kind, str(n), _shape(t.shape), str(t.elem_size), str(t.region),
         f"{t.offset:,}", f"{t.nbytes:,}")
        for i, d in enumerate(m.delegates)
        if d.vela
        for kind, tensors in (("input", d.vela.inputs), ("output", d.vela.outputs))
        for n, t in enumerate(tensors)
    )  # fmt: skip
    return _table("Ethos-U inputs and outputs (Vela)", columns, rows)


def _delegate_lines(i: int, d: Delegate) -> list[str]:
    lines = [f"  delegate {i} ({d.backend_id}) compile specs:"]
    lines += [f"    {k} = {_spec_value(v)}" for k, v in d.compile_specs]
    if d.vela:
        cop = d.vela.cop
        lines.append(
            f"    COP1: {cop.product}, {cop.macs_per_cc} MACs/cc (CONFIG 0x{cop.config:08x}, "
            f"ID 0x{cop.id:08x}), command stream at byte {cop.command_offset}"
            + (", blocks external (named data)" if d.vela.external else "")
        )
        for problem in d.vela.io_problems:
            lines.append(f"    BAD IO RECORD: {problem} (gen refuses this delegate)")
    return lines


def _method_text(m: MethodInfo) -> tuple[list[str], list[Table], list[str]]:
    head = [
        f"method '{m.name}': {m.num_values} values ({m.num_tensors} tensors), "
        f"{m.num_instructions} instructions, {len(m.delegates)} delegate(s)",
        "  planned buffers: "
        + (
            ", ".join(f"mem_id {i + 1} {_bytes(s)}" for i, s in enumerate(m.planned_buffers))
            or "none"
        ),
        "  CPU operators: " + (", ".join(m.cpu_operators) or "none"),
    ]
    tables = [_io_table(m)]
    tail: list[str] = []
    if m.delegates:
        tables.append(_delegate_table(m))
        if any(d.vela for d in m.delegates):
            tables.append(_vela_io_table(m))
        for i, d in enumerate(m.delegates):
            tail += _delegate_lines(i, d)
    return head, tables, tail


def describe_model(info: ModelInfo, width: int = 130) -> str:
    """The human report of `ethosu-kit inspect`."""
    out = io.StringIO()
    console = Console(file=out, width=width, no_color=True, highlight=False)

    def line(text: str) -> None:  # plain text: never wrapped, so it can be grepped
        out.write(printable(text) + "\n")

    line(
        f"{info.path}: {_bytes(info.file_bytes)}, {len(info.methods)} method(s), "
        f"constant data {_bytes(info.constant_bytes)}, "
        f"segments: {', '.join(_bytes(s) for s in info.segments) or 'none'}"
    )
    spec = info.compile_spec
    if spec:
        line(
            f"Ethos-U target: {spec.accelerator}, {spec.memory_mode_name} "
            f"(system config {spec.system_config or '?'}, {spec.config_ini or 'no config file'}"
            + (f", arena cache {_bytes(spec.arena_cache_size)}" if spec.arena_cache_size else "")
            + f"), peak scratch {_bytes(info.peak_scratch)}"
        )
        line(f"Vela: {vela_version(info) or VELA_NOT_RECORDED}")
    else:
        line("no Ethos-U delegate: the whole program runs on the CPU")
    for m in info.methods:
        head, tables, tail = _method_text(m)
        line("")
        for text in head:
            line(text)
        for t in tables:
            console.print(t)
        for text in tail:
            line(text)
    return out.getvalue()


# Nothing in an ExecuTorch 1.5 .pte names the Vela that compiled its streams: the compile
# specs hold the Vela flags, target and TOSA spec, the COP1 header the command stream's own
# format version. A pte whose compile specs carry one (a key naming vela and version) says it.
VELA_NOT_RECORDED = "version not recorded in the .pte (its compile specs hold the flags only)"


def vela_version(info: ModelInfo) -> str | None:
    """The Vela version the first Ethos-U delegate's compile specs name, if any."""
    for d in info.ethosu_delegates:
        for key, value in d.compile_specs:
            low = key.lower()
            if "vela" in low and "version" in low:
                return printable(value.decode("utf-8", "replace"))
    return None


def model_json(info: ModelInfo) -> str:
    """ModelInfo.to_dict() as indented JSON (bytes values as text, as to_dict does)."""
    data: dict[str, Any] = info.to_dict()
    return json.dumps(data, indent=2) + "\n"
