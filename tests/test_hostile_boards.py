"""Hostile inputs, class "board files": deeply nested TOML, values that would land in
generated CMake or C (CPU flags, names, descriptions, port paths), implausible NPU
and console addresses. Each through the real `boards` and `gen` commands: one
`error:` line naming the file and the key, no traceback, no output folder.

Where a hostile value is legal (a description with `*/` on one line), the project is
generated and proved safe: the C headers compile with -Werror and `cmake -P` runs
kit_board.cmake without running the injected command.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from ethosu_kit.core import paths
from hostile import assert_refused, run_kit
from test_hostile_injection import _check_project

MARK = "INJECTED_MARK"
INJECT = f")\\nexecute_process(COMMAND touch {MARK})\\n#"


def _board(tmp: Path) -> Path:
    folder = tmp / "myboard"
    shutil.copytree(paths.boards_dir() / "corstone-300", folder)
    return folder / "board.toml"


def _sub(old: str, new: str) -> Callable[[str], str]:
    def edit(text: str) -> str:
        assert old in text, old
        return text.replace(old, new, 1)

    return edit


def _append(extra: str) -> Callable[[str], str]:
    return lambda text: text + "\n" + extra + "\n"


def _table_line(table: str, line: str) -> Callable[[str], str]:
    """Add `line` right under `[table]` (the table appended when the file has none)."""

    def edit(text: str) -> str:
        head = f"[{table}]\n"
        if head in text:
            return text.replace(head, f"{head}{line}\n", 1)
        return f"{text}\n{head}{line}\n"

    return edit


def _port(body: str) -> Callable[[str], str]:
    """Replace the board's [port] table (if any) by one with `body`."""

    def edit(text: str) -> str:
        text = re.sub(r"^\[port\][^\n]*\n(?:(?!\[)[^\n]*\n)*", "", text, flags=re.M)
        return f"{text}\n[port]\n{body}\n"

    return edit


# name -> (edit of board.toml, words the error line must hold)
REFUSED: dict[str, tuple[Callable[[str], str], tuple[str, ...]]] = {
    "nested arrays": (_append("[glue]\ndeep = " + "[" * 50_000 + "]" * 50_000), ("nested",)),
    "nested tables": (_append("[glue]\ndeep = " + "{a=" * 5_000 + "1" + "}" * 5_000), ("nested",)),
    "flag injects cmake": (
        _table_line("cpu.flags", f'gcc = ["{INJECT}"]'),
        ("cpu.flags.gcc[0]",),
    ),
    "flag list separator": (
        _table_line("cpu.flags", 'gcc = ["-mcpu=cortex-m55;-fplugin=/tmp/evil.so"]'),
        ("cpu.flags.gcc[0]",),
    ),
    "flag plugin": (_table_line("cpu.flags", 'clang = ["-fplugin=/tmp/evil.so"]'), ("clang[0]",)),
    "flag linker": (_table_line("cpu.flags", 'gcc = ["-Wl,-T,/etc/passwd"]'), ("gcc[0]",)),
    "flag specs": (_table_line("cpu.flags", 'gcc = ["-specs=/tmp/evil.specs"]'), ("gcc[0]",)),
    "flag response file": (_table_line("cpu.flags", 'gcc = ["@/tmp/flags"]'), ("gcc[0]",)),
    "flag with space": (_table_line("cpu.flags", 'gcc = ["-mcpu=cortex-m55 -O0"]'), ("gcc[0]",)),
    "core injects": (_sub('core = "cortex-m55"', f'core = "cortex-m55{INJECT}"'), ("core",)),
    "name injects": (_sub('name = "corstone-300"', 'name = "cs\\"); #"'), ("name",)),
    "alias injects": (
        _sub('aliases = ["cs300", "default"]', 'aliases = ["cs300\\n#error x"]'),
        ("aliases",),
    ),
    "description two lines": (
        _sub('description = "', 'description = "*/\\n#error injected\\n'),
        ("description",),
    ),
    "description escape": (
        _sub('description = "', 'description = "\\u001b]0;x\\u0007'),
        ("description",),
    ),
    "region description": (
        _sub('description = "instruction TCM', 'description = "*/\\n#error x\\ninstruction TCM'),
        ("ITCM", "description"),
    ),
    "qemu machine injects": (
        _sub('machine = "mps3-an547"', 'machine = "mps3-an547 -s"'),
        ("machine",),
    ),
    "npu base beyond 32 bits": (_sub("base = 0x58102000", "base = 0x158102000"), ("npu.base",)),
    "npu base in DTCM": (_sub("base = 0x58102000", "base = 0x30000100"), ("npu.base", "DTCM")),
    "npu base in DDR": (_sub("base = 0x58102000", "base = 0x70000000"), ("npu.base", "DDR")),
    "npu base 0": (_sub("base = 0x58102000", "base = 0"), ("npu.base",)),
    "npu base unaligned": (_sub("base = 0x58102000", "base = 0x58102001"), ("npu.base",)),
    "npu base_ns in SRAM": (
        _sub("base_ns = 0x48102000", "base_ns = 0x31000000"),
        ("npu.base_ns", "SRAM"),
    ),
    "console base in SRAM": (
        _sub("base = 0x59303000", "base = 0x31000040"),
        ("console.base", "SRAM"),
    ),
    "console base 2^40": (_sub("base = 0x59303000", "base = 0x10000000000"), ("console.base",)),
    "cpu clock 2^40": (
        _sub("clock_hz = 25_000_000  #", "clock_hz = 0x10000000000  #"),
        ("cpu.clock_hz",),
    ),
    "console baud 2^33": (_sub("baud = 115200", "baud = 0x200000000"), ("console.baud",)),
    "axi limit 2^32": (
        _sub("ethos-u55 = [32, 16]", "ethos-u55 = [4294967296, 16]"),
        ("axi_limits",),
    ),
    "region named like a linker keyword": (
        _sub('name = "DDR"', 'name = "ORIGIN"'),
        ("region[", "keyword"),
    ),
    "port source absolute": (
        _port('sources = ["/etc/passwd"]\nhooks = ["board_init"]'),
        ("port.sources[0]",),
    ),
    "port source escapes": (
        _port('sources = ["../../corstone-300/board.toml"]\nhooks = ["board_init"]'),
        ("port.sources[0]",),
    ),
    "port include escapes": (_port('include_dirs = [".."]'), ("port.include_dirs[0]",)),
    "port cmake absolute": (_port('cmake = "/etc/hostname"'), ("port.cmake",)),
}


def _write(tmp: Path, edit: Callable[[str], str]) -> Path:
    board = _board(tmp)
    board.write_text(edit(board.read_text()))
    return board


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_hostile_board_is_refused(case: str, data_pte_u55_shared: Path, tmp_path: Path) -> None:
    edit, words = REFUSED[case]
    board = _write(tmp_path, edit)
    shown = run_kit("boards", board)
    line = assert_refused(shown, *words)
    assert str(board) in line, line
    out = tmp_path / "fw"
    assert_refused(
        run_kit("gen", "--pte", data_pte_u55_shared, "--board", board, "-o", out),
        *words,
        absent=[out],
    )
    assert not (tmp_path / MARK).exists()


def test_port_source_through_a_link_out_of_the_folder(
    data_pte_u55_shared: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.c"
    outside.write_text("int x;\n")
    board = _write(tmp_path, _port('sources = ["board.c"]\nhooks = ["board_init"]'))
    (board.parent / "board.c").symlink_to(outside)
    assert_refused(run_kit("boards", board), "port.sources[0]", "leads out")


def test_legal_but_odd_board_generates_a_safe_project(
    data_pte_u55_shared: Path, tmp_path: Path
) -> None:
    """One printable line with comment and CMake syntax in it is a legal description,
    and the board's own flags of known shapes are legal: the project stays safe."""
    edit = _sub('description = "', 'description = "*/ #error x ) execute_process( ${X} ; ')
    board = _write(tmp_path, edit)
    text = board.read_text()
    board.write_text(
        _table_line("cpu.flags", 'gcc = ["-mcpu=cortex-m55", "-mthumb", "-DKIT_X=1"]')(text)
    )
    assert run_kit("boards", board).returncode == 0
    fw = tmp_path / "fw"
    made = run_kit("gen", "--pte", data_pte_u55_shared, "--board", board, "-o", fw, "-q")
    assert made.returncode == 0, made
    _check_project(fw, tmp_path)
