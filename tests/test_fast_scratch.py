"""`gen --fast-scratch N` below what the command streams touch of region 2 is refused.

The Dedicated_Sram fast scratch (region 2) is the pte's Vela config's size unless
`--fast-scratch` overrides it. `--fast-scratch 16` was planned and generated, and the
image failed only at run time in the virtual NPU (`OFM tile 0 spans bytes [0, 768)
outside its region of 16 bytes`). gen now measures the streams' need on the host (the
virtual NPU checks every access against its region) and refuses less, exit 3.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ethosu_kit.pte import read_vela_streams
from ethosu_kit.vnpu.fast_scratch import region2_need, runs_with
from hostile import assert_refused, run_kit


@pytest.mark.parametrize(("fixture", "board"), [("data_pte_u65_dedicated", "cs300"),
                                                ("data_pte_u85_dedicated", "cs320")])  # fmt: skip
def test_fast_scratch_below_the_streams_need_is_refused(
    fixture: str, board: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    pte: Path = request.getfixturevalue(fixture)
    (blocks,) = read_vela_streams(pte)
    need = region2_need(blocks, 16, 4 << 20)
    assert need is not None and need % 16 == 0, need
    assert runs_with(blocks, need) and not runs_with(blocks, need - 1)  # the exact extent
    for given in ("16", str(need - 16)):
        out = tmp_path / f"fw{given}"
        result = run_kit("gen", "--pte", pte, "--board", board, "--fast-scratch", given, "-o", out)
        line = assert_refused(result, "--fast-scratch", f"uses {need:,} bytes", absent=[out])
        assert result.returncode == 3, result
        assert f"gives {int(given):,}" in line and "region 2" in line, line
        assert f"pass --fast-scratch {need} or more" in result.stderr
    # enough (after the plan's 16-byte rounding): generated as before
    for given in (str(need - 15), str(need)):
        out = tmp_path / f"ok{given}"
        result = run_kit("gen", "--pte", pte, "--board", board, "--fast-scratch", given, "-o", out)
        assert result.returncode == 0, result
        assert (out / "memory_plan.json").is_file()
