"""Hostile inputs, second round (issue 20): names with a trailing newline, board values
that reach the compiler or CMake, and plan files that name a program to run.

Every name is checked as a whole string (`fullmatch`/`\\Z`), so `name\\n` is refused
wherever a name is read: a board file (`boards`, `gen`) and a plan read back
(`build --app selftest` regenerates from memory_plan.json). A plan's board data is
checked by the board file's rules, and an FVP named by data is a name on PATH, never a
path: `/bin/touch` in `board_data.fvp.models` is refused before anything runs.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from hostile import assert_refused, parse_args, run_kit
from projects import copy_with_plan, make_project
from test_hostile_boards import _port, _sub, _table_line, _write

# name -> (edit of board.toml, words the error line must hold)
BOARD_REFUSED: dict[str, tuple[Callable[[str], str], tuple[str, ...]]] = {
    "board name newline": (_sub('name = "corstone-300"', 'name = "corstone-300\\n"'), ("name",)),
    "region name newline": (_sub('name = "ITCM"', 'name = "ITCM\\n"'), ("name",)),
    "qemu machine newline": (
        _sub('machine = "mps3-an547"', 'machine = "mps3-an547\\n"'),
        ("machine",),
    ),
    "region names differ in case": (
        _sub('name = "BRAM"', 'name = "itcm"'),
        ("differ only in case",),
    ),
    "flag auto-profile": (_table_line("cpu.flags", 'gcc = ["-fauto-profile"]'), ("gcc[0]",)),
    "flag branch-probabilities": (
        _table_line("cpu.flags", 'gcc = ["-fbranch-probabilities"]'),
        ("gcc[0]",),
    ),
    "flag dump": (_table_line("cpu.flags", 'gcc = ["-fdump-tree-all"]'), ("gcc[0]",)),
    "flag list empty": (_table_line("cpu.flags", "gcc = []"), ("gcc",)),
    "port file with ;": (_port('sources = ["a;b.c"]'), ("port.sources[0]",)),
}


@pytest.mark.parametrize("case", sorted(BOARD_REFUSED))
def test_hostile_board_value_is_refused(
    case: str, data_pte_u55_shared: Path, tmp_path: Path
) -> None:
    edit, words = BOARD_REFUSED[case]
    board = _write(tmp_path, edit)
    if case == "port file with ;":
        (board.parent / "a;b.c").write_text("int x;\n")
    assert_refused(run_kit("boards", board), *words)
    out = tmp_path / "fw"
    assert_refused(
        run_kit("gen", "--pte", data_pte_u55_shared, "--board", board, "-o", out), *words,
        absent=[out],
    )  # fmt: skip


def test_board_folder_with_list_separator(data_pte_u55_shared: Path, tmp_path: Path) -> None:
    board = _write(tmp_path, lambda t: t)
    folder = board.parent.rename(tmp_path / "my;board")
    out = tmp_path / "fw"
    assert_refused(
        run_kit("gen", "--pte", data_pte_u55_shared, "--board", folder / "board.toml", "-o", out),
        "list separator",
        absent=[out],
    )


def _plan_edits() -> dict[str, tuple[Callable[[dict], None], tuple[str, ...]]]:
    def fvp(d: dict) -> None:
        models = d["board_data"]["fvp"]["models"]
        for k in models:
            models[k] = "/bin/touch"

    def name(d: dict) -> None:
        d["board_data"]["name"] += "\n"

    def region(d: dict) -> None:
        d["board_data"]["regions"][0]["name"] += "\n"

    def machine(d: dict) -> None:
        d["board_data"]["qemu"]["machine"] += "\n"

    def flags(d: dict) -> None:
        d["board_data"]["cpu"]["flags"] = {"gcc": ["-fprofile-use"]}

    return {
        "fvp executable path": (fvp, ("fvp.models",)),
        "board name newline": (name, ("name",)),
        "region name newline": (region, ("region[0].name",)),
        "qemu machine newline": (machine, ("qemu.machine",)),
        "flag reads files": (flags, ("cpu.flags.gcc[0]",)),
    }


PLAN_REFUSED = _plan_edits()


@pytest.fixture(scope="module")
def project(data_pte_u55_shared: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("plan") / "fw"
    make_project(data_pte_u55_shared, out, board="cs300")
    return out


@pytest.mark.parametrize("case", sorted(PLAN_REFUSED))
def test_hostile_plan_board_data_is_refused(case: str, project: Path, tmp_path: Path) -> None:
    edit, words = PLAN_REFUSED[case]

    def edited(text: str) -> str:
        data = json.loads(text)
        edit(data)
        return json.dumps(data)

    copy = tmp_path / "fw"
    plan = copy_with_plan(project, copy, edited)
    before = sorted(p.name for p in copy.iterdir())
    line = assert_refused(run_kit("build", copy, "--app", "selftest"), "board_data", *words)
    assert str(plan) in line
    assert sorted(p.name for p in copy.iterdir()) == before  # nothing built, nothing run


def test_new_board_name_with_a_newline(tmp_path: Path) -> None:
    out = tmp_path / "new"
    assert_refused(
        run_kit("new-board", "myboard\n", "--from", "cs300", "-o", out), "myboard", absent=[out]
    )


# a tag given twice, or a slot of no bytes: each flag is refused before the pte is read
# (before: a repeated tag silently took the last value; a SIZE of 0 was blamed on the
# board, "not inside one region")
EXTERNAL_DATA_REFUSED: dict[str, tuple[tuple[str, ...], str]] = {
    "place-data tag twice": (
        ("--place-data", "weight_data=SRAM", "--place-data", "weight_data=DDR"),
        "given twice",
    ),
    "ptd-slot tag twice": (
        (
            "--ptd-slot",
            "weight_data=0x38400000:64KiB",
            "--ptd-slot",
            "weight_data=0x38500000:64KiB",
        ),
        "given twice",
    ),
    "ptd-slot size 0": (("--ptd-slot", "weight_data=0x38400000:0"), "above 0"),
    "ptd-slot size negative": (("--ptd-slot", "weight_data=0x38400000:-5"), "TAG=ADDRESS:SIZE"),
    "ptd-slot 5000 digits": (("--ptd-slot", f"weight_data={'9' * 5000}:16"), "TAG=ADDRESS:SIZE"),
    "place-data tag newline": (("--place-data", "weight_data\n=SRAM"), "TAG=REGION"),
}


@pytest.mark.parametrize("case", sorted(EXTERNAL_DATA_REFUSED))
def test_external_data_flags_refused(case: str, data_pte_two_io: Path, tmp_path: Path) -> None:
    flags, needle = EXTERNAL_DATA_REFUSED[case]
    out = tmp_path / "fw"
    result = run_kit("gen", "--pte", data_pte_two_io, "-o", out, *flags)
    assert_refused(result, needle, absent=[out])


# --probe KIND:HOST:PORT: the host reaches GDB's `target extended-remote`, which also takes
# `|command` (run by the shell) and a device path; only a host name or an IP address is
# taken (before: `jlink:|cmd:2331` reached GDB, a 5,000-digit port was int()'s ValueError)
PROBES_REFUSED = {
    "pipe": ("jlink:|touch${IFS}x:2331", "host name or an IP"),
    "option": ("jlink:-oProxyCommand=x:2331", "host name or an IP"),
    "path": ("openocd:/dev/ttyACM0:3333", "host name or an IP"),
    "semicolon": ("pyocd:a;b:3333", "host name or an IP"),
    "newline": ("jlink:host\n:2331", "space"),
    "port 0": ("jlink:localhost:0", "port"),
    "port 70000": ("jlink:localhost:70000", "port"),
    "port 5000 digits": ("jlink:localhost:" + "9" * 5000, "port"),
}


@pytest.mark.parametrize("case", sorted(PROBES_REFUSED))
def test_probe_address_refused(case: str) -> None:
    probe, needle = PROBES_REFUSED[case]
    assert_refused(parse_args("run", "x.elf", "--probe", probe), needle)


def test_probe_pipe_host_runs_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    elf = tmp_path / "x.elf"
    elf.write_bytes(b"\x7fELF")
    result = run_kit("run", elf, "--probe", f"jlink:|touch {marker}:2331", cwd=tmp_path)
    assert_refused(result, "--probe")
    result = run_kit("run", elf, "--probe", f"jlink:|touch${{IFS}}{marker}:2331", cwd=tmp_path)
    assert_refused(result, "host name or an IP")
    assert not marker.exists() and not list(tmp_path.glob("ran*"))


def test_probe_hosts_taken() -> None:
    for probe in ("openocd:board.local:3333", "qemu:127.0.0.1:1234", "openocd:[::1]:3333"):
        assert parse_args("run", "x.elf", "--probe", probe).returncode == 0, probe
