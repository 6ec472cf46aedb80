"""Bounds on a vendor XML file (.pdsc, SVD) checked before any library parses it.

The libraries behind `new-board` build whole trees and expand arrays: cmsis-pack-manager
(Rust) overflows its stack on a deeply nested .pdsc and takes the interpreter with it
(signal 11); cmsis-svd expands `<dim>` into one Python object per element, so
`<dim>100000</dim>` or 100k peripherals take minutes and GiBs. One streaming pass over
the file with lxml's event parser (no tree kept, libxml2's own limits on: no huge_tree,
no entities, no DTD, no network) measures what those libraries would build and refuses
a file past any bound with one line naming it. The bounds are far above the largest real
vendor files (an Alif Ensemble E8 SVD: 3.5 MB, 151 peripherals, 7,378 registers with the
derivedFrom copies, depth 11, scanned in 0.7 s; its .pdsc: 125 memories over every device,
depth 8).
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from pathlib import Path

from ethosu_kit.core.errors import BoardError, KitError

MAX_DEPTH = 32  # element nesting: a .pdsc is ~6 deep, an SVD ~8
MAX_ELEMENTS = 4_000_000  # every element of a 64 MiB file (a 30 MiB SVD has ~1.5M)
MAX_DIM = 1024  # one <dim>: the largest arrays in vendor SVDs are a few hundred
MAX_PERIPHERALS = 4096  # after <dim> expansion: a large SoC has ~400
MAX_REGISTERS = 200_000  # after <dim> expansion, in the whole SVD
MAX_PACK_MEMORIES = 65_536  # <memory> elements in a whole .pdsc (every device of a family)
MAX_DEVICE_MEMORIES = 256  # one device's, inherited ones included: a device has tens
_CHECKED = (
    f"limits: depth {MAX_DEPTH}, {MAX_DIM} per <dim>, {MAX_PERIPHERALS} peripherals, "
    f"{MAX_REGISTERS} registers, {MAX_DEVICE_MEMORIES} memories per device "
    "(docs/input-files.md)"
)


@dataclass
class XmlCounts:
    """What a file holds, counted while streaming it."""

    root: str = ""
    elements: int = 0
    depth: int = 0
    memories: int = 0
    peripherals: int = 0  # <dim> expanded
    registers: int = 0  # <dim> arrays and derivedFrom copies expanded
    releases: int = 0  # <releases><release version=…> of a .pdsc
    tags: dict[str, int] = field(default_factory=dict)


def _dim(text: str | None, path: Path) -> int:
    raw = (text or "").strip()
    try:
        value = int(raw, 0) if raw[:2].lower() == "0x" else int(raw) if raw else 1
    except ValueError:
        raise BoardError(f"{path}: <dim> {raw[:40]!r} is not a number") from None
    if not 0 <= value <= MAX_DIM:
        raise BoardError(
            f"{path}: <dim> {raw[:40]} is more than the kit expands ({MAX_DIM} per array)",
            hint=_CHECKED,
        )
    return value or 1


def _more_registers(counts: XmlCounts, n: int, path: Path) -> None:
    counts.registers += n
    if counts.registers > MAX_REGISTERS:
        raise BoardError(
            f"{path}: more than {MAX_REGISTERS:,} registers once <dim> arrays and "
            "derivedFrom copies are expanded",
            hint=_CHECKED,
        )


def _more_peripherals(counts: XmlCounts, n: int, path: Path) -> None:
    counts.peripherals += n
    if counts.peripherals > MAX_PERIPHERALS:
        raise BoardError(
            f"{path}: more than {MAX_PERIPHERALS:,} peripherals once <dim> arrays are expanded",
            hint=_CHECKED,
        )


def scan(data: bytes, path: Path) -> XmlCounts:
    """Stream `data` once and check every bound; BoardError on the first one passed."""
    try:
        from lxml import etree  # noqa: PLC0415 - optional (pack extra)
    except ImportError:
        raise KitError(
            "reading a .pdsc or SVD needs lxml, which is not installed",
            hint="pip install 'ethosu-porting-kit[pack]'",
        ) from None
    counts = XmlCounts()
    stack: list[str] = []
    # per open <peripheral>/<cluster>/<register>: its <dim> (1 until read)
    dims: list[int] = []
    periph_regs = 0  # registers of one instance of the open peripheral
    periph_name, periph_base = "", ""  # its <name>, and the peripheral it is derivedFrom
    per_name: dict[str, int] = {}  # registers per instance, by peripheral name
    events = etree.iterparse(
        io.BytesIO(data),
        events=("start", "end"),
        resolve_entities=False,
        load_dtd=False,
        no_network=True,
        huge_tree=False,
        remove_comments=True,
    )
    try:
        for event, elem in events:
            tag = elem.tag if isinstance(elem.tag, str) else ""
            if event == "start":
                stack.append(tag)
                counts.elements += 1
                counts.depth = max(counts.depth, len(stack))
                if len(stack) > MAX_DEPTH:
                    raise BoardError(
                        f"{path}: elements nested {len(stack)} deep (more than {MAX_DEPTH}): "
                        "not a vendor file the kit reads",
                        hint=_CHECKED,
                    )
                if counts.elements > MAX_ELEMENTS:
                    raise BoardError(f"{path}: more than {MAX_ELEMENTS:,} elements", hint=_CHECKED)
                if len(stack) == 1:
                    counts.root = tag
                if tag in ("peripheral", "cluster", "register"):
                    dims.append(1)
                    if tag == "peripheral":
                        periph_regs, periph_name = 0, ""
                        periph_base = str(elem.get("derivedFrom") or "")
                elif tag == "release" and stack[-2:-1] == ["releases"]:
                    counts.releases += elem.get("version") is not None
                elif tag == "memory":
                    counts.memories += 1
                    if counts.memories > MAX_PACK_MEMORIES and counts.root == "package":
                        raise BoardError(
                            f"{path}: more than {MAX_PACK_MEMORIES:,} <memory> elements",
                            hint=_CHECKED,
                        )
                continue
            # end
            stack.pop()
            if tag == "dim" and len(stack) >= 1 and stack[-1] in ("peripheral", "cluster",
                                                                   "register"):  # fmt: skip
                dims[-1] = _dim(elem.text, path)
            elif tag == "name" and stack and stack[-1] == "peripheral":
                periph_name = (elem.text or "").strip()
            elif tag == "register" and dims:
                n = 1
                for d in dims[1:]:  # dims[0] is the peripheral's own: counted at its end
                    n *= d
                dims.pop()
                periph_regs += n
                _more_registers(counts, n, path)
            elif tag == "cluster" and dims:
                dims.pop()
            elif tag == "peripheral" and dims:
                copies = dims.pop()
                if periph_regs == 0 and periph_base:
                    # derivedFrom copies the other's registers: cmsis-svd builds them again
                    periph_regs = per_name.get(periph_base, 0)
                    _more_registers(counts, periph_regs * copies, path)
                else:
                    _more_registers(counts, periph_regs * (copies - 1), path)
                per_name[periph_name] = periph_regs
                _more_peripherals(counts, copies, path)
            if tag != "dim":  # keep nothing: each finished element and its elder siblings go
                elem.clear(keep_tail=False)
                while elem.getprevious() is not None:
                    del elem.getparent()[0]
    except etree.XMLSyntaxError as exc:
        raise BoardError(f"{path}: not well-formed XML ({exc})") from None
    return counts
