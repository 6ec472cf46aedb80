"""Hostile inputs, second round (issue 20): where gen writes.

gen never writes into the kit's own tree (its folder, a folder holding it, its source
folders); the temporary folders beside an output are named for their process
(`.<name>.ethosu-kit-<kind>-<pid>-*`) and a dead writer's are removed by the next
write; concurrent gens into one folder take turns and leave no temporary folder; a
negative seed is a usage error.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from ethosu_kit.core import paths
from hostile import assert_refused, run_kit


def test_gen_into_the_kit_itself_is_refused(data_pte_u55_shared: Path, tmp_path: Path) -> None:
    root = paths.kit_root()
    before = (root / "CMakeLists.txt").read_bytes() if (root / "CMakeLists.txt").exists() else None
    for out in (root, root.parent, root / "sdk", root / "boards" / "new-fw"):
        result = run_kit("gen", "--pte", data_pte_u55_shared, "-o", out, "--force")
        assert_refused(result, "the kit never writes there")
    assert not (root / "boards" / "new-fw").exists()
    after = (root / "CMakeLists.txt").read_bytes() if (root / "CMakeLists.txt").exists() else None
    assert before == after


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_a_killed_gens_temporary_folder_is_cleaned(
    data_pte_u55_shared: Path, tmp_path: Path
) -> None:
    out = tmp_path / "fw"
    pid = _dead_pid()
    stale = tmp_path / f".fw.ethosu-kit-new-{pid}-abc"
    (stale / "big").mkdir(parents=True)
    (stale / "big" / "blob").write_bytes(b"x" * 1024)
    mine = tmp_path / ".fw.notes"  # not the kit's: kept
    mine.mkdir()
    assert run_kit("gen", "--pte", data_pte_u55_shared, "-o", out, "-q").returncode == 0
    assert not stale.exists() and mine.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == [".fw.notes", "fw"]


def test_concurrent_gens_leave_no_temporary_folder(
    data_pte_u55_shared: Path, tmp_path: Path
) -> None:
    out = tmp_path / "fw"
    argv = [sys.executable, "-m", "ethosu_kit", "gen", "--pte", str(data_pte_u55_shared),
            "-o", str(out), "--force", "-q"]  # fmt: skip
    procs = [subprocess.Popen(argv, stderr=subprocess.PIPE) for _ in range(4)]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fw"]


def test_negative_seed_is_a_usage_error(data_pte_u55_shared: Path, tmp_path: Path) -> None:
    out = tmp_path / "fw"
    result = run_kit("gen", "--pte", data_pte_u55_shared, "-o", out, "--app", "selftest",
                     "--seed", "-1")  # fmt: skip
    assert_refused(result, "--seed", absent=[out])


def test_new_board_from_a_board_with_a_huge_header(tmp_path: Path) -> None:
    from test_hostile_boards import _port, _write

    board = _write(tmp_path, _port('include_dirs = ["inc"]'))
    (board.parent / "inc").mkdir()
    with (board.parent / "inc" / "big.h").open("wb") as f:
        f.truncate(1 << 30)  # sparse: 1 GiB that takes no disk
    out = tmp_path / "new"
    result = run_kit("new-board", "myboard2", "--from", board, "-o", out)
    assert_refused(result, "big.h", absent=[out])
