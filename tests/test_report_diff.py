"""`ethosu-kit report --diff old.elf new.elf`: two images of one project built with
different stack sizes (the kit's own gen + build); the diff names the stack, its region
and the bytes, and a budget the new image breaks exits non-zero naming the region."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ethosu_kit.cli.app import main as kit_main
from ethosu_kit.firmware.build import build_project
from fw_helpers import need_cross_gcc
from projects import make_project

PTE = Path(__file__).resolve().parent / "data" / "pte" / "u55_shared.pte"
OLD_STACK, NEW_STACK = 16384, 24576


@pytest.fixture(scope="module")
def elfs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    need_cross_gcc()
    root = tmp_path_factory.mktemp("diff")
    out = []
    for stack in (OLD_STACK, NEW_STACK):
        project = root / f"stack{stack}"
        make_project(PTE, project, board="corstone-300", stack=stack)
        out.append(build_project(project, app="bringup", toolchain="gcc"))
    return out[0], out[1]


def test_diff_names_the_stack_and_bytes(
    elfs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    old, new = elfs
    assert kit_main(["report", "--diff", str(old), str(new)]) == 0
    text = capsys.readouterr().out
    grown = NEW_STACK - OLD_STACK
    assert f"buffer stack in DTCM: {OLD_STACK:,} -> {NEW_STACK:,} B (+{grown:,} B)" in text
    assert f"section .kit.stack in DTCM: {OLD_STACK:,} -> {NEW_STACK:,} B (+{grown:,} B)" in text
    assert f"(+{grown:,} B)" in next(
        line for line in text.splitlines() if line.startswith("region DTCM")
    )
    assert kit_main(["report", "--diff", str(old), str(new), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["changes"]
    stack = next(r for r in rows if r["what"] == "buffer" and r["name"] == "stack")
    assert stack["delta"] == grown and stack["region"] == "DTCM"


def test_budget_on_the_new_elf(
    elfs: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old, new = elfs
    assert kit_main(["report", str(old), "--json"]) == 0
    used = next(r for r in json.loads(capsys.readouterr().out)["regions"] if r["name"] == "DTCM")
    budget = tmp_path / "budget.toml"
    budget.write_text(f"[regions]\nDTCM = {used['elf_used']}\n")
    assert kit_main(["report", str(old), "--json", "--budget", str(budget)]) == 0
    capsys.readouterr()
    code = kit_main(["report", str(new), "--json", "--budget", str(budget)])
    err = capsys.readouterr().err
    assert code != 0
    assert f"region DTCM uses {used['elf_used'] + NEW_STACK - OLD_STACK:,} B" in err
    assert f"by {NEW_STACK - OLD_STACK:,} B" in err


def test_page_and_terminal_of_an_elf(
    elfs: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An ELF alone finds its plan; the page shows its sections, the largest symbols and
    check-elf's used bytes, and still names no URL."""
    _, new = elfs
    page = tmp_path / "fw.html"
    assert kit_main(["report", str(new), "--html", str(page), "--width", "80"]) == 0
    text = page.read_text()
    assert 'data-name=".kit.stack"' in text and 'data-source="elf"' in text
    assert "Largest symbols per region" in text and "kit_stack" in text
    assert "//" not in text.replace("<!--", "")
    assert kit_main(["report", str(new), "--width", "80"]) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 80
    assert ".kit.stack" in out
