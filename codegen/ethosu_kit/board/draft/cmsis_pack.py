"""A device's CPU and memory map from a CMSIS-Pack description (.pdsc).

cmsis-pack-manager (the `pack` extra) parses the file offline and resolves what a
device inherits from its family and subFamily; this module only turns its index
into typed data (`PackDevice`) and drafts board regions from it (`draft_regions`).

What the library's index does not carry (the processor's Dmve, Dclock, Ddsp, Dtz; a
memory's alias=) is read here from the same bytes, along the device's family, subFamily,
device and variant (`_pdsc_extras`), after `xml_bounds.scan` has bounded the file; what
the pack leaves out comes back as None ("unknown") and the scaffold marks it TODO.
A pack never knows the Ethos-U (kind, base, IRQ), the console UART or which
memories the NPU reaches: those come from a device SVD (`ethosu_kit.board.draft.svd`), the
command line, or stay TODO.
"""

from __future__ import annotations

import re
import tempfile
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ethosu_kit.board.draft.xml_bounds import MAX_DEVICE_MEMORIES, scan
from ethosu_kit.board.model import MemoryRegion, RegionKind
from ethosu_kit.core.errors import BoardError, KitError
from ethosu_kit.core.files import MAX_DEVICE_FILE, read_bytes
from ethosu_kit.core.writer import write_file_atomic

# cmsis-pack-manager's access flags -> the CMSIS access letters the pack spells
_ACCESS_LETTERS = (("read", "r"), ("write", "w"), ("execute", "x"), ("peripheral", "p"),
                   ("secure", "s"), ("non_secure", "n"), ("non_secure_callable", "c"))  # fmt: skip
_CORE_RE = re.compile(r"^Cortex(M)(\d+)(Plus|P)?$")


@dataclass(frozen=True)
class PackMemory:
    name: str
    start: int
    size: int
    access: str  # CMSIS access letters: r w x p s n c
    default: bool
    startup: bool
    from_algorithm: bool = False
    alias: str | None = None  # the pdsc's alias=: the name of the same memory at another address


@dataclass(frozen=True)
class PackDevice:
    name: str
    vendor: str
    pack: str  # "Vendor.Name" of the pack
    core: str  # "cortex-m55"
    fpu: bool
    fpu_dp: bool
    mve: str | None  # "", "int", "fp"; None: the pack library does not say
    clock_hz: int | None
    memories: tuple[PackMemory, ...]
    processor: str | None = None  # Pname, on a multi-core device
    svd: str | None = None  # the <debug svd=...> path, relative to the pack's folder
    skipped: tuple[str, ...] = field(default=())  # memories dropped, and why
    dsp: bool | None = None  # Ddsp; None: the pack does not say
    trustzone: bool | None = None  # Dtz


def _core(name: str) -> str:
    """cmsis-pack-manager's "CortexM55" / "CortexM0Plus" -> "cortex-m55" / "cortex-m0+"."""
    m = _CORE_RE.match(name)
    if not m:
        return name.lower()
    suffix = {"Plus": "+", "P": "p"}.get(m.group(3) or "", "")
    return f"cortex-m{m.group(2)}{suffix}"


def _xml_problem(data: bytes) -> str | None:
    """Why the file is not a pack description, for the message when the library found
    nothing in it (it skips a malformed file silently). Reads nothing the board uses."""
    try:
        root = ET.fromstring(data)
    except ET.ParseError as exc:
        return f"not well-formed XML ({exc})"
    if root.tag != "package":
        return f"not a CMSIS-Pack description (root element <{root.tag}>, expected <package>)"
    if root.find("devices") is None:
        return "the <package> has no <devices> element"
    return None


def read_pack(path: Path) -> dict[str, dict[str, Any]]:
    """cmsis-pack-manager's index of one local .pdsc: {device name: device}."""
    return read_pack_data(path)[0]


def read_pack_data(path: Path) -> tuple[dict[str, dict[str, Any]], bytes]:
    """The index and the bytes it was made from (read once: a file that changes between
    two reads gives no mixed facts)."""
    data = read_bytes(path, MAX_DEVICE_FILE, BoardError)  # a FIFO or /dev/zero never gets in
    counts = scan(data, path)  # depth and counts bounded before the library builds a tree
    if counts.root != "package":
        raise BoardError(
            f"{path}: not a CMSIS-Pack description (root element <{counts.root}>, "
            "expected <package>)"
        )
    if counts.releases == 0:
        # cmsis-pack-manager indexes the first release without checking there is one: a
        # Rust panic that takes the interpreter with it (signal 11)
        raise BoardError(
            f"{path}: no <release version=…> in <releases>: not a pack description the "
            "kit reads (CMSIS-Pack requires one)"
        )
    try:
        import cmsis_pack_manager  # noqa: PLC0415 - optional (pack extra)
    except ImportError:
        raise KitError(
            "reading a .pdsc needs cmsis-pack-manager, which is not installed",
            hint="pip install 'ethosu-porting-kit[pack]' (or: pip install cmsis-pack-manager)",
        ) from None
    with tempfile.TemporaryDirectory(prefix="ethosu-kit-pack-") as tmp:
        json_path, data_path = Path(tmp) / "json", Path(tmp) / "data"
        json_path.mkdir()
        data_path.mkdir()
        copy = Path(tmp) / "device.pdsc"  # the library reads what we checked, by a plain name
        write_file_atomic(copy, data)
        cache = cmsis_pack_manager.Cache(True, True, json_path=str(json_path),
                                         data_path=str(data_path))  # fmt: skip
        try:
            cache.add_pack_from_path(str(copy))
            index: dict[str, dict[str, Any]] = cache.index
        except Exception as exc:  # the library raises a bare Exception with Rust's trace
            last = str(exc).strip().strip("'\"").split("\\n")[-1].strip()
            raise BoardError(f"{path}: cmsis-pack-manager cannot read it: {last}") from None
    if not index:
        problem = _xml_problem(data) or "no <device> in it that cmsis-pack-manager can read"
        raise BoardError(f"{path}: {problem}")
    return index, data


@dataclass(frozen=True)
class _Extras:
    processor: dict[str, str]  # the chosen processor's attributes, inherited along the chain
    aliases: dict[str, str]  # memory name -> its alias= value


_MVE = {"NO_MVE": "", "MVE": "int", "FP_MVE": "fp"}


def _pdsc_extras(data: bytes, device: str, processor: str | None) -> _Extras:
    """What cmsis-pack-manager drops, for `device` (a Dname or Dvariant): the <processor>
    attributes (the closer element wins, per Pname) and each <memory>'s alias=."""
    from lxml import etree  # noqa: PLC0415 - optional (pack extra); scan() checked it

    parser = etree.XMLParser(resolve_entities=False, load_dtd=False, no_network=True,
                             huge_tree=False, remove_comments=True)  # fmt: skip
    try:
        root = etree.fromstring(data, parser)
    except etree.XMLSyntaxError:
        return _Extras({}, {})
    found = None
    for elem in root.iter("device", "variant"):
        if device in (elem.get("Dname"), elem.get("Dvariant"), elem.get("Dvname")):
            found = elem
            break
    if found is None:
        return _Extras({}, {})
    chain = [found, *found.iterancestors("family", "subFamily", "device")][::-1]
    attrs: dict[str, str] = {}
    aliases: dict[str, str] = {}
    for elem in chain:
        for child in elem:
            if child.get("Pname") not in (None, processor):
                continue
            if child.tag == "processor":
                attrs.update({k: str(v) for k, v in child.attrib.items()})
            elif child.tag == "memory" and child.get("name") and child.get("alias"):
                aliases[str(child.get("name"))] = str(child.get("alias"))
    return _Extras(attrs, aliases)


def _flag(value: str | None, yes: str, no: str) -> bool | None:
    return {yes: True, no: False}.get(value or "")


def _clock(value: str | None) -> int | None:
    try:
        hz = int(str(value).strip(), 0)
    except ValueError:
        return None
    return hz if 0 < hz < 1 << 40 else None


def _memories(raw: dict[str, Any], processor: str | None) -> list[PackMemory]:
    found: list[PackMemory] = []
    for name, mem in raw.get("memories", {}).items():
        if mem.get("p_name") not in (None, processor):
            continue  # another core's private memory
        access = mem.get("access", {})
        found.append(
            PackMemory(
                name=name,
                start=int(mem["start"]),
                size=int(mem["size"]),
                access="".join(letter for key, letter in _ACCESS_LETTERS if access.get(key)),
                default=bool(mem.get("default")),
                startup=bool(mem.get("startup")),
            )
        )
    for algo in raw.get("algorithms", []):
        start, size = int(algo["start"]), int(algo["size"])
        if not any(m.start <= start < m.start + m.size for m in found):
            found.append(PackMemory("FLASH", start, size, "rx", False, False, True))
    return found


def load_device(path: Path, device: str, processor: str | None = None) -> PackDevice:
    """The named device with everything its family and subFamily give it."""
    index, data = read_pack_data(path)
    if device not in index:
        raise BoardError(
            f"{path}: no <device> {device!r} in the pack",
            hint=f"devices in this pack: {', '.join(sorted(index)) or 'none'}",
        )
    raw = index[device]
    count = len(raw.get("memories") or {}) + len(raw.get("algorithms") or [])
    if count > MAX_DEVICE_MEMORIES:
        raise BoardError(
            f"{path}: device {device} has {count:,} memories (more than {MAX_DEVICE_MEMORIES}): "
            "a board drafted from them would be more than the kit reads",
            hint="docs/input-files.md lists the limits",
        )
    processors = raw.get("processors") or []
    if not processors:
        raise BoardError(f"{path}: device {device}: no <processor> element")
    if processor is None and len(processors) > 1:
        names = ", ".join(str(p.get("name")) for p in processors)
        raise BoardError(
            f"{path}: device {device} has {len(processors)} processors ({names})",
            hint="name the one the firmware runs on with --processor",
        )
    chosen = next((p for p in processors if processor in (None, p.get("name"))), None)
    if chosen is None:
        names = ", ".join(str(p.get("name")) for p in processors)
        raise BoardError(
            f"{path}: device {device}: no processor {processor!r}", hint=f"processors: {names}"
        )
    from_pack = raw.get("from_pack", {})
    fpu = str(chosen.get("fpu", "None"))
    extras = _pdsc_extras(data, device, chosen.get("name"))
    p = extras.processor
    memories = tuple(
        replace(m, alias=extras.aliases.get(m.name)) for m in _memories(raw, chosen.get("name"))
    )
    return PackDevice(
        name=device,
        vendor=str(raw.get("vendor") or from_pack.get("vendor", "")).split(":")[0],
        pack=f"{from_pack.get('vendor', '?')}.{from_pack.get('pack', '?')}",
        core=_core(str(chosen.get("core", ""))),
        fpu=fpu != "None",
        fpu_dp=fpu == "DoublePrecision",
        mve=_MVE.get(p.get("Dmve", "")),
        clock_hz=_clock(p.get("Dclock")),
        memories=memories,
        processor=chosen.get("name"),
        svd=chosen.get("svd"),
        dsp=_flag(p.get("Ddsp"), "DSP", "NO_DSP"),
        trustzone=_flag(p.get("Dtz"), "TZ", "NO_TZ"),
    )


# non-volatile by name, whatever the access letters (a word of the name: HYPERRAM is no RRAM)
_NV_NAME_RE = re.compile(r"(?:^|[^A-Z])(?:Q?SPI)?(FLASH|MRAM|RRAM|NVM|EEPROM|XIP)")


def _kind(mem: PackMemory) -> RegionKind:
    n = mem.name.upper()
    if _NV_NAME_RE.search(n):
        return RegionKind.FLASH
    if "ITCM" in n:
        return RegionKind.ITCM
    if "DTCM" in n:
        return RegionKind.DTCM
    if "w" not in mem.access:
        return RegionKind.ROM if "ROM" in n or "BOOT" in n else RegionKind.FLASH
    if any(w in n for w in ("DDR", "DRAM", "SDRAM", "PSRAM", "HYPER", "OSPI_RAM")):
        return RegionKind.DRAM
    if "BRAM" in n or "CODE" in n:
        return RegionKind.BRAM
    return RegionKind.SRAM


def resolve_security(memories: tuple[PackMemory, ...], security: str) -> str:
    """The aliases to import: "auto" is "s" when the pack lists secure and non-secure
    aliases, else "all"."""
    if security != "auto":
        return security
    has_s = any("s" in m.access for m in memories)
    has_n = any("n" in m.access for m in memories)
    return "s" if has_s and has_n else "all"


def _executable(mem: PackMemory, kind: RegionKind, x_on_ram: bool) -> bool:
    """Whether code may run there, as the pack means its access letters. `x` says so; an
    ITCM exists to execute; and a pack that writes `x` on none of its RAMs (`rws`/`rwn`
    only: the letters then mark security, not execute-never) leaves a RAM executable."""
    if "x" in mem.access or kind is RegionKind.ITCM:
        return True
    return "w" in mem.access and not x_on_ram and kind is not RegionKind.DTCM


def _aliases(
    memories: list[PackMemory],
) -> tuple[list[PackMemory], dict[str, PackMemory], list[str]]:
    """One memory per RAM: of two names for the same memory (alias=), the core's own view
    stays (a TCM over its system address; the other security state is left to
    `resolve_security`), the other is recorded as its alias."""
    by_name = {m.name: m for m in memories}
    dropped: set[str] = set()
    alias_of: dict[str, PackMemory] = {}
    notes: list[str] = []
    for m in memories:
        other = by_name.get(m.alias or "")
        if other is None or other is m or m.name in dropped or other.name in dropped:
            continue
        if ("s" in m.access) != ("s" in other.access) or ("n" in m.access) != ("n" in other.access):
            continue  # secure and non-secure aliases: the security choice keeps one
        keep, drop = (
            (m, other) if "TCM" in m.name.upper() or "TCM" not in other.name.upper() else (other, m)
        )
        dropped.add(drop.name)
        alias_of[keep.name] = drop
        notes.append(
            f"{drop.name} 0x{drop.start:08x} size 0x{drop.size:x} access {drop.access}: "
            f"the same memory as {keep.name} (alias), recorded on it"
        )
    return [m for m in memories if m.name not in dropped], alias_of, notes


def draft_regions(device: PackDevice, security: str) -> tuple[list[MemoryRegion], list[str]]:
    """Regions for the board file (each description: what the pack said of it), and what
    was left out (as comment lines).

    Every RAM is volatile and not loadable (nothing puts an image's bytes there at
    reset) unless the pack marks it startup="1"; non-volatile memories (flash, MRAM:
    by access or name) are the load memories; a ROM is the vendor's, never the image's."""
    security = resolve_security(device.memories, security)
    skipped: list[str] = []
    drafts: list[MemoryRegion] = []
    used_names: set[str] = set()
    memories, alias_of, alias_notes = _aliases(list(device.memories))
    skipped += alias_notes
    x_on_ram = any("x" in m.access and "w" in m.access for m in device.memories)
    by_name = {m.name: m for m in device.memories}
    aliased_by = {m.alias: m for m in device.memories if m.alias}
    for mem in sorted(memories, key=lambda m: m.start):
        label = f"{mem.name} 0x{mem.start:08x} size 0x{mem.size:x} access {mem.access}"
        if security == "s" and "n" in mem.access:
            skipped.append(f"{label}: non-secure alias (importing secure addresses)")
            continue
        if security == "ns" and "s" in mem.access:
            skipped.append(f"{label}: secure alias (importing non-secure addresses)")
            continue
        if mem.size <= 0:
            skipped.append(f"{label}: zero size")
            continue
        if mem.start + mem.size > 1 << 32:
            skipped.append(f"{label}: runs past the 4 GiB address space")
            continue
        clash = next((d for d in drafts if mem.start < d.base + d.size), None)
        if clash is not None:
            skipped.append(f"{label}: overlaps {clash.name}")
            continue
        kind = _kind(mem)
        name = re.sub(r"[^A-Za-z0-9_]", "_", mem.name).upper().strip("_") or "MEM"
        if name[0].isdigit():
            name = f"M_{name}"
        while name in used_names:
            name += "_2"
        used_names.add(name)
        tcm = kind in (RegionKind.ITCM, RegionKind.DTCM)
        external = kind is RegionKind.DRAM or (
            kind is RegionKind.FLASH and not any(w in mem.name.upper() for w in ("MRAM", "RRAM"))
        )
        volatile = kind not in (RegionKind.FLASH, RegionKind.ROM)
        # the same memory under another name: merged here, or its other security state
        # (which the security choice leaves out), whichever of the two names the other
        alias = alias_of.get(mem.name) or by_name.get(mem.alias or "") or aliased_by.get(mem.name)
        drafts.append(
            MemoryRegion(
                name=name,
                kind=kind,
                base=mem.start,
                size=mem.size,
                cpu=True,
                on_chip=not external,
                npu=not tcm and kind != RegionKind.ROM,
                writable="w" in mem.access and volatile,
                executable=_executable(mem, kind, x_on_ram),
                volatile=volatile,
                # a RAM the pack marks startup="1" is where the core starts: what runs
                # before the image (a boot ROM, a debugger) fills it, so it stays loadable
                loadable=kind is RegionKind.FLASH or (mem.startup and volatile),
                description=(
                    f"pack: {mem.name}, access {mem.access}"
                    + (f", alias {alias.name} at 0x{alias.start:08x}" if alias else "")
                    + (", from the flash algorithm" if mem.from_algorithm else "")
                    + (", startup" if mem.startup else "")
                ),
            )
        )
    return drafts, skipped


def pack_svd(pdsc: Path, named: str) -> tuple[Path | None, str]:
    """The SVD a pack names (<debug svd=...>), only when it is a file inside the pack's
    folder: a pack is data from anywhere, and its path may point at ../../secret, an
    absolute path or /proc. Returns (path or None, the note for the user)."""
    folder = pdsc.resolve().parent
    rel = Path(named.replace("\\", "/"))
    if rel.is_absolute() or ".." in rel.parts or not named.strip():
        return None, f"the pack names the SVD {named!r}, outside its folder: not read (give --svd)"
    target = (folder / rel).resolve()
    if not target.is_relative_to(folder):
        return None, f"the pack's SVD {named!r} leads outside its folder: not read (give --svd)"
    if not target.is_file():
        return None, f"the pack names the SVD {named}; not found next to the .pdsc"
    return target, f"SVD: {target} (named by the pack)"
