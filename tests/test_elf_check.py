"""check-elf on ELFs deliberately linked wrong: the real cross linker, modified linker scripts."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from ethosu_kit.cli.app import main as kit_main
from ethosu_kit.firmware.elf_check import check_elf
from fw_helpers import Built, built, link_command

pytestmark = pytest.mark.firmware

TEMP_POOL_HEADER = ".kit.temp_pool (NOLOAD) : ALIGN(16)"


@pytest.fixture(scope="module")
def good(pte_u55_shared: Path, tmp_path_factory: pytest.TempPathFactory) -> Built:
    return built(pte_u55_shared, "cs300", "Shared_Sram", tmp_path_factory.mktemp("elf"))


def _strip_asserts(script: str) -> str:
    """Without the kit's ASSERTs the linker accepts the bad placement; check-elf must not."""
    return re.sub(r'^[ \t]*ASSERT\(.*?"\)\n', "", script, flags=re.S | re.M)


def _relink(
    good: Built, tmp: Path, edit: Callable[[str], str], keep_asserts: bool = False
) -> subprocess.CompletedProcess[str]:
    script = (good.project / "generated" / "linker.ld").read_text()
    bad = edit(script)
    assert bad != script, "the edit changed nothing"
    if not keep_asserts:
        bad = _strip_asserts(bad)
    (tmp / "bad.ld").write_text(bad)
    cmd = link_command(good)
    cmd = re.sub(r"-T\S*linker\.ld", f"-T{tmp / 'bad.ld'}", cmd)
    cmd = re.sub(r"-o \S+\.elf", f"-o {tmp / 'bad.elf'}", cmd)
    cmd = re.sub(r"-Map=\S+", f"-Map={tmp / 'bad.map'}", cmd)
    return subprocess.run(
        cmd, shell=True, cwd=good.elf.parent, capture_output=True, text=True, check=False
    )


def _temp_pool_in(region: str) -> Callable[[str], str]:
    """The edit that sends the temp pool's output section to `region` instead of SRAM."""
    keep = "KEEP(*(.kit.temp_pool))\n  } > "
    return lambda s: s.replace(keep + "SRAM", keep + region)


def _violations(good: Built, tmp: Path, edit: Callable[[str], str]) -> list[str]:
    proc = _relink(good, tmp, edit)
    assert proc.returncode == 0, proc.stderr
    result = check_elf(tmp / "bad.elf", good.plan)
    assert not result.ok
    return [v.message for v in result.violations]


def test_good_elf_passes(good: Built, capsys: pytest.CaptureFixture[str]) -> None:
    assert kit_main(["check-elf", str(good.elf), "--plan", str(good.plan)]) == 0
    out = capsys.readouterr().out
    for region in ("ITCM", "DTCM", "SRAM", "QSPI"):
        assert region in out
    assert ".kit.temp_pool" in out


def test_scratch_in_ddr_under_shared_sram(good: Built, tmp_path: Path) -> None:
    messages = _violations(good, tmp_path, _temp_pool_in("DDR"))
    assert any(
        re.match(
            r"temp_pool: kit_temp_pool at 0x7\w+ \(\d+ bytes\) is in DDR, "
            r"the Shared_Sram plan requires SRAM",
            m,
        )
        for m in messages
    ), messages


def test_npu_buffer_in_dtcm(good: Built, tmp_path: Path) -> None:
    messages = _violations(good, tmp_path, _temp_pool_in("DTCM"))
    assert any("is in DTCM, the Shared_Sram plan requires SRAM" in m for m in messages), messages
    assert any("a TCM the NPU cannot reach" in m for m in messages), messages


def test_misaligned_buffer(good: Built, tmp_path: Path) -> None:
    messages = _violations(
        good,
        tmp_path,
        lambda s: s.replace(TEMP_POOL_HEADER, ".kit.temp_pool 0x31000004 (NOLOAD) : SUBALIGN(4)"),
    )
    assert messages == ["temp_pool: kit_temp_pool at 0x31000004 is not 16-byte aligned (off by 4)"]


def test_overflowing_region(good: Built, tmp_path: Path) -> None:
    # SRAM declared 16 MiB in the script (the board has 2 MiB), the pool pushed to its end.
    def edit(s: str) -> str:
        s = s.replace(
            "ORIGIN = 0x31000000, LENGTH = 0x00200000", "ORIGIN = 0x31000000, LENGTH = 0x01000000"
        )
        return s.replace(
            TEMP_POOL_HEADER,
            ".kit.temp_pool ORIGIN(SRAM) + 0x200000 - 0x1000 (NOLOAD) : ALIGN(16)",
        )

    messages = _violations(good, tmp_path, edit)
    assert any(
        re.match(
            r"section \.kit\.temp_pool \(\d+ bytes at 0x311ff000\) overflows SRAM by \d+ bytes", m
        )
        for m in messages
    ), messages
    assert any(
        "temp_pool: kit_temp_pool at 0x311ff000" in m and "past the end of SRAM" in m
        for m in messages
    ), messages


def test_linker_asserts_stop_the_link(good: Built, tmp_path: Path) -> None:
    """The generated script's own ASSERTs fail the link with a clear message (PW_MUST_PLACE)."""
    proc = _relink(
        good,
        tmp_path,
        _temp_pool_in("DDR"),
        keep_asserts=True,
    )
    assert proc.returncode != 0
    assert re.search(
        r"kit: temp_pool \(kit_temp_pool, \d+ bytes\) is not inside SRAM", proc.stderr
    ), proc.stderr


def test_cli_exit_code_and_message(
    good: Built, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    proc = _relink(good, tmp_path, _temp_pool_in("DDR"))
    assert proc.returncode == 0, proc.stderr
    code = kit_main(["check-elf", str(tmp_path / "bad.elf"), "--plan", str(good.plan), "-q"])
    err = capsys.readouterr().err
    assert code == 4
    assert "error: " in err and "is in DDR, the Shared_Sram plan requires SRAM" in err
    assert "hint: the linker script must place section .kit.temp_pool in SRAM" in err


def test_not_an_elf(tmp_path: Path, good: Built, capsys: pytest.CaptureFixture[str]) -> None:
    junk = tmp_path / "junk.elf"
    junk.write_bytes(b"not an elf at all")
    assert kit_main(["check-elf", str(junk), "--plan", str(good.plan)]) == 2
    assert "not an ELF file" in capsys.readouterr().err


def test_the_npu_ports_are_shown_and_checked(
    good: Built, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """check-elf lists each NPU buffer's region and port, and refuses a plan whose board
    puts the network where the port its QCONFIG/REGIONCFG_0 pick does not reach."""
    assert kit_main(["check-elf", str(good.elf), "--plan", str(good.plan)]) == 0
    out = capsys.readouterr().out
    assert "network in QSPI (ext): over ext (QCONFIG = 2, REGIONCFG_0 = 3)" in out
    assert "temp_pool in SRAM (both): over sram (REGIONCFG_1 = 0)" in out
    assert "NPU AXI ports: SRAM both, QSPI ext, DDR ext" in out
    plan = json.loads(good.plan.read_text())
    for r in plan["board_data"]["regions"]:
        if r["name"] == "QSPI":
            r["npu_port"] = "sram"  # a board that wires its flash to the NPU's SRAM port
    edited = tmp_path / "memory_plan.json"
    edited.write_text(json.dumps(plan))
    result = check_elf(good.elf, edited)
    assert [v.message for v in result.violations] == [
        'network: QSPI (npu_port = "sram") is not on the NPU\'s "ext" port, which '
        "QCONFIG = 2 picks for network"
    ]
