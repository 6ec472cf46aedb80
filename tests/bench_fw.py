"""Firmware figures: QEMU bring-up wall time (goal < 1 s), RAM per region and text size.

Run: pytest tests/bench_fw.py -s -m benchmark
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

import pytest

from ethosu_kit.firmware.elf_check import check_elf
from ethosu_kit.firmware.qemu import run_elf
from fw_helpers import built, need_qemu

pytestmark = [pytest.mark.benchmark, pytest.mark.firmware]
RUNS = 5


def _text_size(elf: Path) -> int:
    from elftools.elf.elffile import ELFFile

    with elf.open("rb") as f:
        return sum(
            s["sh_size"]
            for s in ELFFile(f).iter_sections()
            if s["sh_flags"] & 0x4  # SHF_EXECINSTR
        )


@pytest.mark.parametrize(
    ("fixture", "board", "mode"),
    [("pte_u55_shared", "cs300", "Shared_Sram"), ("pte_u65_dedicated", "cs300", "Dedicated_Sram")],
)
def test_bench_bringup(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    fixture: str,
    board: str,
    mode: str,
) -> None:
    pte: Path = request.getfixturevalue(fixture)
    b = built(pte, board, mode, tmp_path_factory.mktemp("bench"))
    need_qemu()
    walls = []
    for _ in range(RUNS):
        start = time.perf_counter()
        run = run_elf(b.elf, timeout=30)
        walls.append(time.perf_counter() - start)
        assert run.exit_code == 0, run.output
    result = check_elf(b.elf, b.plan)
    print(f"\n== bench_fw {fixture} {board} {mode}")
    print(
        f"QEMU bring-up wall: min {min(walls):.3f} s, median {statistics.median(walls):.3f} s "
        f"over {RUNS} runs (goal < 1 s)"
    )
    print(f"text (executable sections): {_text_size(b.elf)} bytes")
    for row in result.rows:
        if row.used:
            print(
                f"  {row.region.name:5s} used {row.used:>9d} of {row.region.size:>10d} "
                f"free {row.free:>10d}  {' '.join(row.contents)}"
            )
