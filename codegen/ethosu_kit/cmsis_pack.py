"""Start a board.toml from a CMSIS-Pack device description (.pdsc).

A pack knows the device's processor and memory map (`<memory>` elements, `<algorithm>`
flash ranges), inherited family -> subFamily -> device. It knows nothing of the
Ethos-U (kind, base, IRQ) or the console UART: those come from the command line,
else the written file holds placeholders marked `TODO` that the loader still accepts,
so `ethosu-kit boards board.toml` shows the result at once.

Plain `xml.etree` reads the file: cmsis-pack-manager's parser works on its pack
index cache, which needs downloads; a single local .pdsc needs none.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

from ethosu_kit.board import RegionKind
from ethosu_kit.errors import BoardError
from ethosu_kit.npu_facts import DEFAULT_MACS, DEFAULT_REGISTERS, U55, runs_mode

# Armv8.1-M cores GCC 12 does not know by -mcpu get the ISA spelled out.
ARCH = {
    "cortex-m0": "armv6-m", "cortex-m0+": "armv6-m", "cortex-m1": "armv6-m",
    "cortex-m3": "armv7-m", "cortex-m4": "armv7e-m", "cortex-m7": "armv7e-m",
    "cortex-m23": "armv8-m.base", "cortex-m33": "armv8-m.main", "cortex-m35p": "armv8-m.main",
    "cortex-m52": "armv8.1-m.main", "cortex-m55": "armv8.1-m.main",
    "cortex-m85": "armv8.1-m.main",
}  # fmt: skip
GCC_UNKNOWN = {
    "cortex-m85": "-march=armv8.1-m.main+mve.fp+fp.dp",
    "cortex-m52": "-march=armv8.1-m.main+mve.fp+fp.dp",
}


@dataclass(frozen=True)
class PackMemory:
    name: str
    start: int
    size: int
    access: str  # CMSIS access letters: r w x p s n c
    default: bool
    startup: bool
    from_algorithm: bool = False


@dataclass(frozen=True)
class PackDevice:
    name: str
    vendor: str
    pack: str  # "Vendor.Name" of the pack
    core: str  # "cortex-m55"
    fpu: bool
    mve: str  # "", "int", "fp"
    clock_hz: int | None
    memories: tuple[PackMemory, ...]
    skipped: tuple[str, ...] = field(default=())  # memories dropped, and why


def _int(text: str | None, what: str, source: str) -> int:
    try:
        return int((text or "").strip(), 0)
    except ValueError:
        raise BoardError(f"{source}: {what}: {text!r} is not a number") from None


def _memory(el: ET.Element, source: str) -> PackMemory:
    name = el.get("name") or el.get("id") or "MEM"
    ident = el.get("id", "")
    access = el.get("access") or ("rx" if ident.startswith("IROM") else "rwx")
    return PackMemory(
        name=name,
        start=_int(el.get("start"), f"memory {name!r} start", source),
        size=_int(el.get("size"), f"memory {name!r} size", source),
        access=access,
        default=el.get("default") in ("1", "true"),
        startup=el.get("startup") in ("1", "true"),
    )


def read_pdsc(path: Path) -> tuple[str, dict[str, ET.Element]]:
    """(pack name, {device name: element}) of a .pdsc."""
    source = str(path)
    try:
        root = ET.parse(path).getroot()
    except FileNotFoundError:
        raise BoardError(f"{source}: no such file") from None
    except (ET.ParseError, OSError) as exc:
        raise BoardError(f"{source}: not a readable .pdsc: {exc}") from None
    if root.tag != "package":
        raise BoardError(f"{source}: not a CMSIS-Pack description (root <{root.tag}>)")
    pack = f"{root.findtext('vendor', '?')}.{root.findtext('name', '?')}"
    devices = {d.get("Dname", ""): d for d in root.iter("device")}
    return pack, devices


def load_device(path: Path, device: str) -> PackDevice:
    """The named device with everything its family and subFamily give it."""
    source = str(path)
    pack, devices = read_pdsc(path)
    if device not in devices:
        raise BoardError(
            f"{source}: no device {device!r} in pack {pack}",
            hint=f"devices in this pack: {', '.join(sorted(devices)) or 'none'}",
        )
    # the chain family -> subFamily -> device, outermost first (ElementTree has no parent)
    root = ET.parse(path).getroot()
    chain: list[ET.Element] = []
    for family in root.iter("family"):
        for el in family.iter("device"):
            if el.get("Dname") == device:
                chain = [family]
                for sub in family.iter("subFamily"):
                    if el in list(sub.iter("device")):
                        chain.append(sub)
                chain.append(el)
    vendor = ""
    processor: dict[str, str] = {}
    memories: dict[tuple[str, int], PackMemory] = {}
    algorithms: list[tuple[int, int]] = []
    for level in chain:
        vendor = level.get("Dvendor", vendor)
        for p in level.findall("processor"):
            processor.update(p.attrib)
        for m in level.findall("memory"):
            mem = _memory(m, source)
            memories[(mem.name, mem.start)] = mem  # a deeper level redefines
        for a in level.findall("algorithm"):
            algorithms.append(
                (_int(a.get("start"), "algorithm start", source),
                 _int(a.get("size"), "algorithm size", source))
            )  # fmt: skip
    found = list(memories.values())
    for start, size in algorithms:
        if not any(m.start <= start < m.start + m.size for m in found):
            found.append(PackMemory("FLASH", start, size, "rx", False, False, True))
    core = processor.get("Dcore", "").lower()
    mve = {"FP_MVE": "fp", "MVE": "int"}.get(processor.get("Dmve", ""), "")
    return PackDevice(
        name=device,
        vendor=vendor.split(":")[0],
        pack=pack,
        core=core,
        fpu=processor.get("Dfpu", "NO_FPU") not in ("NO_FPU", "0"),
        mve=mve,
        clock_hz=_int(processor["Dclock"], "Dclock", source) if "Dclock" in processor else None,
        memories=tuple(found),
    )


@dataclass(frozen=True)
class ImportOptions:
    name: str | None = None  # board name; default from the device name
    npu_kind: str | None = None  # "ethos-u55"
    macs: tuple[int, ...] = ()
    npu_base: int | None = None
    npu_irq: int | None = None
    uart_base: int | None = None
    security: str = "auto"  # "s", "ns", "all", or "auto": secure aliases when the pack has both


@dataclass(frozen=True)
class RegionDraft:
    name: str
    kind: RegionKind
    base: int
    size: int
    on_chip: bool
    npu: bool
    writable: bool
    executable: bool
    volatile: bool
    note: str  # what the pack said, for the comment


def _kind(mem: PackMemory) -> RegionKind:
    n = mem.name.upper()
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


def draft_regions(device: PackDevice, security: str) -> tuple[list[RegionDraft], list[str]]:
    """Regions for the board file, and what was left out (as comment lines)."""
    memories = list(device.memories)
    if security == "auto":
        has_s = any("s" in m.access for m in memories)
        has_n = any("n" in m.access for m in memories)
        security = "s" if has_s and has_n else "all"
    skipped: list[str] = []
    drafts: list[RegionDraft] = []
    used_names: set[str] = set()
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
        external = kind in (RegionKind.DRAM, RegionKind.FLASH)
        drafts.append(
            RegionDraft(
                name=name,
                kind=kind,
                base=mem.start,
                size=mem.size,
                on_chip=not external,
                npu=not tcm and kind != RegionKind.ROM,
                writable="w" in mem.access,
                executable="x" in mem.access,
                volatile=kind not in (RegionKind.FLASH, RegionKind.ROM),
                note=(
                    f"pack: {mem.name}, access {mem.access}"
                    + (", from the flash algorithm" if mem.from_algorithm else "")
                    + (", startup" if mem.startup else "")
                ),
            )
        )
    return drafts, skipped


def render_board_toml(device: PackDevice, options: ImportOptions, pdsc: Path) -> str:
    """The board.toml text for `device` (validated by the caller with parse_board)."""
    import jinja2

    from ethosu_kit import __version__
    from ethosu_kit.paths import templates_dir

    if not device.core.startswith("cortex-m"):
        raise BoardError(
            f"{pdsc}: device {device.name}: processor {device.core or '(none)'} is not a Cortex-M"
        )
    regions, skipped = draft_regions(device, options.security)
    if not regions:
        raise BoardError(f"{pdsc}: device {device.name} has no <memory> the board can use")
    name = options.name or re.sub(r"[^a-z0-9]+", "-", device.name.lower()).strip("-")
    kind = options.npu_kind or U55
    macs = options.macs or (DEFAULT_MACS[kind],)
    modes = [m for m in DEFAULT_REGISTERS if runs_mode(kind, m)]
    core = device.core
    gcc_cpu = GCC_UNKNOWN.get(core, f"-mcpu={core}")
    float_abi = "-mfloat-abi=hard" if device.fpu else "-mfloat-abi=soft"
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(templates_dir()),
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
        autoescape=False,
    )
    return env.get_template("board.toml.j2").render(
        version=__version__,
        pdsc=pdsc.name,
        device=device,
        name=name,
        arch=ARCH.get(core, "armv8.1-m.main"),
        flags={
            "gcc": [
                gcc_cpu,
                *(["-mtune=cortex-m55"] if core in GCC_UNKNOWN else []),
                float_abi,
                "-mthumb",
            ],
            "clang": ["--target=arm-none-eabi", f"-mcpu={core}", float_abi, "-mthumb"],
            "armclang": ["--target=arm-arm-none-eabi", f"-mcpu={core}", float_abi, "-mthumb"],
        },
        npu_kind=kind,
        npu_kind_todo=options.npu_kind is None,
        macs=list(macs),
        npu_base=options.npu_base,
        npu_irq=options.npu_irq,
        uart_base=options.uart_base,
        registers=[(m.value, *DEFAULT_REGISTERS[m]) for m in modes],
        regions=regions,
        skipped=skipped,
    )
