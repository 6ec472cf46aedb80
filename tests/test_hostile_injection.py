"""Hostile inputs, class "board files" (part: what lands in generated CMake and C):
values a user controls — the .pte's path, the board file's path, names inside the
.pte, strings of a board file — reach comments, C string literals and CMake
arguments of the generated project. None may end a comment, a literal or a CMake
argument early: each is validated for what it may be or escaped for the language
it lands in.

Proof on the generated files themselves: the C headers compile with
`-Werror` (an injected `#error` would stop them), `cmake -P` runs kit_board.cmake
without running an injected `execute_process`, and no injected text sits on a line
of its own outside a comment.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from hostile import assert_refused, run_kit

MARK = "INJECTED_MARK"
PAYLOAD = f"x*/\n#error {MARK}\nexecute_process(COMMAND touch {MARK})\n/*"


def _check_project(fw: Path, tmp: Path) -> None:
    gen = fw / "generated"
    for f in sorted(fw.rglob("*")):
        if not f.is_file() or f.suffix in (".pte", ".json"):
            continue
        for line in f.read_text(errors="replace").splitlines():
            stripped = line.strip()
            if MARK in line:
                assert stripped.startswith(("#", "*", "/*", ";", "//")) or '"' in line, (
                    f"{f.name}: injected text outside a comment or string: {line!r}"
                )
    gcc = shutil.which("gcc") or shutil.which("clang-19")
    if gcc:
        probe = tmp / "probe.c"
        probe.write_text(
            '#include "kit_board_config.h"\n#include "kit_model.h"\n'
            "const char *probe[] = {KIT_BOARD_NAME, KIT_CPU, KIT_METHOD_NAME};\n"
        )
        cc = subprocess.run(
            [gcc, "-fsyntax-only", "-Wall", "-Werror", f"-I{gen}", str(probe)],
            capture_output=True,
            text=True,
            check=False,
        )
        assert cc.returncode == 0, cc.stderr
    cmake = shutil.which("cmake")
    if cmake:
        run = subprocess.run(
            [cmake, "-P", str(gen / "kit_board.cmake")],
            capture_output=True,
            text=True,
            cwd=tmp,
            check=False,
        )
        assert run.returncode == 0, run.stderr
        assert not (tmp / MARK).exists(), "an execute_process from the data ran"


def test_pte_path_cannot_inject(data_pte_u55_shared: Path, tmp_path: Path) -> None:
    """The .pte's path is in every file's header comment."""
    folder = tmp_path / PAYLOAD  # "x*" / "\n#error ...\n/*": the path holds "*/"
    folder.mkdir(parents=True)
    pte = folder / "m.pte"
    shutil.copyfile(data_pte_u55_shared, pte)
    fw = tmp_path / "fw"
    result = run_kit("gen", "--pte", pte, "-o", fw, "-q")
    assert result.returncode == 0, result
    _check_project(fw, tmp_path)


def test_board_path_cannot_inject(data_pte_u55_shared: Path, tmp_path: Path) -> None:
    """The board file's folder is a path in kit_board.cmake and in header comments."""
    from ethosu_kit.core import paths

    folder = tmp_path / f'b";{PAYLOAD}$(x)'
    shutil.copytree(paths.boards_dir() / "corstone-300", folder)  # makes the parents
    fw = tmp_path / "fw"
    result = run_kit(
        "gen", "--pte", data_pte_u55_shared, "--board", folder / "board.toml", "-o", fw
    )
    if result.returncode != 0:  # refusing such a folder is fine too; writing is not
        assert_refused(result, absent=[fw])
        return
    _check_project(fw, tmp_path)
    text = (fw / "generated" / "kit_board.cmake").read_text()
    line = next(x for x in text.splitlines() if x.startswith("set(ETHOSU_KIT_BOARD_DIR"))
    assert line.endswith('")') and 'b\\"\\;x*' in line, line


def _same_length(data: bytes, old: bytes, new: bytes) -> bytes:
    assert len(old) == len(new) and data.count(old) == 1
    return data.replace(old, new)


@pytest.mark.parametrize(
    ("old", "new", "words"),
    [
        (b"forward", b"f*/\n#e\n", "method name"),
        (b"Shared_Sram", b"Shared_Sram", ""),  # the unedited file generates (control)
        (b"Shared_Sram", b"Shared_*/#e", "memory-mode"),
    ],
    ids=["method name", "control", "memory mode"],
)
def test_names_inside_the_pte_cannot_inject(
    old: bytes, new: bytes, words: str, data_pte_u55_shared: Path, tmp_path: Path
) -> None:
    pte = tmp_path / "m.pte"
    pte.write_bytes(_same_length(data_pte_u55_shared.read_bytes(), old, new))
    fw = tmp_path / "fw"
    result = run_kit("gen", "--pte", pte, "-o", fw, "-q")
    if not words:
        assert result.returncode == 0, result
        _check_project(fw, tmp_path)
        return
    assert_refused(result, words, absent=[fw])
    shown = run_kit("inspect", pte)
    assert_refused(shown, words)


def test_operator_name_cannot_inject(data_pte_u55_shared: Path, tmp_path: Path) -> None:
    """Operator names go to kit_operators.txt (one a line), C and CMake lists."""
    data = data_pte_u55_shared.read_bytes()
    old = b"quantized_decomposed"
    new = b'q")\nexecute_process(x'[: len(old)].ljust(len(old), b"x")
    pte = tmp_path / "m.pte"
    pte.write_bytes(data.replace(old, new))
    assert_refused(
        run_kit("gen", "--pte", pte, "-o", tmp_path / "fw"), "operator", absent=[tmp_path / "fw"]
    )


def test_markup_and_terminal_escapes_are_shown_as_text(
    data_pte_u55_shared: Path, tmp_path: Path
) -> None:
    """Names are printed through rich: `[/x]` is text, not markup (it was a MarkupError
    after the project had been written), and control characters are shown as '?'."""
    from ethosu_kit.core import paths

    pte = tmp_path / "[" / "b] \x1b[31mred.pte"  # "[/b]": a folder "[" holds the file
    pte.parent.mkdir()
    shutil.copyfile(data_pte_u55_shared, pte)
    made = run_kit("gen", "--pte", pte, "-o", tmp_path / "fw")
    assert made.returncode == 0 and "b] ?[31mred.pte" in made.stdout, made
    assert "\x1b[31m" not in made.stdout
    shown = run_kit("inspect", pte)
    assert shown.returncode == 0 and "\x1b[31m" not in shown.stdout, shown

    text = (paths.boards_dir() / "corstone-300" / "board.toml").read_text()
    board = tmp_path / "board.toml"
    board.write_text(text.replace('description = "', 'description = "[/x] [bold]', 1))
    listed = run_kit("boards", board)
    assert listed.returncode == 0 and "[/x] [bold]" in listed.stdout, listed


def test_tensor_sizes_that_no_32_bit_target_holds(
    data_pte_u55_shared: Path, tmp_path: Path
) -> None:
    """A method input of 3 x 2^31 x 2^31 int8 would be written as a C constant that
    does not compile (and a buffer no board has): the reader refuses the pte."""
    import struct

    data = data_pte_u55_shared.read_bytes()
    old = struct.pack("<5i", 4, 1, 3, 16, 16)
    pte = tmp_path / "huge.pte"
    pte.write_bytes(data.replace(old, struct.pack("<5i", 4, 1, 3, 0x7FFFFFFF, 0x7FFFFFFF)))
    for argv in (["inspect", pte], ["gen", "--pte", pte, "-o", tmp_path / "fw"]):
        assert_refused(run_kit(*argv), "input 0", "32-bit", absent=[tmp_path / "fw"])
