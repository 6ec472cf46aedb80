"""Hostile inputs, second round (issue 20): archives and numbers.

An .npz is bounded from its zip directory before a member is expanded: how many
members (the end record's count, read before zipfile parses the directory), what they
expand to in all, the encrypted flag and the compression method (stored or deflate,
what numpy writes). A member whose stream is corrupt is one error naming it. Every
command that reads arrays (`compare`, `simulate --inputs`, `gen --inputs`,
`gen --vectors`) goes through the one reader, so each case is tried through each.

Numbers: a 5,000-digit integer (a board file, a plan, an npz key, a budget) and JSON or
TOML nested thousands deep (a plan, the project's manifest, a budget) are one `error:` line.
"""

from __future__ import annotations

import io
import json
import shutil
import struct
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from hostile import assert_refused, run_kit
from projects import copy_with_plan, make_project
from test_hostile_boards import _table_line, _write

SHAPE = (3, 16, 16)  # the u55_shared model's delegate input (int8)


def _npy(array: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, array)
    return buf.getvalue()


def _zip(members: dict[str, bytes], method: int = zipfile.ZIP_DEFLATED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=method) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return buf.getvalue()


def _good() -> dict[str, bytes]:
    return {"input0.npy": _npy(np.ones(SHAPE, dtype=np.int8))}


def _corrupt_deflate() -> bytes:
    data = bytearray(_zip({"input0.npy": _npy(np.arange(768, dtype=np.int8).reshape(SHAPE))}))
    start = 30 + len("input0.npy")  # the first local header, then the deflate stream
    data[start : start + 40] = b"\xff" * 40
    return bytes(data)


def _encrypted() -> bytes:
    data = bytearray(_zip(_good()))
    for sig, flag_at in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        at = data.find(sig)
        (flags,) = struct.unpack_from("<H", data, at + flag_at)
        struct.pack_into("<H", data, at + flag_at, flags | 1)
    return bytes(data)


def _many() -> bytes:
    return _zip({f"m{i}.npy": b"x" for i in range(5000)}, zipfile.ZIP_STORED)


def _bomb() -> bytes:
    # 8 MiB of zeros in a few KiB: over the (lowered) expanded-bytes limit below
    return _zip({"input0.npy": _npy(np.zeros(8 << 20, dtype=np.int8))})


# name -> (the .npz's bytes, words the error line must hold)
ARCHIVES: dict[str, tuple[Callable[[], bytes], tuple[str, ...]]] = {
    "corrupt deflate": (_corrupt_deflate, ("input0",)),
    "lzma member": (lambda: _zip(_good(), zipfile.ZIP_LZMA), ("compression method",)),
    "bzip2 member": (lambda: _zip(_good(), zipfile.ZIP_BZIP2), ("compression method",)),
    "encrypted flag": (_encrypted, ("encrypted",)),
    "5000 one-byte members": (_many, ("5000 members",)),
    "expands past the limit": (_bomb, ("expanded",)),
}
LIMIT = {"ETHOSU_KIT_MAX_INPUT_BYTES": "4MiB"}


@pytest.mark.parametrize("case", sorted(ARCHIVES))
def test_hostile_npz_is_refused_by_every_reader(
    case: str, data_pte_u55_shared: Path, tmp_path: Path
) -> None:
    make, words = ARCHIVES[case]
    bad = tmp_path / "bad.npz"
    bad.write_bytes(make())
    good = tmp_path / "good.npz"
    np.savez(good, input0=np.ones(SHAPE, dtype=np.int8))
    out, fw = tmp_path / "out.npz", tmp_path / "fw"
    for args in (
        ("compare", bad, good),
        ("compare", good, bad),
        ("simulate", data_pte_u55_shared, "--inputs", bad, "-o", out),
        ("gen", "--pte", data_pte_u55_shared, "-o", fw, "--inputs", bad),
        ("gen", "--pte", data_pte_u55_shared, "-o", fw, "--app", "selftest", "--vectors", bad),
    ):
        started = time.monotonic()
        line = assert_refused(run_kit(*args, env=LIMIT), *words, absent=[out, fw])
        assert str(bad) in line, line
        assert time.monotonic() - started < 30, args


def test_npz_key_of_5000_digits(tmp_path: Path) -> None:
    a, b = tmp_path / "a.npz", tmp_path / "b.npz"
    np.savez(a, **{"output" + "9" * 5000: np.zeros(4, dtype=np.int8)})
    np.savez(b, output0=np.zeros(4, dtype=np.int8))
    assert_refused(run_kit("compare", a, b), "no arrays to compare")


def test_board_integer_of_5000_digits(tmp_path: Path) -> None:
    board = _write(tmp_path, _table_line("glue", "big = " + "9" * 5000))
    assert_refused(run_kit("boards", board), str(board))
    board = _write(tmp_path / "b", lambda t: t.replace('size = "', 'size = "' + "1" * 5000, 1))
    assert_refused(run_kit("boards", board), str(board))


@pytest.fixture(scope="module")
def project(data_pte_u55_shared: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("json") / "fw"
    make_project(data_pte_u55_shared, out, board="cs300")
    return out


DEEP = "[" * 50_000 + "]" * 50_000
PLAN_EDITS: dict[str, tuple[Callable[[str], str], str]] = {
    "nested": (lambda t: t.replace('"notes": [', f'"notes": {DEEP}, "x": [', 1), "nested"),
    "digits": (lambda t: t.replace('"format": 2', '"format": ' + "2" * 5000, 1), "digits"),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(PLAN_EDITS))
def test_hostile_plan_json(case: str, project: Path, tmp_path: Path) -> None:
    edit, word = PLAN_EDITS[case]
    copy = tmp_path / "fw"
    plan = copy_with_plan(project, copy, edit)
    assert_refused(run_kit("build", copy, "--app", "selftest"), str(plan), word)


def test_deeply_nested_manifest(project: Path, data_pte_u55_shared: Path, tmp_path: Path) -> None:
    copy = tmp_path / "fw"
    shutil.copytree(project, copy)
    manifests = list(copy.rglob("manifest.json"))
    assert manifests
    manifests[0].write_text(
        json.dumps({"files": {}})[:-1] + ', "x": ' + "[" * 50_000 + "]" * 50_000 + "}"
    )
    result = run_kit("gen", "--pte", data_pte_u55_shared, "--board", "cs300", "-o", copy, "--force")
    assert_refused(result, "manifest", "nested")


def _programs(count: int) -> str:
    return "".join(f'[[program]]\nname = "p{i}"\npte = "model.pte"\n' for i in range(count))


# gen --programs manifests: a 5,000-digit number and nesting were internal errors
# (ValueError, RecursionError); 5,000 programs ran for minutes
MANIFESTS: dict[str, tuple[str, str]] = {
    "number of 5000 digits": (_programs(1) + "x = " + "9" * 5000 + "\n", "4,300 digits"),
    "nested concurrent": ("concurrent = " + "[" * 5000 + "]" * 5000 + "\n", "nested deeper"),
    "nested value": ("x = " + "[" * 5000 + "]" * 5000 + "\n" + _programs(1), "nested deeper"),
    "5000 programs": (_programs(5000), "at most 64"),
}


@pytest.mark.parametrize("case", sorted(MANIFESTS))
def test_hostile_programs_manifest(case: str, data_pte_two_io: Path, tmp_path: Path) -> None:
    text, needle = MANIFESTS[case]
    shutil.copy(data_pte_two_io, tmp_path / "model.pte")
    manifest = tmp_path / "programs.toml"
    manifest.write_text(text)
    out = tmp_path / "fw"
    started = time.monotonic()
    assert_refused(run_kit("gen", "--programs", manifest, "-o", out), needle, absent=[out])
    assert time.monotonic() - started < 30, case


# report --budget: JSON went to json.loads and TOML to tomllib unbounded (RecursionError,
# int()'s ValueError: internal errors); now core.files.parse_json / parse_toml
BUDGETS: dict[str, tuple[str, str, str]] = {
    "json nested": ("b.json", '{"regions": ' + "[" * 100_000, "nested deeper than 32"),
    "json digits": ("b.json", '{"regions": {"SRAM": ' + "9" * 5000 + "}}", "5000 digits"),
    "json float": ("b.json", '{"regions": {"SRAM": 1' + "0" * 5000 + ".5}}", "characters"),
    "toml nested array": ("b.toml", "[regions]\nSRAM = " + "[" * 100_000, "nested deeper"),
    "toml nested table": ("b.toml", "[regions]\nSRAM = " + "{a=" * 100_000, "nested deeper"),
    "toml digits": ("b.toml", "[regions]\nSRAM = " + "9" * 5000 + "\n", "4,300 digits"),
    "not utf-8": ("b.toml", "\udcff[regions]\n", "not UTF-8"),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(BUDGETS))
def test_hostile_budget(case: str, project: Path, tmp_path: Path) -> None:
    name, text, needle = BUDGETS[case]
    budget = tmp_path / name
    budget.write_bytes(text.encode("utf-8", "surrogateescape"))
    line = assert_refused(run_kit("report", project, "--json", "--budget", budget), needle, code=2)
    assert str(budget) in line, line


def test_too_many_pte_flags(data_pte_two_io: Path, tmp_path: Path) -> None:
    pte = ["--pte" if i % 2 == 0 else f"p{i}={data_pte_two_io}" for i in range(2 * 65)]
    out = tmp_path / "fw"
    assert_refused(run_kit("gen", *pte, "-o", out), "at most 64", absent=[out])
