"""Hostile inputs, classes "simulate on malformed Vela data" and "Vela IO records vs
the scratch": a real .pte with its Vela IO records, scratch_size or block sizes edited.

- `simulate` refuses each with one `error:` line naming the delegate and the record,
  never `internal error` and never a multi-GiB allocation (on the old code: numpy
  ValueErrors, a 4 GiB scratch, inputs copied past the scratch).
- `inspect` still shows such a program (exit 0) and marks every bad record;
- `gen` refuses a delegate whose inputs or outputs lie outside its scratch arena (or
  whose scratch is too small for them) and writes nothing: on the old code it
  generated a project whose NPU writes outside the memory the plan gave it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from hostile import assert_refused, run_kit
from vela_patch import get_io, set_block_size, set_io, set_scratch

SCRATCH = 6784  # the u55_shared model's scratch_size; input 768 B at 0, output 10 B at 0

Edit = Callable[[bytes], bytes]

# name -> (edit of the pte bytes, words the simulate error line must hold)
MALFORMED: dict[str, tuple[Edit, tuple[str, ...]]] = {
    "zero dimension": (lambda d: set_io(d, "inputs", 0, "shape5", 0), ("input 0", "positive")),
    "negative dimension": (
        lambda d: set_io(d, "inputs", 0, "shape4", -16),
        ("input 0", "positive"),
    ),
    "huge dimension": (
        lambda d: set_io(d, "outputs", 0, "shape0", 0x7FFFFFFF),
        ("output 0", "outside"),
    ),
    "element size 0": (lambda d: set_io(d, "inputs", 0, "elem_size", 0), ("input 0", "element")),
    "element size -4": (
        lambda d: set_io(d, "outputs", 0, "elem_size", -4),
        ("output 0", "element"),
    ),
    "element size 3": (lambda d: set_io(d, "inputs", 0, "elem_size", 3), ("input 0", "element")),
    "region 0 (weights)": (lambda d: set_io(d, "inputs", 0, "region", 0), ("input 0", "region 0")),
    "region 2": (lambda d: set_io(d, "outputs", 0, "region", 2), ("output 0", "region 2")),
    "region -1": (lambda d: set_io(d, "inputs", 0, "region", -1), ("input 0", "region -1")),
    "negative offset": (lambda d: set_io(d, "inputs", 0, "offset", -64), ("input 0", "outside")),
    "offset past scratch": (
        lambda d: set_io(d, "outputs", 0, "offset", SCRATCH - 4),
        ("output 0", "outside"),
    ),
    "offset 2 GiB": (
        lambda d: set_io(d, "inputs", 0, "offset", 0x7FFFFFF0),
        ("input 0", "outside"),
    ),
    "scratch too small": (lambda d: set_scratch(d, 100), ("input 0", "100-byte scratch")),
    "scratch 0": (lambda d: set_scratch(d, 0), ("input 0", "0-byte scratch")),
    "scratch 4 GiB": (lambda d: set_scratch(d, 0xFFFFFFF0), ("scratch_size", "MAX_REGION_BYTES")),
    "weight block 2 GiB": (lambda d: set_block_size(d, "weight_data", 0x7FFFFFF0), ("weight",)),
    "command block 4 GiB": (lambda d: set_block_size(d, "cmd_data", 0xFFFFFFF0), ("cmd_data",)),
    "scratch block 1 GiB": (
        lambda d: set_block_size(d, "scratch_size", 1 << 30),
        ("scratch_size",),
    ),
    "inputs block empty": (lambda d: set_block_size(d, "inputs", 0), ("Vela block",)),
}

# the subset that is about the scratch arena: inspect shows it, gen refuses it
OUTSIDE_SCRATCH = [
    "huge dimension",
    "negative offset",
    "offset past scratch",
    "offset 2 GiB",
    "scratch too small",
    "scratch 0",
    "region 2",
]


def _edited(pte: Path, tmp: Path, edit: Edit) -> Path:
    path = tmp / "edited.pte"
    path.write_bytes(edit(pte.read_bytes()))
    return path


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_simulate_refuses_malformed_vela_data(
    case: str, data_pte_u55_shared: Path, tmp_path: Path
) -> None:
    edit, words = MALFORMED[case]
    pte = _edited(data_pte_u55_shared, tmp_path, edit)
    out = tmp_path / "out.npz"
    line = assert_refused(run_kit("simulate", pte, "-o", out), *words, absent=[out])
    assert "delegate 0" in line, line


@pytest.mark.parametrize("case", OUTSIDE_SCRATCH)
def test_inspect_shows_and_gen_refuses_io_outside_the_scratch(
    case: str, data_pte_u55_shared: Path, tmp_path: Path
) -> None:
    edit, words = MALFORMED[case]
    pte = _edited(data_pte_u55_shared, tmp_path, edit)
    shown = run_kit("inspect", pte)
    assert shown.returncode == 0 and shown.stderr == "", shown
    bad = [line for line in shown.stdout.splitlines() if "BAD IO RECORD" in line]
    assert bad and words[0] in bad[0], shown.stdout
    as_json = run_kit("inspect", pte, "--json")
    assert as_json.returncode == 0 and words[0] in as_json.stdout, as_json
    out = tmp_path / "fw"
    line = assert_refused(run_kit("gen", "--pte", pte, "-o", out), *words, absent=[out])
    assert "delegate 0" in line and "edited.pte" in line, line


def test_io_at_the_very_end_of_the_scratch_is_legal(
    data_pte_u55_shared: Path, tmp_path: Path
) -> None:
    """An output ending exactly at scratch_size is inside: gen and simulate accept it."""
    data = data_pte_u55_shared.read_bytes()
    assert get_io(data, "outputs", 0)["offset"] == 0
    pte = _edited(
        data_pte_u55_shared, tmp_path, lambda d: set_io(d, "outputs", 0, "offset", SCRATCH - 10)
    )
    shown = run_kit("inspect", pte)
    assert shown.returncode == 0 and "BAD IO RECORD" not in shown.stdout, shown
    fw = run_kit("gen", "--pte", pte, "-o", tmp_path / "fw", "-q")
    assert fw.returncode == 0, fw
    sim = run_kit("simulate", pte)
    assert sim.returncode == 0 and "output 0: int8 [" in sim.stdout, sim
