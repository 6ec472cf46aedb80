"""executor_runner RAM and text next to upstream's runner defaults, and vs the model's need.

For the same .pte and board: the RAM the generated executor_runner reserves (from the
ELF when it links with the user's ExecuTorch checkout, else from the memory plan),
upstream's examples/arm/executor_runner pools (method 60 MiB, temp 2 MiB, or 64 MiB
plus a 384 KiB fast scratch in Dedicated_Sram) and the model's intrinsic need
(planned buffers + NPU scratch + fast scratch + IO). Goal: kit pools <= 1.10x need.

Run: pytest tests/bench_runner.py -s -m benchmark
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from runner_build import EXTERNALS, build_runner, generate

pytestmark = [pytest.mark.benchmark]

MIB = 1024 * 1024
UPSTREAM_METHOD_POOL = 60 * MIB
UPSTREAM_TEMP = {"Dedicated_Sram": 64 * MIB}
UPSTREAM_TEMP_DEFAULT = 2 * MIB
UPSTREAM_FAST_SCRATCH = 384 * 1024  # Dedicated_Sram only
POOL_ROLES = {"scratch", "fast_scratch", "method_pool", "planned", "input", "output"}


def intrinsic_need(info: dict[str, Any], plan: dict[str, Any]) -> int:
    method = info["methods"][0]
    # memory-planned IO is already inside the planned buffers: count only the rest
    io = sum(t["nbytes"] for t in method["inputs"] + method["outputs"] if not t.get("planned"))
    fast = sum(b["size"] for b in plan["buffers"] if b["role"] == "fast_scratch")
    return int(sum(method["planned_buffers"]) + info["peak_scratch"] + fast + io)


def elf_ram_and_text(elf: Path, plan: dict[str, Any]) -> tuple[dict[str, int], int]:
    """RAM per region (NOLOAD + data sections, network and free-space markers excluded)."""
    from elftools.elf.elffile import ELFFile

    regions = [r for r in plan["regions"]]
    ram: dict[str, int] = {}
    text = 0
    with elf.open("rb") as f:
        for sec in ELFFile(f).iter_sections():
            flags = sec["sh_flags"]
            if not flags & 0x2 or sec["sh_size"] == 0:  # SHF_ALLOC
                continue
            if flags & 0x4:  # SHF_EXECINSTR
                text += sec["sh_size"]
                continue
            if sec.name.endswith(".unused_space") or sec.name == ".kit.network":
                continue
            if sec["sh_type"] != "SHT_NOBITS" and not flags & 0x1:  # read-only data
                continue
            addr = sec["sh_addr"]
            for r in regions:
                if r["base"] <= addr < r["base"] + r["size"]:
                    ram[r["name"]] = ram.get(r["name"], 0) + sec["sh_size"]
    return ram, text


@pytest.mark.parametrize(
    ("fixture", "board"),
    [
        ("pte_u55_shared", "cs300"),
        ("pte_u65_dedicated", "cs300"),
        ("pte_u85_dedicated", "cs320"),
    ],
)
def test_bench_runner_ram(
    request: pytest.FixtureRequest, tmp_path: Path, fixture: str, board: str
) -> None:
    pte: Path = request.getfixturevalue(fixture)
    project = generate(pte, tmp_path / "fw", board=board)
    plan = json.loads((project / "memory_plan.json").read_text())
    info = json.loads((project / "model_info.json").read_text())
    mode = plan["mode"]

    need = intrinsic_need(info, plan)
    pools = sum(b["size"] for b in plan["buffers"] if b["role"] in POOL_ROLES)
    stack_heap = sum(b["size"] for b in plan["buffers"] if b["role"] in ("stack", "heap"))
    upstream = UPSTREAM_METHOD_POOL + UPSTREAM_TEMP.get(mode, UPSTREAM_TEMP_DEFAULT)
    if mode == "Dedicated_Sram":
        upstream += UPSTREAM_FAST_SCRATCH

    def row(label: str, value: int, note: str = "") -> None:
        print(f"{label:62s} {value:>10d} B  {note}")

    temp = "temp 64 MiB + fast 384 KiB" if mode == "Dedicated_Sram" else "temp 2 MiB"
    print(f"\n== bench_runner {fixture} {board} {mode} ({info['file_bytes']} B pte)")
    row("model intrinsic need (planned + scratch + fast scratch + IO)", need)
    row(
        "kit pools (method, temp, fast, planned, IO)",
        pools,
        f"= {pools / need:.3f}x need (goal <= 1.10)",
    )
    row(
        "kit pools + stack + heap (plan)",
        pools + stack_heap,
        f"= {(pools + stack_heap) / need:.2f}x need",
    )
    row(
        f"upstream runner pools (method 60 MiB + {temp})",
        upstream,
        f"= {upstream / need:.0f}x need, {upstream / pools:.0f}x the kit's pools",
    )
    for b in plan["buffers"]:
        if b["role"] in POOL_ROLES:
            print(f"  {b['name']:12s} {b['size']:>9d} B in {b['region']:5s} {b['why']}")

    if all(os.environ.get(n) for n in EXTERNALS):
        elf = build_runner(project, npu="driver")
        ram, text = elf_ram_and_text(elf, plan)
        total = sum(ram.values())
        print(
            f"ELF: RAM {total} B ({', '.join(f'{k} {v}' for k, v in sorted(ram.items()))}), "
            f"text {text} B; RAM = {total / need:.3f}x need"
        )
    else:
        print("ELF: not linked (EXECUTORCH_ROOT/ETHOSU_DRIVER_ROOT/CMSIS_ROOT unset): plan figures")
    assert pools >= need, "the plan must cover the model's need"
