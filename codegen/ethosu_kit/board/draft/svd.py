"""The facts a board needs from a device SVD: the NPU's and the console UART's
register base and interrupt number, the UART's kind, and the CPU's caches and
interrupt count.

cmsis-svd (the `pack` extra) parses the file (derivedFrom resolved); this module
only picks peripherals. Vendors name the Ethos-U freely (ETHOSU, NPU, ETHOS_U55,
NPU0_S...) and list secure and non-secure aliases as two peripherals, so a pick
groups aliases first (UART0_S + UART0_NS = UART0) and refuses to guess between two
different peripherals: the user names one (--npu-peripheral, --console-peripheral).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ethosu_kit.board.draft.xml_bounds import scan
from ethosu_kit.core.errors import BoardError, KitError
from ethosu_kit.core.files import MAX_DEVICE_FILE, read_bytes
from ethosu_kit.npu.facts import NPU_MACS, PRODUCT_IDS

SECURE_BIT = 1 << 28  # Armv8-M SoCs alias secure peripherals at non-secure + 0x10000000
_MARK = "S|NS|SEC|NSEC|SECURE|NONSECURE"  # how vendors mark an alias: UART0_S, NS_UART0
_ALIAS_RE = re.compile(rf"(?:({_MARK})_)?(.+?)(?:_({_MARK}))?", re.DOTALL)
_NPU_RE = re.compile(r"ETHOS|NPU")
_NOT_NPU_RE = re.compile(r"TIMING|(^|_)TA\d*$|ADAPTER")
_NPU_DESC_RE = re.compile(r"ethos-?u", re.IGNORECASE)
_UART_RE = re.compile(r"UART|USART|SERIAL")
_ID_CONFIG_RE = re.compile(r"(?:^|_)(ID|CONFIG)$")  # NPU85_ID, NPUHP_CONFIG; not QCONFIG
_NPU_REG_RE = re.compile(r"^(?:NPU|ETHOSU?)[-_]?(55|65|85)_")  # NPU85_ID: a U85's block
# register names (without a leading "UART") that identify a UART the kit has a driver for
UART_SIGNATURES: dict[str, frozenset[str]] = {
    "cmsdk-apb": frozenset({"DATA", "STATE", "CTRL", "BAUDDIV"}),
    "pl011": frozenset({"DR", "FR", "IBRD", "FBRD"}),
}


@dataclass(frozen=True)
class SvdPeripheral:
    """One peripheral, its secure and non-secure aliases merged."""

    name: str  # the name as the user would type it: "UART0" for UART0_S + UART0_NS
    base: int  # the alias the firmware uses (secure when it runs secure)
    base_ns: int | None  # the other (non-secure) alias, when the SVD lists one
    irq: int | None  # the first <interrupt> value
    registers: frozenset[str]
    description: str
    names: tuple[str, ...]  # the SVD's own peripheral names behind this one
    resets: tuple[tuple[str, int], ...] = ()  # (register name, <resetValue>), upper case


@dataclass(frozen=True)
class SvdCpu:
    """What new-board takes of the SVD's <cpu> (apply_svd); the core and its FPU are the
    pack's or the copied board's."""

    dsp: bool | None
    icache: bool | None
    dcache: bool | None
    irqs: int | None  # deviceNumInterrupts
    sau_regions: int | None


@dataclass(frozen=True)
class SvdDevice:
    source: str
    name: str
    cpu: SvdCpu | None
    peripherals: tuple[_Raw, ...]


@dataclass(frozen=True)
class _Raw:
    name: str
    base: int
    irq: int | None
    registers: frozenset[str]
    description: str
    protection: str | None  # "s", "n", "p" or None
    resets: tuple[tuple[str, int], ...] = ()


def _registers(p: Any) -> tuple[frozenset[str], tuple[tuple[str, int], ...]]:
    """The register names, and the reset values of those the NPU pick reads (ID, CONFIG)."""
    names: set[str] = set()
    resets: list[tuple[str, int]] = []
    for r in p.registers or ():
        for one in getattr(r, "registers", None) or [r]:  # register arrays expand
            if getattr(one, "name", None):
                name = str(one.name).upper()
                names.add(name)
                reset = getattr(one, "reset_value", None)
                if isinstance(reset, int) and _ID_CONFIG_RE.search(name):
                    resets.append((name, reset))
    return frozenset(names), tuple(resets)


def load_svd(path: Path) -> SvdDevice:
    data = read_bytes(path, MAX_DEVICE_FILE, BoardError)
    try:
        from cmsis_svd.parser import SVDParser  # noqa: PLC0415 - optional (pack extra)
        from lxml import etree  # noqa: PLC0415 - optional (pack extra)
    except ImportError:
        raise KitError(
            "reading an SVD needs cmsis-svd, which is not installed",
            hint="pip install 'ethosu-porting-kit[pack]' (or: pip install cmsis-svd)",
        ) from None
    scan(data, path)  # depth, <dim> and counts bounded before cmsis-svd expands anything
    # no entity expansion, no DTD, no network: an SVD is plain elements
    xml_parser = etree.XMLParser(
        resolve_entities=False, load_dtd=False, no_network=True, huge_tree=False
    )
    try:
        root = etree.fromstring(data, xml_parser)
    except etree.XMLSyntaxError as exc:
        raise BoardError(f"{path}: not well-formed XML ({exc})") from None
    if root.tag != "device":
        raise BoardError(
            f"{path}: not a CMSIS-SVD file (root element <{root.tag}>, expected <device>)"
        )
    # Bit fields are most of a vendor SVD and nothing here reads them: dropping them first
    # makes cmsis-svd 3.9x faster on a 3 MB SVD (7.8 s -> 2.0 s)
    for fields in list(root.iter("fields")):
        parent = fields.getparent()
        if parent is not None:
            parent.remove(fields)
    try:
        device = SVDParser(root.getroottree()).get_device()
    except Exception as exc:  # the library raises what it meets (ValueError, KeyError...)
        raise BoardError(f"{path}: cmsis-svd cannot read it: {type(exc).__name__}: {exc}") from None
    raws: list[_Raw] = []
    for entry in device.peripherals or ():
        for p in getattr(entry, "peripherals", None) or [entry]:  # peripheral arrays expand
            if p.name is None:
                continue
            if not str(p.name).isprintable() or not str(p.name).strip():
                raise BoardError(
                    f"{path}: <peripheral> name {str(p.name)[:60]!r} is not one line of text"
                )
            if p.base_address is None:
                raise BoardError(f"{path}: <peripheral> {p.name}: no <baseAddress>")
            registers, resets = _registers(p)
            raws.append(
                _Raw(
                    name=str(p.name),
                    base=int(p.base_address),
                    irq=next(
                        (int(i.value) for i in p.interrupts or () if i.value is not None), None
                    ),
                    registers=registers,
                    resets=resets,
                    description=" ".join(str(p.description or "").split()),
                    protection=getattr(p.protection, "value", None),
                )
            )
    cpu = None
    if device.cpu is not None:
        c = device.cpu
        cpu = SvdCpu(
            dsp=c.dsp_present,
            icache=c.icache_present,
            dcache=c.dcache_present,
            irqs=c.device_num_interrupts,
            sau_regions=c.sau_num_regions,
        )
    return SvdDevice(str(path), str(device.name or path.stem), cpu, tuple(raws))


def _alias(name: str) -> tuple[str, str | None]:
    """("UART0", "s") for UART0_S, ("UART0", "n") for NS_UART0, ("UART0", None) for UART0."""
    m = _ALIAS_RE.fullmatch(name.upper())
    if m is None:  # an empty name: load_svd lets none through
        return name.upper(), None
    marker = m.group(1) or m.group(3)
    if marker is None:
        return m.group(2), None
    return m.group(2), "n" if marker.startswith("N") else "s"


def _merge(svd: SvdDevice, group: str, members: list[_Raw], secure: bool) -> SvdPeripheral:
    """One peripheral from its aliases: the secure one as `base` when the firmware runs secure."""
    if len(members) == 1:
        m = members[0]
        return SvdPeripheral(
            group, m.base, None, m.irq, m.registers, m.description, (m.name,), m.resets
        )
    if len(members) != 2:
        names = ", ".join(m.name for m in members)
        raise BoardError(
            f"{svd.source}: peripherals {names} all look like {group}: cannot tell them apart"
        )

    def side(m: _Raw) -> str | None:
        marker = _alias(m.name)[1]
        return marker or (m.protection if m.protection in ("s", "n") else None)

    a, b = members
    sides = (side(a), side(b))
    if sides in (("s", "n"), ("n", "s")):
        s, n = (a, b) if sides[0] == "s" else (b, a)
    elif a.base ^ b.base == SECURE_BIT:
        s, n = (a, b) if a.base & SECURE_BIT else (b, a)
    else:
        raise BoardError(
            f"{svd.source}: peripherals {a.name} (0x{a.base:08x}) and {b.name} (0x{b.base:08x}) "
            f"both look like {group}, and are not its secure and non-secure aliases"
        )
    # derivedFrom copies <interrupt> too, so two aliases that disagree leave it unknown
    irqs = {m.irq for m in members if m.irq is not None}
    irq = irqs.pop() if len(irqs) == 1 else None
    first, other = (s, n) if secure else (n, s)
    return SvdPeripheral(
        group,
        first.base,
        n.base if secure else None,
        irq,
        s.registers | n.registers,
        s.description or n.description,
        (first.name, other.name),
        s.resets or n.resets,
    )


def _groups(raws: list[_Raw]) -> dict[str, list[_Raw]]:
    groups: dict[str, list[_Raw]] = {}
    for r in raws:
        groups.setdefault(_alias(r.name)[0], []).append(r)
    return groups


def _named(svd: SvdDevice, name: str, role: str, option: str, candidates: list[str]) -> list[_Raw]:
    want = name.upper()
    exact = [r for r in svd.peripherals if r.name.upper() == want]
    if exact:
        return exact
    aliased = [r for r in svd.peripherals if _alias(r.name)[0] == want]
    if aliased:
        return aliased
    raise BoardError(
        f"{svd.source}: no <peripheral> named {name!r} ({option})",
        hint=f"{role} candidates in this SVD: {', '.join(candidates) or 'none'}",
    )


def _what(r: _Raw) -> str:
    """ "ethos-u85-256", "ethos-u55" or "unknown kind": for a choice between two NPUs."""
    facts = npu_facts(SvdPeripheral(r.name, r.base, None, r.irq, r.registers, r.description,
                                    (r.name,), r.resets))  # fmt: skip
    if facts.kind is None:
        return "kind unknown"
    return facts.kind + (f"-{facts.macs}" if facts.macs else "")


def _pick(  # noqa: PLR0917 - one private helper for both roles
    svd: SvdDevice, role: str, option: str, found: list[_Raw], name: str | None, secure: bool
) -> SvdPeripheral | None:
    groups = _groups(found)
    if name is not None:
        chosen = _named(svd, name, role, option, sorted(groups))
        group = _alias(chosen[0].name)[0]
        return _merge(svd, group, _groups(chosen)[group], secure)
    if not groups:
        return None
    if len(groups) > 1:
        names = sorted(groups)
        first = next((n for n in names if n.endswith("0")), names[0])  # UART0 before LPUART3
        listed = [f"{n} ({_what(groups[n][0])})" if role == "NPU" else n for n in names]
        raise BoardError(
            f"{svd.source}: {len(names)} peripherals could be the {role}: {', '.join(listed)}",
            hint=f"name the one to use, e.g. {option} {first}",
        )
    group, members = next(iter(groups.items()))
    return _merge(svd, group, members, secure)


def find_npu(
    svd: SvdDevice, name: str | None = None, *, secure: bool = True
) -> SvdPeripheral | None:
    """The Ethos-U, or None when the SVD has nothing that looks like one."""
    others = [r for r in svd.peripherals if not _NOT_NPU_RE.search(r.name.upper())]
    found = [r for r in others if _NPU_RE.search(_alias(r.name)[0])]
    if not found:  # a vendor name (e.g. "ML0"): the description may still say Ethos-U
        found = [
            r
            for r in others
            if _NPU_DESC_RE.search(r.description) and "timing" not in r.description.lower()
        ]
    return _pick(svd, "NPU", "--npu-peripheral", found, name, secure)


def find_console(
    svd: SvdDevice, name: str | None = None, *, secure: bool = True
) -> SvdPeripheral | None:
    """The console UART (named, or the only UART), or None when the SVD has no UART."""
    found = [r for r in svd.peripherals if _UART_RE.search(_alias(r.name)[0])]
    return _pick(svd, "console UART", "--console-peripheral", found, name, secure)


def uart_kind(p: SvdPeripheral) -> str | None:
    """ "cmsdk-apb" or "pl011" when the registers say so, else None (the board writes its own)."""
    names = {n.removeprefix("UART") for n in p.registers}
    for kind, signature in UART_SIGNATURES.items():
        if signature <= names:
            return kind
    return None


def _reset(p: SvdPeripheral, register: str) -> int | None:
    """The one reset value the peripheral's `register` (ID or CONFIG) has, else None."""
    values = set()
    for name, value in p.resets:
        m = _ID_CONFIG_RE.search(name)
        if m is not None and m.group(1) == register:
            values.add(value)
    return values.pop() if len(values) == 1 else None


@dataclass(frozen=True)
class NpuFacts:
    """What an SVD says about its Ethos-U; each fact None when it does not say."""

    kind: str | None
    macs: int | None
    why: str  # where the kind came from, for the board's comment


def npu_facts(p: SvdPeripheral) -> NpuFacts:
    """The product and MAC count from the reset values of CONFIG (bits 31:28: the product,
    3:0: log2 of the MACs per cycle) and ID (bits 31:28: the architecture's major version,
    2 on an Ethos-U85 only), then from register block names (NPU85_ID) and the
    peripheral's name and description ("Ethos-U55")."""
    config, ident = _reset(p, "CONFIG"), _reset(p, "ID")
    kind: str | None = None
    why = ""
    if config is not None and (config >> 28) in PRODUCT_IDS:
        kind, why = str(PRODUCT_IDS[config >> 28]), f"CONFIG reset value 0x{config:08x}"
    elif ident is not None and ident >> 28 == 2:
        kind, why = "ethos-u85", f"ID reset value 0x{ident:08x} (architecture 2)"
    if kind is None:
        blocks = {m.group(1) for n in p.registers if (m := _NPU_REG_RE.match(n))}
        if len(blocks) == 1:
            kind = f"ethos-u{blocks.pop()}"
            why = "its register names"
    if kind is None:
        text = f"{' '.join(p.names)} {p.description}"
        m = re.search(r"U[-_ ]?(55|65|85)", text, re.IGNORECASE)
        if m:
            kind, why = f"ethos-u{m.group(1)}", "its name or description"
    macs = None
    if kind is not None and config is not None and (config >> 28) in PRODUCT_IDS:
        n = 1 << (config & 0xF)
        macs = n if n in NPU_MACS[kind] else None
    return NpuFacts(kind, macs, why)


def npu_kind(p: SvdPeripheral) -> str | None:
    """ "ethos-u55" / "ethos-u65" / "ethos-u85" when the SVD says which (`npu_facts`)."""
    return npu_facts(p).kind
