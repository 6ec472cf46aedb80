"""`measured_usage.json` is reused only for the firmware it measured.

A record names the app, compiler and pte bytes, and a fingerprint of the firmware that
made the image (ethosu_kit.firmware.fingerprint): the kit's SDK, apps, drivers, CMake and
templates, the board folder's own files, the compiler's version, and for the
executor_runner the ExecuTorch checkout. A change of any part re-measures and the "why"
names it; a record of the older format (no fingerprint) is measured again; a record
that is not one is one `error:` line. No build here: records are written by hand (the
QEMU round trip is in test_stack_auto.py).
"""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from ethosu_kit.board.loader import load_board
from ethosu_kit.core import paths
from ethosu_kit.core.errors import KitError
from ethosu_kit.firmware.fingerprint import changed, firmware_fingerprint
from ethosu_kit.firmware.measure import MEASURE_FILE, Measurement, load_measurement, reuse

SHA = "ab" * 32


def _record(project: Path, **fields: object) -> Measurement:
    m = Measurement(
        app="selftest", npu="virtual", model_sha256=SHA, board="corstone-300", stack_used=2344,
        stack_size=16384, heap_used=0, heap_size=32768,
    )  # fmt: skip
    m = replace(m, **fields)  # type: ignore[arg-type]
    project.mkdir(parents=True, exist_ok=True)
    (project / MEASURE_FILE).write_text(m.to_json())
    return m


@pytest.fixture
def kit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the kit's firmware trees, as the fingerprint's kit root."""
    root = tmp_path / "kit"
    for tree in ("sdk", "apps", "drivers", "cmake", "linker", "boards"):
        shutil.copytree(paths.kit_root() / tree, root / tree)
    monkeypatch.setattr(paths, "kit_root", lambda: root)
    return root


def _port_board(folder: Path) -> Path:
    """corstone-300 as a board folder of its own with a console in C and a header."""
    folder.mkdir(parents=True)
    text = (paths.kit_root() / "boards/corstone-300/board.toml").read_text()
    text = text.replace(
        "sources = []\nhooks = []", 'sources = ["board.c"]\ninclude_dirs = ["inc"]\nhooks = []'
    )
    (folder / "board.toml").write_text(text)
    (folder / "board.c").write_text("int kit_hal_board_init(void) { return 0; }\n")
    (folder / "inc").mkdir()
    (folder / "inc/board.h").write_text("#define BOARD_X 1\n")
    (folder / "notes.txt").write_text("not read by any build\n")
    return folder


def test_identical_firmware_is_reused_a_changed_part_is_measured_again_and_named(
    kit: Path, tmp_path: Path
) -> None:
    board = load_board("corstone-300")
    project = tmp_path / "fw"
    firmware = firmware_fingerprint(board, "selftest", "gcc", project)
    stored = _record(project, firmware=firmware)
    m, note = reuse(
        project, SHA, "selftest", "gcc", firmware_fingerprint(board, "selftest", "gcc", project)
    )
    assert m == stored and "reused" in note

    # the kit's SDK sources changed after the measurement: the record is stale
    (kit / "sdk/src/usage.c").write_text((kit / "sdk/src/usage.c").read_text() + "\n/* x */\n")
    now = firmware_fingerprint(board, "selftest", "gcc", project)
    assert changed(firmware, now) == ["the kit's SDK sources (sdk/)"]
    m, note = reuse(project, SHA, "selftest", "gcc", now)
    assert (
        m is None
        and note == "measured again: the kit's SDK sources (sdk/) changed since the record"
    )
    assert load_measurement(project, SHA, "selftest", "gcc", now) is None
    assert load_measurement(project, SHA, "selftest", "gcc") == stored  # no firmware: not compared

    # every other kit tree is a part of its own
    for tree, name in (("apps/selftest", "apps"), ("drivers/ethosu_virtual", "drivers"),
                       ("cmake", "cmake"), ("linker", "codegen")):  # fmt: skip
        target = next(p for p in sorted((kit / tree).rglob("*")) if p.is_file())
        target.write_bytes(target.read_bytes() + b"\n")
        later = firmware_fingerprint(board, "selftest", "gcc", project)
        assert [n for n in later if later[n] != now[n]] == [name], tree
        now = later


def test_the_board_folder_is_a_part(tmp_path: Path) -> None:
    """Its board.toml, the port's sources and headers; not a file no build reads."""
    folder = _port_board(tmp_path / "myboard")
    project = tmp_path / "fw"

    def part() -> str:
        return firmware_fingerprint(load_board(folder), "selftest", "gcc", project)["board"]

    first = part()
    (folder / "notes.txt").write_text("edited\n")
    assert part() == first
    for name in ("board.c", "inc/board.h", "board.toml"):
        (folder / name).write_text((folder / name).read_text() + "\n")
        now = part()
        assert now != first, name
        first = now
    # a board moved elsewhere with the same files is the same board
    shutil.copytree(folder, tmp_path / "moved")
    assert (
        firmware_fingerprint(load_board(tmp_path / "moved"), "selftest", "gcc", project)["board"]
        == part()
    )


def test_the_executorch_checkout_is_a_part_of_the_runner_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its runtime/, kernels/, schema/ and Arm backend runtime, for the executor_runner
    (the self-test reads none of it); the project's CMake cache wins over the environment,
    as it does in the build."""
    board = load_board("corstone-300")
    project = tmp_path / "fw"
    et = tmp_path / "executorch"
    (et / "runtime/executor").mkdir(parents=True)
    (et / "runtime/executor/method.cpp").write_text("// v1\n")
    (et / "docs").mkdir()
    monkeypatch.setenv("EXECUTORCH_ROOT", str(et))
    assert "executorch" not in firmware_fingerprint(board, "selftest", "gcc", project)
    first = firmware_fingerprint(board, "executor_runner", "gcc", project)["executorch"]
    (et / "docs/x.md").write_text("not built\n")
    assert firmware_fingerprint(board, "executor_runner", "gcc", project)["executorch"] == first
    (et / "runtime/executor/method.cpp").write_text("// v2\n")
    second = firmware_fingerprint(board, "executor_runner", "gcc", project)["executorch"]
    assert second != first

    other = tmp_path / "other" / "executorch"
    shutil.copytree(et, other)
    (other / "runtime/executor/method.cpp").write_text("// v3\n")
    cache = project / "build/gcc/CMakeCache.txt"
    cache.parent.mkdir(parents=True)
    cache.write_text(f"CMAKE_BUILD_TYPE:STRING=Release\nEXECUTORCH_ROOT:PATH={other}\n")
    third = firmware_fingerprint(board, "executor_runner", "gcc", project)["executorch"]
    assert third not in (first, second)
    monkeypatch.delenv("EXECUTORCH_ROOT")
    assert firmware_fingerprint(board, "executor_runner", "gcc", project)["executorch"] == third


def test_why_a_record_is_not_reused(tmp_path: Path) -> None:
    board = load_board("corstone-300")
    project = tmp_path / "fw"
    firmware = firmware_fingerprint(board, "selftest", "gcc", project)
    assert reuse(project, SHA, "selftest", "gcc", firmware) == (
        None,
        f"measured now: no {MEASURE_FILE} yet",
    )
    cases = [
        ({"model_sha256": "cd" * 32}, "the record is of other pte bytes"),
        ({"app": "executor_runner"}, "the record is of the executor_runner app"),
        ({"toolchain": "clang"}, "the record is of a clang build"),
        ({"firmware": {**firmware, "compiler": "arm-none-eabi-gcc 13.2"}}, "the compiler changed"),
        ({"firmware": {}}, "changed since the record"),
        # a name from the file is not repeated (the why goes into C comments)
        ({"firmware": {**firmware, "*/ #error x": "1"}}, "parts this kit does not fingerprint"),
    ]
    for fields, why in cases:
        _record(project, **{"firmware": firmware, **fields})
        m, note = reuse(project, SHA, "selftest", "gcc", firmware)
        assert m is None and note.startswith("measured again: ") and why in note, (fields, note)
        assert "*/" not in note

    # format 1 (no fingerprint): an older kit's record is measured again, not an error
    old = json.loads(_record(project, firmware=firmware).to_json())
    old["format"] = 1
    del old["firmware"]
    (project / MEASURE_FILE).write_text(json.dumps(old))
    assert reuse(project, SHA, "selftest", "gcc", firmware) == (
        None,
        f"measured again: {MEASURE_FILE} is an older kit's (no firmware fingerprint)",
    )


_FIELDS = {"format": 2, "app": "selftest", "npu": "virtual", "model_sha256": SHA, "board": "b",
           "stack_used": 8, "stack_size": 16, "heap_used": 0, "heap_size": 8}  # fmt: skip


@pytest.mark.parametrize(
    "text",
    [
        "{not json",
        "[" * 100_000 + "]" * 100_000,
        '{"format": 2, "app": "selftest"}',
        '["format", 2]',
        json.dumps({**_FIELDS, "stack_used": "2344"}),
        json.dumps({**_FIELDS, "stack_used": -8}),
        json.dumps({**_FIELDS, "firmware": {"sdk": ["x"]}}),
        json.dumps({**_FIELDS, "npu": "virtual */ #error x"}),
        "\udcff",
    ],
    ids=["syntax", "deep", "missing", "list", "type", "negative", "firmware", "npu", "not-utf8"],
)
def test_a_record_that_is_not_one_is_one_error(tmp_path: Path, text: str) -> None:
    project = tmp_path / "fw"
    project.mkdir()
    (project / MEASURE_FILE).write_bytes(text.encode(errors="surrogateescape"))
    with pytest.raises(KitError) as err:
        reuse(project, SHA, "selftest", "gcc", {})
    assert err.value.message.startswith(f"{project / MEASURE_FILE}: not")
    assert "\n" not in err.value.message


def test_gen_with_a_hostile_record_is_one_error_line(pte_u55_shared: Path, tmp_path: Path) -> None:
    """Through the command: one `error:` line, no traceback, the folder as it was."""
    from hostile import assert_refused, run_kit

    project = tmp_path / "fw"
    project.mkdir()
    (project / MEASURE_FILE).write_text('{"format": 2, "app": {"x": 1}}')
    result = run_kit("gen", "--pte", pte_u55_shared, "--app", "selftest", "--stack", "auto",
                     "-o", project)  # fmt: skip
    assert_refused(result, "measured_usage.json: not a measurement")
    assert sorted(p.name for p in project.iterdir()) == [MEASURE_FILE]
