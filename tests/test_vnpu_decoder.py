"""The virtual NPU's command decoder against Vela's own register listing.

Vela (regor) re-compiles each test model's TOSA graph with the flags the .pte was
compiled with and `--verbose-register-command-stream`; every command of its listing
must equal the library's disassembly of the stream in the .pte: same byte offset,
code, name and every field regor prints, with the same value.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from ethosu_kit.pte import read_pte
from ethosu_kit.vnpu.npu import disassemble
from vnpu_models import BY_NAME, lowered
from vnpu_support import (
    Command,
    assert_same_commands,
    op_model,
    parse_disassembly,
    parse_listing,
)

pytestmark = pytest.mark.lowering

UNPRINTED = frozenset({"custom_dma_cs"})


def vela_listing(tosa: Path, flags: tuple[str, ...], out: Path) -> list[Command]:
    vela = shutil.which("vela")
    if vela is None:
        pytest.skip("vela (ethos-u-vela) is not on PATH")
    proc = subprocess.run(
        [vela, str(tosa), *flags, "--verbose-register-command-stream", f"--output-dir={out}"],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return parse_listing(proc.stdout)


def ours(stream: bytes) -> list[Command]:
    return parse_disassembly(disassemble(stream))


@pytest.mark.parametrize("name", ["conv3x3_pad", "add_bcast", "softmax", "sigmoid_a16w8", "block"])
def test_decoder_matches_vela_listing(name: str, tmp_path: Path) -> None:
    blocks, _ = op_model(BY_NAME[name])
    folder = lowered(BY_NAME[name])
    spec = read_pte(folder / "model.pte").compile_spec
    assert spec is not None
    theirs = vela_listing(folder / "out.tosa", spec.flags, tmp_path)
    mine = ours(blocks.command_stream)
    fields_checked = assert_same_commands(name, theirs, mine, UNPRINTED)
    assert fields_checked > len(mine) // 2
