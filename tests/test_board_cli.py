"""`ethosu-kit boards`: the list, one board's map, and a bad board file's one-line error."""

from __future__ import annotations

from pathlib import Path

import pytest

from ethosu_kit.cli.app import main

CUSTOM = Path(__file__).parent / "data" / "boards" / "custom_m55.toml"


def test_boards_lists_builtin(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["boards"]) == 0
    out = capsys.readouterr().out
    for word in ("corstone-300", "cs300", "cortex-m55", "ethos-u65", "corstone-320", "cs320",
                 "cortex-m85", "ethos-u85", "SRAM 2 MiB", "SRAM 4 MiB"):  # fmt: skip
        assert word in out, word


def test_boards_shows_memory_map(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["boards", "cs320"]) == 0
    out = capsys.readouterr().out
    assert "0x50004000, IRQ 16" in out
    for line in ("0x12000000", "0x31000000", "4 MiB", "Dedicated_Sram", "3 3 0 0 0 0 0 0"):
        assert line in out, line
    # no QEMU machine models a Corstone-320: mps3-an547 stands in, for images laid onto it
    assert "mps3-an547 -cpu cortex-m55 (stand-in: " in out and "gen --qemu-stand-in" in out


def test_boards_validates_custom_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["boards", str(CUSTOM)]) == 0
    assert "custom-m55" in capsys.readouterr().out


def test_bad_board_file_exits_nonzero_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(CUSTOM.read_text().replace('size = "8 MiB"', "size = -1"))
    assert main(["boards", str(bad)]) != 0
    err = capsys.readouterr().err.splitlines()
    assert err[0] == f"error: {bad}: region[3] 'PSRAM'.size: must be > 0, got -1"
    assert len(err) == 1


def test_unknown_board(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["boards", "nope"]) != 0
    err = capsys.readouterr().err
    assert "error: unknown board 'nope'" in err and "hint:" in err
