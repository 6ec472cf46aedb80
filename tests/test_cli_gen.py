"""`gen-firmware` / `ethosu-kit gen` through the real CLI: bad inputs and good paths.

Every bad input must give a one-line `error: ...` (optionally a `hint: ...` line),
a non-zero exit code, no traceback, and no output folder.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ethosu_kit import cli
from ethosu_kit.core import paths
from projects import gen_argv, make_project

BOARD_300 = paths.boards_dir() / "corstone-300" / "board.toml"


def assert_refused(
    capsys: pytest.CaptureFixture[str], argv: list[str], out: Path, match: str
) -> str:
    code = cli.main(argv)
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert code != 0, captured
    assert code != 70, f"internal error instead of a user error: {captured.err}"
    assert lines and lines[0].startswith("error: "), captured.err
    assert len(lines) <= 2 and all(line.startswith("hint: ") for line in lines[1:]), captured.err
    assert "Traceback" not in captured.err
    assert re.search(match, lines[0]), lines[0]
    assert not out.exists(), f"{out} was created by a failed generation"
    assert not [p for p in out.parent.iterdir() if p.name.startswith(f".{out.name}.")]
    return lines[0]


def assert_damaged_copy_refused(
    capsys: pytest.CaptureFixture[str],
    good: Path,
    damage: Callable[[Any], Any],
    bad: Path,
    match: str,
    *,
    pte: Path | None = None,
) -> None:
    """gen given `bad`, a copy of `good` that `damage` changed: the .pte (its bytes), or with
    `pte` the board file (its text). Refused (assert_refused), the error line naming it."""
    if pte is None:
        bad.write_bytes(damage(good.read_bytes()))
    else:
        bad.write_text(damage(good.read_text()))
    out = bad.parent / "fw"
    argv = gen_argv(pte, out, board=bad, quiet=False) if pte else gen_argv(bad, out, quiet=False)
    line = assert_refused(capsys, argv, out, match)
    assert bad.name in line


# -- bad .pte files ------------------------------------------------------------------


def _truncated(pte: bytes) -> bytes:
    return pte[: len(pte) // 2]


def _wrong_magic(pte: bytes) -> bytes:
    return pte[:4] + b"XX99" + pte[8:]


BAD_PTES: dict[str, tuple[Callable[[bytes], bytes], str]] = {
    "empty": (lambda _: b"", r"empty|too short|truncated|0 bytes"),
    "random": (lambda _: bytes((i * 131 + 7) % 256 for i in range(4096)), r"."),
    "truncated": (_truncated, r"truncat|out of range|too short|corrupt|beyond|past"),
    "wrong_magic": (_wrong_magic, r"ET12|identifier|magic|not an ExecuTorch"),
}


@pytest.mark.parametrize("case", sorted(BAD_PTES))
def test_bad_pte_is_refused(
    case: str, data_pte_u55_shared: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    damage, match = BAD_PTES[case]
    assert_damaged_copy_refused(
        capsys, data_pte_u55_shared, damage, tmp_path / f"{case}.pte", match
    )


def test_missing_pte_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "fw"
    assert_refused(capsys, gen_argv(tmp_path / "nope.pte", out, quiet=False), out, r"nope\.pte")


def test_cpu_only_program_is_refused(
    data_pte_cpu_only: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "fw"
    assert_refused(
        capsys, gen_argv(data_pte_cpu_only, out, quiet=False), out, r"no Ethos-U delegate"
    )


# options a valid .pte cannot take: (the options, what the error line names)
BAD_OPTIONS: dict[str, tuple[tuple[str, ...], str]] = {
    "mode_mismatch": (("--mode", "Sram_Only"), r"Shared_Sram.*Sram_Only|Sram_Only.*Shared_Sram"),
    "u55_dedicated_sram": (("--mode", "Dedicated_Sram"), r"Dedicated_Sram.*(U55|u55)"),
    "unknown_mode": (("--mode", "Turbo"), r"Turbo"),
    "unknown_board": (("--board", "corstone-999"), r"corstone-999"),
}


@pytest.mark.parametrize("case", sorted(BAD_OPTIONS))
def test_bad_option_is_refused(
    case: str, data_pte_u55_shared: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    options, match = BAD_OPTIONS[case]
    out = tmp_path / "fw"
    assert_refused(capsys, gen_argv(data_pte_u55_shared, out, *options, quiet=False), out, match)


def _edit(text: str, old: str, new: str) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


def _drop_line(text: str, line: str) -> str:
    return _edit(text, line + "\n", "")


BAD_BOARDS: dict[str, tuple[Callable[[str], str], str]] = {
    # SRAM moved into DTCM
    "overlap": (lambda t: _edit(t, "base = 0x31000000", "base = 0x30040000"), r"overlap"),
    "missing_key": (lambda t: _drop_line(t, "irq = 56"), r"irq"),
    "negative_size": (lambda t: _edit(t, 'size = "2 MiB"', "size = -4096"), r"size"),
}


@pytest.mark.parametrize("case", sorted(BAD_BOARDS))
def test_malformed_board_is_refused(
    case: str, data_pte_u55_shared: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    damage, match = BAD_BOARDS[case]
    bad = tmp_path / f"{case}.toml"
    assert_damaged_copy_refused(capsys, BOARD_300, damage, bad, match, pte=data_pte_u55_shared)


def test_too_big_model_is_refused_by_the_fit_check(
    pte_too_big: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "fw"
    line = assert_refused(capsys, gen_argv(pte_too_big, out, quiet=False), out, r"SRAM")
    assert re.search(r"\d", line), "the fit error names the numbers"


def test_output_that_is_a_file_is_refused(
    data_pte_u55_shared: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "fw"
    out.write_text("not a folder")
    code = cli.main(gen_argv(data_pte_u55_shared, out, quiet=False))
    err = capsys.readouterr().err
    assert code != 0 and err.startswith("error: ") and "not a folder" in err
    assert out.read_text() == "not a folder"


# -- good paths ------------------------------------------------------------------------


def test_gen_prints_report_and_ends_with_the_output_path(
    data_pte_u55_shared: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "fw"
    make_project(data_pte_u55_shared, out, quiet=False)
    stdout = capsys.readouterr().out
    assert stdout.splitlines()[-1] == str(out)
    assert "SRAM" in stdout and "Shared_Sram" in stdout
    assert (out / ".ethosu-kit" / "manifest.json").is_file()
    assert (out / "generated" / "model.pte").read_bytes() == data_pte_u55_shared.read_bytes()


def test_cpu_only_program_with_allow_cpu_only(
    data_pte_cpu_only: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "fw"
    make_project(data_pte_cpu_only, out, allow_cpu_only=True)
    capsys.readouterr()
    config = (out / "generated" / "kit_model.h").read_text()
    assert "#define KIT_NUM_ETHOSU_DELEGATES 0" in config
    # nothing to drive on the NPU: the project must not ask for the driver checkout
    assert 'set(ETHOSU_KIT_NPU "none"' in (out / "CMakeLists.txt").read_text()


def test_sizes_from_the_command_line_reach_the_headers(
    data_pte_u85_dedicated: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "fw"
    make_project(
        data_pte_u85_dedicated,
        out,
        board="cs320",
        fast_scratch="256KiB",
        stack="0x3000",
        heap="24K",
    )
    assert capsys.readouterr().out.strip() == str(out)
    config = (out / "generated" / "kit_memory_config.h").read_text()
    assert "#define KIT_FAST_SCRATCH_SIZE 262144u" in config
    assert "#define KIT_STACK_SIZE 12288u" in config
    assert "#define KIT_HEAP_SIZE 24576u" in config


def test_bad_size_argument_is_refused(
    data_pte_u55_shared: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "fw"
    with pytest.raises(SystemExit) as exc:
        cli.main(gen_argv(data_pte_u55_shared, out, stack="lots", quiet=False))
    assert exc.value.code != 0
    assert "lots" in capsys.readouterr().err
    assert not out.exists()


def test_edited_file_is_refused_then_forced(
    data_pte_u55_shared: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "fw"
    make_project(data_pte_u55_shared, out)
    header = out / "generated" / "kit_memory_config.h"
    original = header.read_bytes()
    header.write_bytes(original + b"/* my tweak */\n")
    (out / "app.c").write_text("int app;\n")
    code = cli.main(gen_argv(data_pte_u55_shared, out))
    err = capsys.readouterr().err
    assert code != 0
    assert err.splitlines()[0].startswith("error: ")
    assert "generated/kit_memory_config.h" in err.splitlines()[0]
    assert "--force" in err
    assert header.read_bytes() == original + b"/* my tweak */\n"
    make_project(data_pte_u55_shared, out, force=True)
    assert header.read_bytes() == original
    assert (out / "app.c").read_text() == "int app;\n"


def test_gen_firmware_console_script(data_pte_u55_shared: Path, tmp_path: Path) -> None:
    """The installed entry point, in a fresh process."""
    out = tmp_path / "fw"
    script = Path(sys.executable).parent / "gen-firmware"
    argv = [str(script)] if script.exists() else [sys.executable, "-m", "ethosu_kit", "gen"]
    env = {**os.environ, "COLUMNS": "120"}
    proc = subprocess.run(
        [*argv, "--board", "cs300", "--pte", str(data_pte_u55_shared), "-o", str(out)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == str(out)
    bad = subprocess.run(
        [*argv, "--pte", str(tmp_path / "missing.pte"), "-o", str(tmp_path / "fw2")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert bad.returncode != 0
    assert bad.stderr.startswith("error: ") and "Traceback" not in bad.stderr
    assert not (tmp_path / "fw2").exists()
