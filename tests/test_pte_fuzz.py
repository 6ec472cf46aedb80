"""Fuzzing the reader: whatever the bytes, only PteError (or a result) comes out.

`parse_pte` / `vela_streams` are the reader without `read_pte`'s last-resort net
(which turns a stray IndexError into a PteError), so a missing bounds check fails
here instead of hiding behind that net.
"""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ethosu_kit.core.errors import PteError
from ethosu_kit.pte import parse_pte, vela_streams

FUZZ = settings(
    max_examples=400,
    deadline=None,
    database=None,
    derandomize=True,  # the same inputs in CI and here: a failure reproduces
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def _only_pte_error(data: bytes) -> None:
    for parse in (parse_pte, vela_streams):
        try:
            parse(data, "fuzz.pte")
        except PteError as exc:
            assert "\n" not in str(exc)


@FUZZ
@given(st.binary(max_size=2048))
def test_random_bytes(data: bytes) -> None:
    _only_pte_error(data)


@FUZZ
@given(st.binary(max_size=2048), st.integers(0, 1 << 16), st.integers(0, 1 << 16))
def test_random_bytes_behind_a_valid_header(body: bytes, program: int, base: int) -> None:
    """Get past the identifier and extended-header checks into the flatbuffer walk."""
    header = struct.pack("<I4s4sIQQQ", 8, b"ET12", b"eh00", 32, program, base, 0)
    _only_pte_error(header + body)
    _only_pte_error(struct.pack("<I4s", 8 + len(body) // 2, b"ET12") + body)


def _fixture_bytes(request: pytest.FixtureRequest, name: str) -> bytes:
    path: Path = request.getfixturevalue(name)
    return path.read_bytes()


@pytest.mark.parametrize("name", ["data_pte_u55_shared", "data_pte_cpu_only", "data_pte_cpu_op"])
def test_every_truncation(name: str, request: pytest.FixtureRequest) -> None:
    data = _fixture_bytes(request, name)
    for cut in range(len(data)):  # the whole file, stride 1: these are small
        with pytest.raises(PteError):
            parse_pte(data[:cut], "cut.pte")
        with pytest.raises(PteError):
            vela_streams(data[:cut], "cut.pte")
    parse_pte(data, "whole.pte")


def test_truncations_of_the_half_megabyte_model(pte_half_mb: Path) -> None:
    data = pte_half_mb.read_bytes()
    for cut in [*range(0, 4096), *range(4096, len(data), 1009)]:
        with pytest.raises(PteError):
            parse_pte(data[:cut], "cut.pte")


@pytest.mark.parametrize(
    "name", ["data_pte_u55_shared", "data_pte_u85_dedicated", "data_pte_cpu_only"]
)
def test_bit_flips(name: str, request: pytest.FixtureRequest) -> None:
    data = _fixture_bytes(request, name)

    @FUZZ
    @given(st.lists(st.tuples(st.integers(0, len(data) - 1), st.integers(0, 7)), max_size=4))
    def flip(flips: list[tuple[int, int]]) -> None:
        mutated = bytearray(data)
        for pos, bit in flips:
            mutated[pos] ^= 1 << bit
        _only_pte_error(bytes(mutated))

    flip()


@pytest.mark.parametrize("name", ["data_pte_u55_shared", "data_pte_cpu_op"])
def test_overwritten_words_in_the_flatbuffer(name: str, request: pytest.FixtureRequest) -> None:
    """Offsets and lengths are u32s: overwrite aligned words with hostile values."""
    data = _fixture_bytes(request, name)
    program_size = struct.unpack_from("<Q", data, 16)[0]
    hostile = st.sampled_from([0, 1, 3, 4, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0xFFFFFFFC, 8])
    words = st.tuples(st.integers(0, program_size // 4 - 1), hostile | st.integers(0, 1 << 32 - 1))

    @FUZZ
    @given(st.lists(words, min_size=1, max_size=3))
    def overwrite(edits: list[tuple[int, int]]) -> None:
        mutated = bytearray(data)
        for word, value in edits:
            struct.pack_into("<I", mutated, 4 * word, value)
        _only_pte_error(bytes(mutated))

    overwrite()
