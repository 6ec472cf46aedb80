"""Property-based hostile inputs over the CLI: whatever the file, the contract holds.

Mutated real .pte files (bit flips, overwritten words, truncations, aimed mostly at
the Vela IO records, block headers, the COP1 header and the compile specs) go
through `inspect`, `gen` and `simulate`; generated board files (the built-in board
with keys dropped, values replaced by hostile ones, unknown keys, deep nesting) go
through `boards` and `gen`. Each run must exit 0, or exit non-zero with exactly
one `error:` line (and at most one `hint:`), never `internal error`, never hang, and
a failed `gen` leaves no folder behind.

`inspect` and `gen` run in-process (fast); `simulate` of a pte that parses runs in a
child process, so a crash of the virtual NPU's C library fails the test instead of
killing pytest. The example count is modest for CI; raise it with
ETHOSU_KIT_HYPOTHESIS_EXAMPLES. The counts run are printed in pytest's summary.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import signal
import struct
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ethosu_kit import cli
from ethosu_kit.board.draft.render import toml_value
from ethosu_kit.core import paths
from hostile import EXAMPLES, assert_contract, example, run_kit


def property_settings(examples: int) -> settings:
    """Hypothesis settings of the hostile property tests: `examples` per test unless
    ETHOSU_KIT_HYPOTHESIS_EXAMPLES says, the same examples every run."""
    return settings(
        max_examples=int(os.environ.get("ETHOSU_KIT_HYPOTHESIS_EXAMPLES", str(examples))),
        deadline=None,
        database=None,
        derandomize=True,  # the same examples in CI and here: a failure reproduces
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )


PROPERTY = property_settings(40)
HANG = 60  # seconds one command may take before the example counts as a hang


@contextlib.contextmanager
def _watchdog(what: str) -> Iterator[None]:
    def hung(_signum: int, _frame: object) -> None:
        raise AssertionError(f"{what}: still running after {HANG} s")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(HANG)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def kit(*argv: str | Path) -> tuple[int, str, str]:
    """The real CLI in-process: (exit code, stdout, stderr), checked against the contract."""
    args = [str(a) for a in argv]
    out, err = io.StringIO(), io.StringIO()
    with (
        _watchdog(" ".join(args)),
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
    ):
        try:
            code = cli.main(args)
        except SystemExit as exc:  # argparse
            code = int(exc.code or 0)
    stderr = err.getvalue()
    assert code != 70 and "internal error" not in stderr, f"{args}: {stderr}"
    assert "Traceback" not in stderr, f"{args}: {stderr}"
    if code != 0:
        lines = stderr.splitlines()
        assert 1 <= len(lines) <= 2 and lines[0].startswith("error: "), f"{args}: {stderr!r}"
        assert all(line.startswith("hint: ") for line in lines[1:]), f"{args}: {stderr!r}"
    return code, out.getvalue(), stderr


def _no_output(out: Path) -> None:
    assert not out.exists(), f"{out}: a failed gen left its folder"
    assert not [p for p in out.parent.iterdir() if p.name.startswith(f".{out.name}.")]


# -- mutated ptes ---------------------------------------------------------------------

WORDS = [0, 1, 3, 16, 0x7F, 0xFF, 0xFFFF, 0x7FFFFFFF, 0x80000000, 0xFFFFFFF0, 0xFFFFFFFF]


def _hot_spans(data: bytes) -> list[tuple[int, int]]:
    """Where mutations do the most: Vela block headers and IO records, the COP1 header,
    the compile specs."""
    spans = []
    for name in (b"inputs", b"outputs", b"scratch_size", b"cmd_data", b"weight_data",
                 b"vela_bin_stream", b"compile_flags"):  # fmt: skip
        at = data.find(name + b"\0")
        if at >= 0:
            spans.append((max(0, at - 8), min(len(data), at + 32 + 96)))
    return spans


@st.composite
def mutations(draw: st.DrawFn, data: bytes) -> bytes:
    buf = bytearray(data)
    spans = _hot_spans(data)
    for _ in range(draw(st.integers(1, 4))):
        if not buf:
            break
        lo, hi = draw(st.sampled_from([*spans, *spans, (0, len(buf))]))
        hi = min(hi, len(buf))
        if lo >= hi:
            continue
        pos = draw(st.integers(lo, hi - 1))
        kind = draw(st.sampled_from(["flip", "word", "byte", "truncate"]))
        if kind == "flip":
            buf[pos] ^= 1 << draw(st.integers(0, 7))
        elif kind == "byte":
            buf[pos] = draw(st.integers(0, 255))
        elif kind == "word":
            pos -= pos % 4
            if pos + 4 <= len(buf):
                struct.pack_into("<I", buf, pos, draw(st.sampled_from(WORDS)))
        else:
            del buf[pos:]
    return bytes(buf)


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("property")


@pytest.mark.parametrize("model", ["pte_u55_shared", "pte_u85_dedicated"])
def test_mutated_pte_through_inspect_gen_simulate(
    model: str, request: pytest.FixtureRequest, scratch: Path
) -> None:
    original = request.getfixturevalue(model).read_bytes()

    @PROPERTY
    @given(mutations(original))
    def check(data: bytes) -> None:
        pte = example("pte", scratch / "mutated.pte", data)
        inspected, _, _ = kit("inspect", pte)
        kit("inspect", pte, "--json")
        out = scratch / "fw"
        shutil.rmtree(out, ignore_errors=True)
        made, _, _ = kit("gen", "--pte", pte, "-o", out)
        if made != 0:
            _no_output(out)
        npz = scratch / "out.npz"
        npz.unlink(missing_ok=True)
        if inspected == 0:  # reaches the virtual NPU: in a child, so a crash is a failure
            EXAMPLES["simulate"] += 1
            result = run_kit("simulate", pte, "-o", npz, timeout=HANG)
            assert_contract(result, absent=[] if result.returncode == 0 else [npz])
        else:
            kit("simulate", pte, "-o", npz)
            assert not npz.exists()

    check()


# -- generated board files ------------------------------------------------------------


def to_toml(data: dict[str, Any], prefix: str = "") -> str:
    """A small TOML writer: scalars first, then [tables] and [[arrays of tables]]."""
    lines, later = [], []
    for key, value in data.items():
        name = f"{prefix}.{json.dumps(key)}" if prefix else json.dumps(key)
        if isinstance(value, dict) and value and prefix.count(".") < 3:
            later.append(f"\n[{name}]\n" + to_toml(value, name))
        elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            later += [f"\n[[{name}]]\n" + to_toml(v, name) for v in value]
        else:
            lines.append(f"{json.dumps(key)} = {toml_value(value)}")
    return "\n".join(lines) + "\n" + "".join(later)


HOSTILE_TEXT = [
    ")\nexecute_process(COMMAND touch INJECTED)\n#",
    "*/ #error injected /*",
    '"; -fplugin=/tmp/evil.so; "',
    "${ENV{HOME}}",
    "-mcpu=cortex-m55;-Wl,-T,/etc/passwd",
    "[/x] \x1b[31m",
    "",
    "../../etc",
    "/abs/path",
    "a" * 300,
]
scalars = st.one_of(
    st.integers(-(1 << 70), 1 << 70),
    st.sampled_from([0, 1, -1, 0xFFFFFFFF, 1 << 32, 0x58102000, 0x10000000]),
    st.sampled_from(HOSTILE_TEXT),
    st.text(max_size=20),
    st.booleans(),
    st.floats(allow_nan=True),
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)


def _paths(data: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(data, dict):
        for k, v in data.items():
            yield (*prefix, k)
            yield from _paths(v, (*prefix, k))
    elif isinstance(data, list):
        for i, v in enumerate(data):
            yield (*prefix, i)
            yield from _paths(v, (*prefix, i))


def drawn_place(draw: st.DrawFn, data: Any) -> tuple[Any, Any]:
    """A key or index anywhere in nested `data`, drawn: (the dict or list holding it, it)."""
    where = draw(st.sampled_from(list(_paths(data))))
    parent = data
    for step in where[:-1]:
        parent = parent[step]
    return parent, where[-1]


@st.composite
def boards(draw: st.DrawFn, base: dict[str, Any]) -> str:
    data = json.loads(json.dumps(base))  # a deep copy
    for _ in range(draw(st.integers(1, 3))):
        parent, key = drawn_place(draw, data)
        kind = draw(st.sampled_from(["replace", "replace", "drop", "add", "nest"]))
        if kind == "replace":
            parent[key] = draw(values)
        elif kind == "drop":
            del parent[key]
        elif kind == "add" and isinstance(parent, dict):
            parent[draw(st.text(min_size=1, max_size=8))] = draw(values)
        elif kind == "nest":
            depth = draw(st.sampled_from([5, 100]))  # deeper: test_hostile_boards
            return to_toml(data) + "deep = " + "[" * depth + "]" * depth + "\n"
    return to_toml(data)


def test_generated_board_files_through_boards_and_gen(pte_u55_shared: Path, scratch: Path) -> None:
    base = tomllib.loads((paths.boards_dir() / "corstone-300" / "board.toml").read_text())
    folder = scratch / "board"
    shutil.copytree(paths.boards_dir() / "corstone-300", folder, dirs_exist_ok=True)

    @PROPERTY
    @given(boards(base))
    def check(text: str) -> None:
        EXAMPLES["board"] += 1
        (folder / "board.toml").write_text(text)
        shown, _, _ = kit("boards", folder / "board.toml")
        out = scratch / "fw-board"
        shutil.rmtree(out, ignore_errors=True)
        made, _, _ = kit("gen", "--pte", pte_u55_shared, "--board", folder, "-o", out, "-q")
        if made != 0:
            _no_output(out)
        else:
            assert shown == 0, "gen accepted a board that `boards` refused"
            for f in (out / "generated").iterdir():
                if f.suffix in (".cmake", ".h", ".ld", ".c", ".S"):
                    for line in f.read_text().splitlines():
                        assert not line.lstrip().startswith(("execute_process", "#error")), line

    check()


# -- mutated .npz archives ------------------------------------------------------------


def test_mutated_npz_through_compare(scratch: Path) -> None:
    """The archive reader (inputs/arrays.py) on mutated deflated and stored .npz files:
    headers, directory, flags, methods and streams; compare is in-process and fast."""
    import numpy as np

    good = scratch / "good.npz"
    np.savez(good, output0=np.arange(768, dtype=np.int8).reshape(3, 16, 16))
    packed = scratch / "packed.npz"
    np.savez_compressed(packed, output0=np.arange(768, dtype=np.int8).reshape(3, 16, 16),
                        output1=np.zeros(5, dtype=np.int16))  # fmt: skip
    originals = [good.read_bytes(), packed.read_bytes()]

    @PROPERTY
    @given(st.sampled_from([0, 1]).flatmap(lambda i: mutations(originals[i])))
    def check(data: bytes) -> None:
        npz = example("npz", scratch / "mutated.npz", data)
        kit("compare", npz, good)

    check()
