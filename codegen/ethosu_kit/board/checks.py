"""What a parsed board may hold, beyond its types: the checks against hostile data.

The loader types each key; these checks say whether a typed value is one a real
board can have, because the values land in generated C, CMake and linker scripts
and in the firmware's view of the address space:

- peripheral addresses (NPU, console, their non-secure aliases) are plausible: inside
  32 bits, 4-byte aligned, not 0, and not inside a memory region of the board (an
  NPU "at" the SRAM would have the firmware write registers into its own buffers);
- CPU flags are single tokens of a known shape (machine options, a target triple,
  a define): nothing that loads code into the compiler (`-fplugin=`), reads files
  (`-specs=`, `@file`), passes options to the linker (`-Wl,`) or starts a second
  list element in CMake (`;`);
- text (description, aliases, region descriptions, QEMU's stand-in note) is one
  printable line of bounded length;
- the board's own code ([port] sources, include folders, CMake file) stays inside
  the board's folder: relative, no `..` (`port_path_problem`; ports.py checks the
  files, and links that lead out, after parsing).

`check_board(board)` raises `BoardError` naming the file and the key.
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath
from typing import Any

from ethosu_kit.board.model import Board
from ethosu_kit.core.errors import BoardError

ADDRESS_LIMIT = 1 << 32
MAX_TEXT = 200
# The plain -f switches a board may pass (with or without "no-"): code generation and
# language switches only. An allowlist, because -f switches without a value can still
# make the compiler read files (-fauto-profile, -fbranch-probabilities, -fprofile-use)
# or write them (-fdump-*, -fstack-usage, -fsave-optimization-record).
_F_SWITCHES = frozenset({
    "function-sections", "data-sections", "short-enums", "short-wchar", "exceptions",
    "rtti", "builtin", "common", "omit-frame-pointer", "strict-aliasing", "unwind-tables",
    "asynchronous-unwind-tables", "stack-protector", "stack-protector-strong",
    "stack-protector-all", "pic", "pie", "lto", "inline-functions", "unroll-loops",
    "tree-vectorize", "signed-char", "unsigned-char", "math-errno", "fast-math",
    "finite-math-only", "single-precision-constant", "delete-null-pointer-checks",
    "zero-initialized-in-bss", "ident", "merge-constants", "lax-vector-conversions",
    "threadsafe-statics", "use-cxa-atexit", "optimize-sibling-calls", "strict-volatile-bitfields",
    "wrapv", "trapv", "plt", "inline", "gnu89-inline", "freestanding",
    "hosted", "asm", "jump-tables", "tree-loop-distribute-patterns", "ms-extensions",
})  # fmt: skip
# Names that land in generated CMake, C, linker scripts and command lines: whole strings
# (fullmatch), so "name\n" is refused everywhere. The loader, the runners' tables and
# new-board check with these same patterns.
BOARD_NAME_RE = re.compile(r"[a-z0-9][a-z0-9-]*")
IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
QEMU_NAME_RE = re.compile(r"[a-z0-9][a-z0-9.,-]*")
FVP_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
FVP_PARAM_RE = re.compile(r"[A-Za-z0-9_.\[\]-]+=[A-Za-z0-9_.:/+-]*")
MAX_NAME = 64
# One compiler flag: a machine option (-mcpu=cortex-m55, -mfloat-abi=hard, -mthumb,
# -mbranch-protection=pac-ret+leaf), a target (--target=arm-none-eabi), armlink's
# --cpu/--fpu, a define (-DNAME or -DNAME=value), or a plain -f switch without a value.
_FLAG_SHAPES = (
    re.compile(r"-m[a-z0-9][a-z0-9._+-]*(=[A-Za-z0-9._+-]+)?"),
    re.compile(r"--target=[a-z0-9][a-z0-9._-]*"),
    re.compile(r"--(cpu|fpu)=[A-Za-z0-9._+-]+"),
    re.compile(r"-D[A-Za-z_][A-Za-z0-9_]*(=[A-Za-z0-9._+-]*)?"),
    re.compile(r"-f(no-)?(" + "|".join(re.escape(s) for s in sorted(_F_SWITCHES)) + ")"),
)


# Region names are written as GNU ld MEMORY regions and scatter-file region names: a
# name that is a keyword of either language (or one of the Arm C library's region
# names) would change what the script means.
RESERVED_REGION_NAMES = frozenset({
    "ORIGIN", "LENGTH", "MEMORY", "SECTIONS", "ENTRY", "ALIGN", "NOLOAD", "AT", "KEEP",
    "PROVIDE", "PROVIDE_HIDDEN", "ASSERT", "INCLUDE", "INPUT", "GROUP", "OUTPUT", "ADDR",
    "SIZEOF", "LOADADDR", "DEFINED", "ABSOLUTE", "BLOCK", "FILL", "INSERT", "AFTER",
    "BEFORE", "COPY", "INFO", "OVERLAY", "DSECT", "REGION_ALIAS", "TARGET", "SEARCH_DIR",
    "STARTUP", "HIDDEN", "BYTE", "SHORT", "LONG", "QUAD", "SQUAD", "o", "l",
    "org", "len", "ARM_LIB_STACK", "ARM_LIB_HEAP", "ARM_LIB_STACKHEAP", "UNINIT",
    "ZEROPAD", "EMPTY", "FIXED", "PI", "RELOC", "ALIGNALL", "NOCOMPRESS",
    "ImageBase", "ImageLimit", "ImageLength", "AlignExpr", "ScatterAssert",
})  # fmt: skip


def fail(board: Board, key: str, problem: str, hint: str | None = None) -> BoardError:
    return BoardError(f"{board.source}: {key}: {problem}", hint)


def flag_problem(flag: str) -> str | None:
    """Why `flag` is not one CPU flag the kit passes on (None when it is)."""
    if not any(shape.fullmatch(flag) for shape in _FLAG_SHAPES):
        return (
            f"{flag[:60]!r} is not one CPU flag the kit passes on (-m..., --target=..., "
            "--cpu=/--fpu=..., -DNAME[=value] or a code-generation -f switch such as "
            "-ffunction-sections; nothing that makes the compiler read or write files)"
        )
    return None


def name_problem(value: str, shape: re.Pattern[str], what: str) -> str | None:
    """Why `value` is not a whole `what` name of `shape` (None when it is)."""
    if len(value) > MAX_NAME or not shape.fullmatch(value):
        return f"{value[:MAX_NAME]!r} is not {what}"
    return None


def cmake_path_problem(path: str) -> str | None:
    """A path written into a CMake list: ';' would split it into two elements."""
    if ";" in path:
        return f"{path[:80]!r} holds ';', which CMake reads as a list separator"
    return None


def text_problem(text: str) -> str | None:
    if len(text) > MAX_TEXT:
        return f"{len(text)} characters; at most {MAX_TEXT} on one line"
    if not text.isprintable():
        bad = next(c for c in text if not c.isprintable())
        return f"holds the control character {bad!r}: one printable line only"
    return None


def _address(board: Board, key: str, address: int | None) -> None:
    if address is None or key in board.todo:
        return  # absent, or a drafted board's "TODO" (refused where it is needed)
    if not 0 < address < ADDRESS_LIMIT - 4:
        raise fail(board, key, f"0x{address:x} is not a 32-bit peripheral address")
    if address % 4:
        raise fail(board, key, f"0x{address:08x} is not 4-byte aligned (registers are words)")
    region = board.region_at(address)
    if region is not None:
        raise fail(
            board,
            key,
            f"0x{address:08x} lies inside memory region {region.name!r} "
            f"0x{region.base:08x}..0x{region.end:08x}: a peripheral's registers are not memory",
            hint="give the peripheral's register base from the SoC's memory map",
        )


def table_name(board: Board) -> str:
    """The console's table as the file names it (schema 1 wrote [uart])."""
    return "uart" if getattr(board, "schema", 2) < 2 else "console"


def _console(board: Board) -> Any:
    return getattr(board, "console", None) or getattr(board, "uart", None)


def port_path_problem(rel: str) -> tuple[str, str | None] | None:
    """Why a [port] path may not be used, and a hint (None when it may): it must be one
    line of text, relative, without '..' (ports.check_port_files adds links that lead out)."""
    problem = text_problem(rel)
    if problem:
        return f"{rel[:60]!r} {problem}", None
    pure = PurePosixPath(rel)
    if pure.is_absolute() or Path(rel).is_absolute() or ".." in pure.parts or "\\" in rel:
        return (
            f"{rel!r} must be a path inside the board's folder (relative, no '..')",
            "copy the file into the board's folder, or include it from the board's CMake file",
        )
    return None


def check_board(board: Board) -> None:
    """Refuse implausible addresses, unsafe flags and text ([port] paths: ports.py)."""
    npu = board.npu
    _address(board, "npu.base", npu.base)
    _address(board, "npu.base_ns", npu.base_ns)
    console = _console(board)
    if console is not None and getattr(console, "mmio", console.kind != "none"):
        table = table_name(board)
        _address(board, f"{table}.base", console.base)
        _address(board, f"{table}.base_ns", console.base_ns)
        for key in ("base", "base_ns"):
            if getattr(console, key) is not None and getattr(console, key) in (
                npu.base,
                npu.base_ns,
            ):
                raise fail(board, f"{table}.{key}", "the same address as the NPU's registers")
    # numbers written into C as `unsigned` constants: a 32-bit target's range
    numbers = [("cpu.clock_hz", board.cpu.clock_hz)]
    if console is not None:
        numbers += [(f"{table_name(board)}.clock_hz", console.clock_hz),
                    (f"{table_name(board)}.baud", console.baud)]  # fmt: skip
    numbers += [(f"npu.axi_limits.{kind}", max(pair)) for kind, pair in npu.axi_limits.items()]
    for key, value in numbers:
        if value >= ADDRESS_LIMIT:
            raise fail(board, key, f"{value} does not fit the 32 bits the firmware holds it in")
    for tc, flags in board.cpu.flags.items():
        for i, flag in enumerate(flags):
            problem = flag_problem(flag)
            if problem:
                raise fail(board, f"cpu.flags.{tc}[{i}]", problem)
    texts: list[tuple[str, str]] = [("description", board.description)]
    texts += [(f"region[{i}] {r.name!r}.description", r.description)
              for i, r in enumerate(board.regions)]  # fmt: skip
    qemu = getattr(board, "qemu", None)
    if qemu is not None:
        texts.append(("qemu.stand_in", qemu.stand_in))
    for key, text in texts:
        problem = text_problem(text)
        if problem:
            raise fail(board, key, problem)
    for i, r in enumerate(board.regions):
        if r.npu != (r.port != "none"):  # a plan read back: the loader's rule
            raise fail(board, f"region[{i}].npu_port", f'"{r.port}" contradicts npu = {r.npu}')
        if r.name in RESERVED_REGION_NAMES or r.name.upper() in RESERVED_REGION_NAMES:
            raise fail(
                board,
                f"region[{i}].name",
                f"{r.name!r} is a keyword of the linker script or scatter file languages",
                hint="name the region after the memory (SRAM, FLASH, DDR, ...)",
            )
    _names(board)
    for i, alias in enumerate(board.aliases):
        if not BOARD_NAME_RE.fullmatch(alias):
            raise fail(board, f"aliases[{i}]", f"{alias[:40]!r}: lower case, digits, '-'")


def _names(board: Board) -> None:
    """Every name the board hands on has its whole-string shape, whether the board came
    from a board.toml or from a plan read back (memory_plan.json's board_data)."""
    checks: list[tuple[str, str, re.Pattern[str], str]] = [
        ("name", board.name, BOARD_NAME_RE, "a board name (lower case letters, digits, '-')")
    ]
    checks += [(f"region[{i}].name", r.name, IDENT_RE, "a C identifier (linker scripts use it)")
               for i, r in enumerate(board.regions)]  # fmt: skip
    qemu = getattr(board, "qemu", None)
    if qemu is not None:
        checks += [("qemu.machine", qemu.machine, QEMU_NAME_RE, "a QEMU machine name"),
                   ("qemu.cpu", qemu.cpu, QEMU_NAME_RE, "a QEMU cpu name")]  # fmt: skip
    fvp = getattr(board, "fvp", None)
    if fvp is not None:
        # an FVP is a program looked up on PATH by this name: never a path
        checks += [(f"fvp.models.{k}", v, FVP_NAME_RE, "an FVP name (looked up on PATH)")
                   for k, v in fvp.models.items()]  # fmt: skip
        checks += [(f"fvp.{k}", getattr(fvp, k), FVP_NAME_RE, "an FVP instance name")
                   for k in ("board", "cpu", "npu", "uart") if getattr(fvp, k)]  # fmt: skip
        checks += [(f"fvp.params[{i}]", p, FVP_PARAM_RE, "an FVP parameter 'instance.name=value'")
                   for i, p in enumerate(fvp.params)]  # fmt: skip
    for key, value, shape, what in checks:
        problem = name_problem(value, shape, what) if isinstance(value, str) else "not text"
        if problem:
            raise fail(board, key, problem)
    seen: dict[str, str] = {}
    for i, r in enumerate(board.regions):
        upper = r.name.upper()
        if upper in seen:
            raise fail(
                board,
                f"region[{i}].name",
                f"{r.name!r} and {seen[upper]!r} differ only in case: both are "
                f"KIT_REGION_{upper}_* in the generated C",
            )
        seen[upper] = r.name
    for tc, flags in board.cpu.flags.items():
        if not flags:
            raise fail(board, f"cpu.flags.{tc}", "an empty list: leave the key out instead")
    port = getattr(board, "port", None)
    if port is not None:
        problem = cmake_path_problem(port.dir)
        if problem:
            raise fail(board, "port", f"the board's folder {problem}",
                       hint="move the board to a folder whose path has no ';'")  # fmt: skip
        rels = [(f"sources[{i}]", rel) for i, rel in enumerate(port.sources)]
        rels += [(f"include_dirs[{i}]", rel) for i, rel in enumerate(port.include_dirs)]
        rels += [("cmake", port.cmake)] if port.cmake else []
        for key, rel in rels:
            refused = port_path_problem(rel)
            if refused:
                raise fail(board, f"port.{key}", *refused)
            problem = cmake_path_problem(rel)
            if problem:
                raise fail(board, f"port.{key}", problem, hint="rename the file without ';'")
