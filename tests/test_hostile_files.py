"""Hostile inputs, class "reading files": a FIFO, a character device, a directory or a
gigantic file given where the kit reads a file (a .pte, a board, an input, a plan, an
ELF) is refused by its type or its size before it is read: no hang, no unbounded read.

Every case runs the real CLI in a child process with a timeout: on the old code a
FIFO blocked `open()` forever and /dev/zero was read until memory ran out.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from ethosu_kit import cli
from hostile import assert_refused, run_kit

# (name, make(tmp_path) -> the hostile path, the words the error line must hold)
Kind = tuple[str, Callable[[Path, int], Path], str]


def _fifo(tmp: Path, _limit: int) -> Path:
    path = tmp / "fifo"
    os.mkfifo(path)
    return path


def _directory(tmp: Path, _limit: int) -> Path:
    path = tmp / "folder.x"
    path.mkdir()
    (path / "board.toml").mkdir()  # `boards FOLDER` reads FOLDER/board.toml
    return path


def _giant(tmp: Path, limit: int) -> Path:
    path = tmp / "giant"
    with path.open("wb") as f:
        f.truncate(limit + 1)  # sparse: costs no disk, is larger than the limit
    return path


KINDS: list[Kind] = [
    ("fifo", _fifo, "FIFO"),
    ("dev-zero", lambda _t, _l: Path("/dev/zero"), "character device"),
    ("dev-urandom", lambda _t, _l: Path("/dev/urandom"), "character device"),
    ("directory", _directory, "directory"),
    ("giant", _giant, "ETHOSU_KIT_MAX_"),
]

GIB = 1 << 30


@pytest.fixture(scope="module")
def project(data_pte_u55_shared: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real generated project: its memory_plan.json is a good plan to pair with."""
    out = tmp_path_factory.mktemp("hostile-files") / "fw"
    assert cli.main(["gen", "--pte", str(data_pte_u55_shared), "-o", str(out), "-q"]) == 0
    return out


# role -> (limit of the default, argv given the hostile path, the good pte and project)
ROLES: dict[str, tuple[int, Callable[[Path, Path, Path, Path], list[str | Path]]]] = {
    "inspect pte": (2 * GIB, lambda bad, pte, fw, out: ["inspect", bad]),
    "gen pte": (2 * GIB, lambda bad, pte, fw, out: ["gen", "--pte", bad, "-o", out]),
    "simulate pte": (2 * GIB, lambda bad, pte, fw, out: ["simulate", bad, "-o", out]),
    "gen board": (
        1 << 20,
        lambda bad, pte, fw, out: ["gen", "--pte", pte, "--board", bad, "-o", out],
    ),
    "boards board": (1 << 20, lambda bad, pte, fw, out: ["boards", bad]),
    # advise's TOSA graph: a FIFO blocked forever, /dev/zero was read until the OOM kill
    "advise tosa": (2 * GIB, lambda bad, pte, fw, out: ["advise", bad, "--html", out]),
    # a .ptd has the .pte's limit; the error names it a .ptd (it said "not a .pte")
    "gen ptd": (2 * GIB, lambda bad, pte, fw, out: ["gen", "--pte", pte, "--ptd", bad, "-o", out]),
    "simulate ptd": (
        2 * GIB,
        lambda bad, pte, fw, out: ["simulate", pte, "--ptd", bad, "-o", out],
    ),
    "simulate input": (
        256 << 20,
        lambda bad, pte, fw, out: ["simulate", pte, "--inputs", bad, "-o", out],
    ),
    "gen vectors": (
        256 << 20,
        lambda bad, pte, fw, out: [
            "gen",
            "--pte",
            pte,
            "--app",
            "selftest",
            "--vectors",
            bad,
            "-o",
            out,
        ],
    ),
    "check-elf plan": (
        16 << 20,
        lambda bad, pte, fw, out: ["check-elf", fw / "x.elf", "--plan", bad],
    ),
    # --budget was read with the plan's limit and named "a memory plan" in its errors
    "report budget": (16 << 20, lambda bad, pte, fw, out: ["report", fw, "--budget", bad]),
    "check-elf elf": (
        GIB,
        lambda bad, pte, fw, out: ["check-elf", bad, "--plan", fw / "memory_plan.json"],
    ),
}


@pytest.mark.parametrize("role", sorted(ROLES))
@pytest.mark.parametrize("kind", KINDS, ids=[k[0] for k in KINDS])
def test_hostile_file_is_refused_before_it_is_read(
    kind: Kind, role: str, data_pte_u55_shared: Path, project: Path, tmp_path: Path
) -> None:
    name, make, words = kind
    limit, argv = ROLES[role]
    if role == "boards board" and name == "directory":
        words = "directory"  # FOLDER/board.toml is itself a folder
    if role == "advise tosa" and name == "directory":
        words = "no output"  # advise takes the folder ExecuTorch dumps into
    bad = make(tmp_path, limit)
    out = tmp_path / "out"
    if role.startswith("simulate"):
        out = tmp_path / "out.npz"
    result = run_kit(*argv(bad, data_pte_u55_shared, project, out), timeout=60)
    line = assert_refused(result, words, absent=[out])
    assert str(bad) in line or name == "directory", line
    if role.endswith("ptd") and name != "giant":
        assert "not a .ptd" in line, line
    if role == "report budget":
        assert "a budget file" in line, line


def test_the_limit_is_named_and_can_be_raised(data_pte_u55_shared: Path, tmp_path: Path) -> None:
    """A limit lower than the file is refused by name; the same file passes with it raised."""
    size = data_pte_u55_shared.stat().st_size
    small = run_kit("inspect", data_pte_u55_shared, env={"ETHOSU_KIT_MAX_PTE_BYTES": str(size - 1)})
    line = assert_refused(small, "ETHOSU_KIT_MAX_PTE_BYTES", f"{size} bytes")
    assert str(data_pte_u55_shared) in line
    assert (
        run_kit(
            "inspect", data_pte_u55_shared, env={"ETHOSU_KIT_MAX_PTE_BYTES": str(size)}
        ).returncode
        == 0
    )
    bad = run_kit("inspect", data_pte_u55_shared, env={"ETHOSU_KIT_MAX_PTE_BYTES": "lots"})
    assert_refused(bad, "ETHOSU_KIT_MAX_PTE_BYTES")
