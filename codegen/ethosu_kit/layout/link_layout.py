"""Stage 3 of the data flow: the link layout, every linker fact of a memory plan.

`link_layout(plan) -> LinkLayout` is a pure function. It decides, in Python and
once, what the linker templates only print: the MEMORY regions and their access
attributes, the output sections in their order per region, load (LMA) and run (VMA)
regions, which sections the reset code copies, the scatter file's execution regions
and how each one's base follows the previous one, the placement assertions (the same
list rendered into the GNU ld script and the scatter file), and the symbols that
account for each region's unused space.

Three renderings read it (linker/): the whole-image GNU ld script, the whole-image
scatter file, and the fragments a team includes in its own linker script
(`kit_sections.ld`, `kit_sections.sct`, `kit_regions.h`). Section names are the
constants below and the plan's; `kit_sections.h` gives C and assembly the same names.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from ethosu_kit.board.model import Board, MemoryRegion
from ethosu_kit.core.sizes import align_up
from ethosu_kit.core.text import cident
from ethosu_kit.npu.facts import Accelerator, MemoryMode, accelerator_text
from ethosu_kit.plan.types import Buffer, MemoryPlan, Role

# Section names that are not plan buffers. Each is spelled here only: the templates,
# the generated kit_sections.h (C, assembly) and the ELF check read these.
VECTORS: Final = ".vectors"  # the vector table (sdk/src/startup.c, or the team's)
# What runs before the reset copy has put the code in RAM (sdk/src/startup.c's
# Reset_Handler and its copy/zero loops): kept in non-volatile memory with the vectors
# and the copy tables when the code is copied ([boot] code = "copy"); otherwise one more
# .text input section.
BOOT_TEXT: Final = ".text.boot"
# The output sections the start-up copies into RAM with the code, in link order.
CODE_SECTIONS: Final = (".text", ".rel.dyn", ".ARM.extab", ".ARM.exidx", ".init_array")
KIT_INFO: Final = ".kit.info"  # what the image was built for (sdk/src/kit_info.c), not loaded
# Symbols the GNU ld renderings define per region for the free space after the last
# section (Pigweed's unused-space accounting, as symbols: a NOLOAD section would make
# every size tool count the free space as .bss).
UNUSED_START: Final = "__kit_unused_{region}_start"
UNUSED_END: Final = "__kit_unused_{region}_end"
# Defined by kit_sections.ld; the check script asserts it, so a team linker script
# that forgets `INCLUDE kit_sections.ld` fails the link naming the fragment.
FRAGMENT_MARKER: Final = "__kit_sections_ld_included"
# The Arm C library finds the stack and heap by these execution region names.
ARMLIB_REGIONS: Final = {Role.STACK: "ARM_LIB_STACK", Role.HEAP: "ARM_LIB_HEAP"}


def memory_attributes(r: MemoryRegion) -> str:
    """GNU ld MEMORY attributes from the region's flags, CMSIS-Toolbox style: `rx!w`, `rw!x`."""
    have = "r" + ("w" if r.writable else "") + ("x" if r.executable else "")
    lacks = ("" if r.writable else "w") + ("" if r.executable else "x")
    return have + (f"!{lacks}" if lacks else "")


@dataclass(frozen=True)
class LinkRegion:
    name: str
    base: int
    size: int
    attributes: str  # GNU ld MEMORY attributes, e.g. "rx!w"
    kind: str
    npu: bool

    @property
    def end(self) -> int:
        return self.base + self.size

    @property
    def macro(self) -> str:
        """The regions header's prefix: KIT_REGION_<NAME>."""
        return f"KIT_REGION_{cident(self.name)}"


@dataclass(frozen=True)
class KitSection:
    """One plan buffer: its own input section, output section and execution region."""

    name: str  # input and output section name, e.g. ".kit.scratch"
    buffer: str  # the plan buffer's name
    role: Role
    symbol: str  # the C (or assembler) object in it
    region: str  # run (VMA) region
    load_region: str | None  # where its contents are stored, when not `region`
    align: int
    size: int  # the plan's bytes
    loaded: bool  # has contents (PROGBITS); else uninitialised (NOLOAD / UNINIT)
    exec_region: str  # the scatter file's execution region name
    sct_base: str  # the scatter base: an address, or AlignExpr(ImageLimit(<previous>), n)
    why: str
    # a fixed address (a .ptd's reserved slot, plan.external): the section starts there
    address: int | None = None

    @property
    def macro(self) -> str:
        """kit_sections.h's name for the section string: KIT_SECTION_<BUFFER>."""
        return f"KIT_SECTION_{cident(self.buffer)}"

    @property
    def copied(self) -> bool:
        """Stored in one region, run from another: copied before the app uses it."""
        return self.loaded and self.load_region is not None


@dataclass(frozen=True)
class Assertion:
    """A placement fact checked at link time, rendered for both linkers.

    `ld` is a GNU ld expression over symbols and regions, `sct` an armlink
    ScatterAssert expression over execution regions; both say the same thing.
    """

    ld: str
    sct: str
    message: str


@dataclass(frozen=True)
class LoadRegion:
    """A scatter-file load region: the execution regions whose contents it stores."""

    name: str  # LR_KIT_<REGION>
    base: int  # the storing region's base
    size: int  # ... and size: armlink checks the load image fits
    sections: tuple[KitSection, ...]


@dataclass(frozen=True)
class LinkLayout:
    """Every linker fact of one plan; the templates print it and decide nothing."""

    board: str
    mode: MemoryMode
    accelerator: Accelerator | None  # None: a CPU-only program
    regions: tuple[LinkRegion, ...]
    code_region: str  # .text/.rodata (and the vector table unless boot_region differs)
    data_region: str  # .data/.bss
    data_load_region: str  # where .data's initial values are stored
    boot_region: str
    boot_address: int  # the vector table's address
    sections: tuple[KitSection, ...]  # every plan buffer section, in link order
    assertions: tuple[Assertion, ...]  # per buffer section: present, inside, aligned
    vectors_check: Assertion  # whole image only: the vector table where the board boots
    # the whole-image GNU ld script's output sections, (name, VMA region, LMA region):
    # what each region's unused-space symbols are computed from
    image_sections: tuple[tuple[str, str, str], ...]
    stack: KitSection | None
    heap: KitSection | None
    # [boot] code = "copy": the non-volatile region that stores the code, which runs from
    # code_region after the reset copy (None: the code runs where it is stored)
    code_load_region: str | None = None

    @property
    def code_store(self) -> str:
        """Where the code's bytes are stored: its load region (the scatter file's first)."""
        return self.code_load_region or self.code_region

    @property
    def code_sections(self) -> tuple[str, ...]:
        """The output sections copied into RAM at reset with the code (none when in place)."""
        return CODE_SECTIONS if self.code_load_region else ()

    @property
    def last_exec(self) -> tuple[tuple[LinkRegion, str], ...]:
        """Per region, the scatter execution region placed last in it (overflow checks)."""
        last = {self.boot_region: "KIT_VECTORS", self.code_region: "KIT_CODE"}
        if self.code_load_region:
            last[self.code_load_region] = "KIT_BOOT"  # the root region, after the vectors
        last[self.data_region] = "KIT_DATA_ZI"
        for s in self.sections:
            last[s.region] = s.exec_region
        return tuple((r, last[r.name]) for r in self.regions if r.name in last)

    def region(self, name: str) -> LinkRegion:
        return next(r for r in self.regions if r.name == name)

    @property
    def copied(self) -> tuple[KitSection, ...]:
        return tuple(s for s in self.sections if s.copied)

    @property
    def used_regions(self) -> tuple[LinkRegion, ...]:
        """The regions a kit section runs from or is stored in: what a team must map."""
        names = {s.region for s in self.sections} | {
            s.load_region for s in self.sections if s.load_region
        }
        return tuple(r for r in self.regions if r.name in names)

    def unused_start(self, region: str) -> str:
        """GNU ld expression: the first byte after everything placed in `region`."""
        ends = []
        for name, vma, lma in self.image_sections:
            if vma == region:
                ends.append(f"ADDR({name}) + SIZEOF({name})")
            if lma == region and lma != vma:
                ends.append(f"LOADADDR({name}) + SIZEOF({name})")
        expr = f"ORIGIN({region})"
        for end in ends:
            expr = f"MAX({expr}, {end})"
        return expr

    def unused_symbols(self, region: str) -> tuple[str, str]:
        return UNUSED_START.format(region=region), UNUSED_END.format(region=region)

    @property
    def uninitialised(self) -> tuple[KitSection, ...]:
        return tuple(s for s in self.sections if not s.loaded)

    def _own_load_region(self, s: KitSection) -> bool:
        """Stored outside the code region, where a load region of its own can start: at
        its run address when it runs in place (which must then be a literal), else
        anywhere in the storing region."""
        if not s.loaded or (s.load_region or s.region) == self.code_store:
            return False
        return s.copied or s.sct_base.startswith("0x")

    def stored_in_code_load_region(self) -> tuple[KitSection, ...]:
        """Sections with contents the code's load region carries (scatter-loaded at reset)."""
        return tuple(s for s in self.sections if s.loaded and not self._own_load_region(s))

    def load_regions(self) -> tuple[LoadRegion, ...]:
        """Scatter load regions for the other sections with contents, one per storing
        region: those run in place first, the load region starting at the first one."""
        out: dict[str, list[KitSection]] = {}
        for s in sorted(self.sections, key=lambda s: s.copied):
            if self._own_load_region(s):
                out.setdefault(s.load_region or s.region, []).append(s)
        regions = []
        for name, secs in out.items():
            r = self.region(name)
            base = r.base if secs[0].copied else int(secs[0].sct_base, 16)
            regions.append(LoadRegion(f"LR_KIT_{cident(name)}", base, r.end - base, tuple(secs)))
        return tuple(regions)

    @property
    def accelerator_name(self) -> str:
        """As memory_plan.json spells it: "ethos-u55-128", or "none" (CPU only)."""
        return accelerator_text(self.accelerator)


def _exec_name(b: Buffer) -> str:
    return ARMLIB_REGIONS.get(b.role, f"KIT_{cident(b.name)}")


def link_layout(plan: MemoryPlan, boot_address: int | None = None) -> LinkLayout:
    """Every linker fact of `plan`; `boot_address` overrides where the vectors go."""
    board = plan.board
    code = plan.by_role(Role.CODE)[0]
    data = plan.by_role(Role.DATA)[0]
    code_load = code.load_region if code.load_region != code.region else None
    data_load = data.load_region or code_load or code.region
    boot_region, boot = _boot(board, code.region, boot_address)

    # Link order per region: the linker-sized code/data first (the vector table at the
    # start of the boot region), then the uninitialised buffers, then those with
    # contents, each group in plan order. Both backends follow this one order: the
    # scatter file must define an execution region before another's base refers to it.
    buffers = [b for b in plan.buffers if b.role not in (Role.CODE, Role.DATA) and b.section]
    # fixed slots (a .ptd's, plan.external) last in their region: what follows a section
    # with an address of its own in GNU ld starts after it
    slots = {
        p.buffer: p.slot_address for p in plan.options.external_data if p.slot_address is not None
    }
    ordered = [b for b in buffers if not b.initialized] + [b for b in buffers if b.initialized]
    ordered = [b for b in ordered if b.name not in slots] + [b for b in ordered if b.name in slots]
    last: dict[str, str] = {code.region: "KIT_CODE"}
    last[data.region] = "KIT_DATA_ZI"
    if boot_region not in last:
        last[boot_region] = "KIT_VECTORS"
    if code_load is not None:
        last[code_load] = "KIT_BOOT"  # the scatter file's root region (armclang.sct.j2)
    # Where the next kit section of a region starts, while only kit sections (whose sizes
    # the plan knows) precede it there: the scatter file then gets a literal address,
    # which a load region needs as its base.
    known: dict[str, int] = {}
    sections: list[KitSection] = []
    for b in ordered:
        exec_name = _exec_name(b)
        align = max(b.align, 8)
        prev = last.get(b.region)
        at = board.region(b.region).base if prev is None else known.get(b.region)
        if b.name in slots:
            at = slots[b.name]
        if at is not None:
            at = align_up(at, align)
            known[b.region] = at + b.size
            base = f"0x{at:08X}"
        else:
            base = f"AlignExpr(ImageLimit({prev}), {align})"
        last[b.region] = exec_name
        load = b.load_region if b.load_region and b.load_region != b.region else None
        sections.append(
            KitSection(
                name=b.section,
                buffer=b.name,
                role=b.role,
                symbol=b.symbol,
                region=b.region,
                load_region=load if b.initialized else None,
                align=b.align,
                size=b.size,
                loaded=b.initialized,
                exec_region=exec_name,
                sct_base=base,
                why=b.why,
                address=slots.get(b.name),
            )
        )

    assertions: list[Assertion] = []
    for s in sections:
        assertions.extend(_placement(s, board.region(s.region)))

    image: list[tuple[str, str, str]] = [(VECTORS, boot_region, boot_region)]
    if code_load is not None:
        image.append((BOOT_TEXT, code_load, code_load))
    code_sections = (".text", ".ARM.extab", ".ARM.exidx", ".init_array")
    image += [(n, code.region, code_load or code.region) for n in code_sections]
    image += [(".data", data.region, data_load), (".bss", data.region, data.region)]
    image += [(s.name, s.region, s.load_region or s.region) for s in sections]

    def role(r: Role) -> KitSection | None:
        return next((s for s in sections if s.role == r), None)

    return LinkLayout(
        board=board.name,
        mode=plan.mode,
        accelerator=plan.accelerator,
        regions=tuple(
            LinkRegion(r.name, r.base, r.size, memory_attributes(r), r.kind.value, r.npu)
            for r in board.regions
        ),
        code_region=code.region,
        data_region=data.region,
        data_load_region=data_load,
        boot_region=boot_region,
        boot_address=boot,
        sections=tuple(sections),
        assertions=tuple(assertions),
        vectors_check=_vectors_assertion(boot, boot_region),
        image_sections=tuple(image),
        stack=role(Role.STACK),
        heap=role(Role.HEAP),
        code_load_region=code_load,
    )


def _boot(board: Board, code_region: str, boot_address: int | None) -> tuple[str, int]:
    """Where the vector table goes: the board's [boot] (VTOR at reset), else the start
    of the code region (a schema-1 board)."""
    address = boot_address
    if address is None and board.boot is not None:
        address = board.boot.vector_address
    if address is None:
        return code_region, board.region(code_region).base
    region = board.region_at(address)
    if region is None:  # the board loader refuses this; keep the layout total anyway
        return code_region, board.region(code_region).base
    return region.name, address


def _vectors_assertion(address: int, region: str) -> Assertion:
    return Assertion(
        ld=f"SIZEOF({VECTORS}) > 0 && ADDR({VECTORS}) == 0x{address:08X}",
        sct=f"ImageLength(KIT_VECTORS) > 0 && ImageBase(KIT_VECTORS) == 0x{address:08X}",
        message=f"kit: no vector table ({VECTORS}) at 0x{address:08X} in {region}, "
        "where the board boots from",
    )


def _placement(s: KitSection, r: MemoryRegion) -> tuple[Assertion, ...]:
    """The section holds its buffer (must place), inside its region, aligned."""
    end = f"0x{r.end:08X}"
    base = f"0x{r.base:08X}"
    e = s.exec_region
    return (
        Assertion(
            ld=f"SIZEOF({s.name}) >= {s.size}",
            sct=f"ImageLength({e}) >= {s.size}",
            message=f"kit: {s.buffer} ({s.size} bytes) is missing from section {s.name}: "
            "link the generated kit_buffers.c / kit_network.S",
        ),
        Assertion(
            ld=f"ADDR({s.name}) >= {base} && ADDR({s.name}) + {s.size} <= {end}",
            sct=f"ImageBase({e}) >= {base} && ImageBase({e}) + {s.size} <= {end}",
            message=f"kit: {s.buffer} ({s.symbol}, {s.size} bytes) is not inside {r.name} "
            f"[{base}, {end}) where the plan puts it",
        ),
        Assertion(
            ld=f"ADDR({s.name}) % {s.align} == 0",
            sct=f"ImageBase({e}) % {s.align} == 0",
            message=f"kit: {s.buffer} ({s.symbol}) is not {s.align}-byte aligned",
        ),
    )
