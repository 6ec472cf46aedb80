"""Hostile inputs, class "output folders": -o under a regular file, `generated/` (or a
generated file) replaced by a symbolic link, with and without --force, and the
temporary folder on SIGTERM, SIGHUP and SIGINT.

On the old code: -o under a file was an internal error; a symlinked `generated/`
was read through and then an internal error (with --force); SIGTERM and SIGHUP
killed the process with its `.fw.ethosu-kit-*` temporary folder left behind.
"""

from __future__ import annotations

import hashlib
import signal
import sys
from pathlib import Path

import pytest

from ethosu_kit import cli
from hostile import assert_refused, run_kit
from projects import gen_argv


def _tree(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def test_output_under_a_regular_file(data_pte_u55_shared: Path, tmp_path: Path) -> None:
    afile = tmp_path / "notes.txt"
    afile.write_text("mine\n")
    for out in (afile / "fw", afile / "deeper" / "fw"):
        line = assert_refused(run_kit(*gen_argv(data_pte_u55_shared, out)), "is a file", str(afile))
        assert str(out) in line
    assert afile.read_text() == "mine\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


@pytest.mark.parametrize("what", ["generated", "generated/linker.ld", "generated_copy"])
def test_symlink_in_the_project_is_never_written_through(
    what: str, data_pte_u55_shared: Path, tmp_path: Path
) -> None:
    out = tmp_path / "fw"
    assert cli.main(["gen", "--pte", str(data_pte_u55_shared), "-o", str(out), "-q"]) == 0
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("outside the project\n")
    if what == "generated":
        # the user's own folder outside the project, linked in place of generated/
        (outside / "linker.ld").write_text("my linker script\n")
        (out / "generated").rename(tmp_path / "old-generated")
        (out / "generated").symlink_to(outside, target_is_directory=True)
    elif what == "generated/linker.ld":
        (out / "generated" / "linker.ld").unlink()
        (out / "generated" / "linker.ld").symlink_to(outside / "keep.txt")
    else:  # a link the user added beside the kit's files: theirs, kept as it is
        (out / "generated_copy").symlink_to(outside, target_is_directory=True)
    before = _tree(outside)

    refused = run_kit(*gen_argv(data_pte_u55_shared, out))
    if what == "generated_copy":
        assert refused.returncode == 0, refused
        assert (out / "generated_copy").is_symlink()
    else:
        assert_refused(refused, "symbolic link", what)
        forced = run_kit(*gen_argv(data_pte_u55_shared, out, force=True))
        assert forced.returncode == 0, forced
        assert not (out / what).is_symlink()
        assert (out / "generated" / "linker.ld").is_file()
        assert not (out / "generated" / "linker.ld").is_symlink()
    assert _tree(outside) == before, "a file outside the project changed"
    assert sorted(p.name for p in outside.iterdir()) == sorted(before)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".fw.")]


_SIGNAL_ON_WRITE = """
import os, pathlib, signal, sys
real = pathlib.Path.write_bytes
def write_bytes(self, data):
    n = real(self, data)
    if ".ethosu-kit-" in str(self):  # inside the temporary folder: the signal arrives now
        os.kill(os.getpid(), signal.{sig})
    return n
pathlib.Path.write_bytes = write_bytes
from ethosu_kit import cli
sys.exit(cli.main(sys.argv[1:]))
"""


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGHUP", "SIGINT"])
@pytest.mark.parametrize("existing", [False, True], ids=["new", "regenerate"])
def test_signal_during_generation_leaves_no_temporary_folder(
    sig: str, existing: bool, data_pte_u55_shared: Path, pte_half_mb: Path, tmp_path: Path
) -> None:
    import subprocess

    out = tmp_path / "fw"
    if existing:
        assert cli.main(["gen", "--pte", str(pte_half_mb), "-o", str(out), "-q"]) == 0
    before = _tree(out) if existing else None
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            _SIGNAL_ON_WRITE.format(sig=sig),
            "gen",
            "--pte",
            str(data_pte_u55_shared),
            "-o",
            str(out),
            "-q",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    signum = getattr(signal, sig)
    assert proc.returncode == 128 + signum, proc
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".fw.")]
    if existing:
        assert _tree(out) == before, "the old project changed"
    else:
        assert not out.exists()


def test_other_writers_refuse_in_one_line(tmp_path: Path) -> None:
    """Commands that write one file (import-pack here): -o under a regular file or onto a
    folder is one error line, not an internal error; nothing is left beside it."""
    pdsc = Path(__file__).parent / "data" / "test_soc.pdsc"
    afile = tmp_path / "afile"
    afile.write_text("mine\n")
    folder = tmp_path / "folder"
    folder.mkdir()
    base = ["import-pack", pdsc, "--device", "TestSoC-E7", "--npu", "ethos-u55",
            "--npu-base", "0x40000000", "--npu-irq", "5"]  # fmt: skip
    assert_refused(run_kit(*base, "-o", afile / "board.toml"), str(afile))
    assert_refused(run_kit(*base, "-o", folder, "--force"), str(folder))
    assert afile.read_text() == "mine\n" and list(folder.iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile", "folder"]


def test_stdout_closed_by_its_reader_is_a_quiet_stop(data_pte_u55_shared: Path) -> None:
    """`ethosu-kit inspect m.pte | head -1`: the reader leaves before the kit has written
    everything; the kit stops like a Unix filter (exit 141, SIGPIPE), not with an
    "internal error: BrokenPipeError" (which it printed before)."""
    import os
    import subprocess

    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first byte
    try:
        done = subprocess.run(
            [sys.executable, "-m", "ethosu_kit", "inspect", str(data_pte_u55_shared)],
            stdout=write, stderr=subprocess.PIPE, text=True, timeout=60, check=False,
        )  # fmt: skip
    finally:
        os.close(write)
    assert done.returncode == 141, done.stderr
    assert done.stderr == "", done.stderr


def test_advise_html_destination_is_checked_before_compiling(tmp_path: Path) -> None:
    """A folder, or a path under a regular file, was refused only by the write after
    every Vela compile, in an error naming its temporary file."""
    (tmp_path / "afile").write_text("x")
    (tmp_path / "folder").mkdir()
    tosa = tmp_path / "never-read.tosa"
    for html, needle in (("folder", "is a folder"), ("afile/x.html", "not an existing folder")):
        result = run_kit("advise", tosa, "--html", tmp_path / html)
        assert_refused(result, "--html", needle)
    assert_refused(run_kit("advise", tosa, "--width", "0"), "--width")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile", "folder"]
