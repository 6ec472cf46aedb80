"""The fixture models (lowered, and checked in under tests/data/pte/) are real ExecuTorch
programs with what their name promises."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

DATA_PTE = Path(__file__).parent / "data" / "pte"


def test_checked_in_ptes_are_the_recorded_bytes() -> None:
    """Each tests/data/pte/*.pte is the file regenerate.py copied (SOURCES.json), and
    every recorded file is there: an edited or truncated fixture fails here."""
    sources = json.loads((DATA_PTE / "SOURCES.json").read_text())
    assert sorted(sources) == sorted(p.stem for p in DATA_PTE.glob("*.pte"))
    for name, source in sources.items():
        data = (DATA_PTE / f"{name}.pte").read_bytes()
        assert len(data) == source["bytes"] and len(data) <= 16 * 1024, name
        assert hashlib.sha256(data).hexdigest() == source["sha256"], name
        assert data[4:8] == b"ET12", name


def test_fixture_is_a_pte(any_pte: Path) -> None:
    data = any_pte.read_bytes()
    assert data[4:8] == b"ET12", any_pte
    assert not list(any_pte.parent.glob("*.tmp")), "a half-written cache file was left behind"


@pytest.mark.parametrize(
    "name",
    [
        "data_pte_u55_shared",
        "data_pte_u55_sram_only",
        "data_pte_u85_dedicated",
        "data_pte_u85_shared",
        "data_pte_u65_dedicated",
        "data_pte_cpu_op",
        "data_pte_two_delegates",
        pytest.param("pte_too_big", marks=pytest.mark.lowering),
        pytest.param("pte_half_mb", marks=pytest.mark.lowering),
    ],
)
def test_delegated_fixtures_hold_a_vela_stream(name: str, request: pytest.FixtureRequest) -> None:
    path: Path = request.getfixturevalue(name)
    assert b"vela_bin_stream" in path.read_bytes(), path


def test_cpu_only_has_no_delegate(data_pte_cpu_only: Path) -> None:
    assert b"vela_bin_stream" not in data_pte_cpu_only.read_bytes()
