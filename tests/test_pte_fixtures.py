"""The lowered fixture models are real ExecuTorch programs with what their name promises."""

from __future__ import annotations

from pathlib import Path

import pytest


def test_fixture_is_a_pte(any_pte: Path) -> None:
    data = any_pte.read_bytes()
    assert data[4:8] == b"ET12", any_pte
    assert not list(any_pte.parent.glob("*.tmp")), "a half-written cache file was left behind"


@pytest.mark.parametrize(
    "name",
    [
        "pte_u55_shared",
        "pte_u55_sram_only",
        "pte_u85_dedicated",
        "pte_u85_shared",
        "pte_u65_dedicated",
        "pte_cpu_op",
        "pte_two_delegates",
        "pte_too_big",
        "pte_half_mb",
    ],
)
def test_delegated_fixtures_hold_a_vela_stream(name: str, request: pytest.FixtureRequest) -> None:
    path: Path = request.getfixturevalue(name)
    assert b"vela_bin_stream" in path.read_bytes(), path


def test_cpu_only_has_no_delegate(pte_cpu_only: Path) -> None:
    assert b"vela_bin_stream" not in pte_cpu_only.read_bytes()
