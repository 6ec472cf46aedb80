"""Cold-boot images whose code runs from RAM ([boot] code = "copy", docs/boards.md).

The example port docs/examples/boards/mps2-an386 with `code = "copy"`: the plan stores
the code in FLASH and runs it from RAM (its SRAM, executable on the M-profile default
memory map, which QEMU models), the start-up copies it at reset from a Reset_Handler kept
in FLASH with the vectors and the copy tables; check-elf proves it, and the bring-up and
the self-test (its Sram_Only network copied too) pass in QEMU from the flash artefacts
alone with every RAM poisoned. Checked-in ptes, real cross compiler, real QEMU 7.2.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from ethosu_kit.board.loader import parse_board
from ethosu_kit.cli.app import main
from ethosu_kit.core.errors import BoardError
from ethosu_kit.firmware.elf_check import check_elf
from ethosu_kit.firmware.flash import manifest_path, read_manifest
from ethosu_kit.firmware.qemu import run_elf
from fw_helpers import REPO, need_cross_gcc, need_qemu
from projects import gen_argv, make_project

AN386 = REPO / "docs" / "examples" / "boards" / "mps2-an386"
SRAM_EXEC = 'size = "4 MiB"\nexecutable = true\ndescription = "ZBT'


def _board(boot: str, *, sram_executable: bool = True) -> str:
    """The AN386 port's board.toml with `boot` after `from = "nv"`; its SRAM executable
    (it is, on the default memory map: QEMU runs code from 0x20000000)."""
    text = (AN386 / "board.toml").read_text()
    text = text.replace('from = "nv"                 # cold boot', f'from = "nv"\n{boot}  #')
    if sram_executable:
        text = text.replace('size = "4 MiB"\ndescription = "ZBT', SRAM_EXEC)
    return text


def _the_one(messages: list[str], pattern: str, match: Callable[..., object] = re.search) -> None:
    """`messages` holds one message, in which `match` (re.search unless given) finds `pattern`."""
    assert len(messages) == 1, messages
    assert match(pattern, messages[0]), messages[0]


def _port(tmp_path: Path, boot: str, **kw: bool) -> Path:
    board = tmp_path / "board"
    shutil.copytree(AN386, board)
    (board / "board.toml").write_text(_board(boot, **kw))
    return board


# -- the board data ---------------------------------------------------------------------


def test_code_copy_is_read_and_checked() -> None:
    board = parse_board(_board('code = "copy"\ncode_region = "SRAM"'), "b.toml", AN386)
    assert board.code_copied and board.boot is not None
    assert board.boot.code_region == "SRAM"
    default = parse_board(_board(""), "b.toml", AN386)
    assert not default.code_copied and default.boot is not None
    assert default.boot.code.value == "xip" and default.boot.code_region is None
    cases = {
        'code = "copy"\ncode_region = "FLASH"': "region 'FLASH' is not volatile, writable and "
        'executable RAM the CPU reaches: code = "copy" runs the code from such RAM '
        "(SRAM, PSRAM)",
        'code = "copy"\ncode_region = "ITCM"': "no region named 'ITCM'",
        'code_region = "SRAM"': 'only with code = "copy"',
        'code = "rom"': "unknown value 'rom'; expected one of: xip, copy",
    }
    for boot, message in cases.items():
        with pytest.raises(BoardError) as exc:
            parse_board(_board(boot), "bad.toml", AN386)
        assert message in str(exc.value), str(exc.value)
    loader = _board('code = "copy"').replace('from = "nv"', 'from = "loader"')
    with pytest.raises(BoardError, match=r'boot\.code: "copy" is for a cold boot'):
        parse_board(loader, "bad.toml", AN386)


def test_a_plan_without_the_choice_writes_no_code_key(
    data_pte_u55_shared: Path, tmp_path: Path
) -> None:
    """The new [boot] keys reach memory_plan.json only when set: the plans of every board
    without them read and hash as before (tests/test_golden.py)."""
    plain = make_project(data_pte_u55_shared, tmp_path / "xip", board=AN386, app="bringup")
    assert set(plain.plan()["board_data"]["boot"]) == {
        "vector_region", "vector_address", "image_from",
    }  # fmt: skip
    assert (plain.generated / "kit_sections.h").read_text().count("BOOT_TEXT") == 0
    assert ".text.boot" not in (plain.generated / "linker.ld").read_text()
    board = _port(tmp_path, 'code = "copy"\ncode_region = "SRAM"')
    copy = make_project(data_pte_u55_shared, tmp_path / "copy", board=board, app="bringup")
    boot = copy.plan()["board_data"]["boot"]
    assert (boot["code"], boot["code_region"]) == ("copy", "SRAM")


def test_the_plan_refuses_code_that_does_not_fit_the_ram(
    data_pte_u55_shared: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    board = _port(tmp_path, 'code = "copy"\ncode_region = "PSRAM"')
    text = (board / "board.toml").read_text()
    (board / "board.toml").write_text(text.replace('size = "16 MiB"', 'size = "16 KiB"'))
    capsys.readouterr()
    argv = gen_argv(data_pte_u55_shared, tmp_path / "p", board=board, app="bringup")
    assert main(argv) == 3
    errors = [line for line in capsys.readouterr().err.splitlines() if "error" in line]
    _the_one(
        errors,
        r'error: .*board.toml: \[boot\] code = "copy": the code \(32,768 bytes kept for app '
        r"bringup\) does not fit in PSRAM \(0x21000000, 16 KiB, 16,384 bytes free\)",
    )
    # the code is smaller than the app's estimate: say so, and it is planned there
    project = make_project(
        data_pte_u55_shared, tmp_path / "q", board=board, app="bringup", code_reserve="8KiB"
    )
    code = project.buffers()["code"]
    assert (code["region"], code["load_region"]) == ("PSRAM", "FLASH")
    assert "8192 B kept free in PSRAM" in code["why"]


# -- build, check-elf, run ------------------------------------------------------------------


@pytest.mark.firmware
def test_code_copied_into_sram_boots_cold(
    data_pte_u55_shared: Path,
    data_pte_u55_sram_only: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    need_cross_gcc()
    need_qemu()
    from ethosu_kit.firmware.build import build_project

    board = _port(tmp_path, 'code = "copy"\ncode_region = "SRAM"')
    project = make_project(data_pte_u55_shared, tmp_path / "b", board=board, app="bringup")
    code = project.buffers()["code"]
    assert (code["region"], code["load_region"]) == ("SRAM", "FLASH")
    note = next(n for n in project.plan()["notes"] if n.startswith("cold boot"))
    assert "stored in FLASH, copied to SRAM at reset and run there" in note, note
    assert "the reset code (.text.boot) and the copy tables stay in FLASH" in note
    report = (project.path / "memory_report.txt").read_text()
    assert "code (linker-sized) [loaded from FLASH]" in report
    json_report = json.loads((project.path / "memory_report.json").read_text())
    flash = next(r for r in json_report["regions"] if r["name"] == "FLASH")
    assert flash["used"] >= 32 * 1024  # the code's image is counted where it is stored
    script = (project.generated / "linker.ld").read_text()
    assert re.search(r"\.text\.boot : ALIGN\(4\)\n  \{\n    KEEP", script)
    assert re.search(r"\.text : ALIGN\(16\)\n  \{[^}]*\} > SRAM AT> FLASH", script)

    elf = build_project(project.path, app="bringup")
    result = check_elf(elf, project.plan_path)
    assert result.ok, [v.message for v in result.violations]
    assert result.cold_boot == ("FLASH",)
    text = next(c for c in result.copied if c[0] == ".text")
    assert text[2] == "FLASH" and text[4] == "SRAM" and text[1] > 4096
    (artefact,) = read_manifest(manifest_path(elf)).files
    assert artefact.region == "FLASH" and artefact.size > text[1]  # the code's bytes in it
    run = run_elf(elf, cold_boot=True)
    assert run.exit_code == 0 and "BRINGUP PASS" in run.output, run.output
    assert "-kernel" not in run.command

    # the self-test in Sram_Only: code and network both copied into SRAM at reset
    project = make_project(
        data_pte_u55_sram_only, tmp_path / "s", board=board, app="selftest", npu="virtual"
    )
    buffers = project.buffers()
    assert (buffers["network"]["region"], buffers["network"]["load_region"]) == ("SRAM", "FLASH")
    capsys.readouterr()
    assert main(["build", str(project.path), "--app", "selftest"]) == 0
    elf = Path(capsys.readouterr().out.strip().splitlines()[-1])
    assert main(["check-elf", str(elf)]) == 0
    out = capsys.readouterr().out
    assert re.search(r"ok: copied at reset: \.text [\d,]+ B, FLASH 0x0000\w+ -> SRAM 0x2", out)
    assert re.search(r"ok: copied at reset: \.kit\.network [\d,]+ B, FLASH 0x\w+ -> SRAM", out)
    assert main(["run", str(elf), "--cold-boot"]) == 0
    captured = capsys.readouterr()
    assert "SELFTEST PASS" in captured.out, captured.out

    # the reset code left to .text (so in SRAM, filled by the copy it would have to do):
    # check-elf names the reset handler and the RAM
    script_path = project.generated / "linker.ld"
    script, n = re.subn(
        r"\n *KEEP\(\*\(\.text\.boot \.text\.boot\.\*\)\)", "", script_path.read_text()
    )
    assert n == 1
    script_path.write_text(script)
    assert main(["build", str(project.path), "--app", "selftest"]) == 0
    capsys.readouterr()
    result = check_elf(elf, project.plan_path)
    _the_one(
        [v.message for v in result.violations],
        r"cold boot: the reset handler \(the reset vector\) at 0x2\w{7} is in SRAM, stored "
        r"elsewhere: it runs before the reset copy, when that memory holds garbage",
        re.fullmatch,
    )


# -- an ITCM (generated files only) ---------------------------------------------------------

M55 = REPO / "tests" / "data" / "boards" / "custom_m55.toml"


def _m55(tmp_path: Path, boot: str) -> Path:
    """The test board custom_m55 (256 KiB ITCM "CODE", FLASH at 0x10000000) booting cold
    from FLASH with `boot`."""
    text = M55.read_text().replace(
        "[[region]]", f'[boot]\nvector_region = "FLASH"\nfrom = "nv"\n{boot}\n\n[[region]]', 1
    )
    text = text.replace("ethos-u55 = [64]", "ethos-u55 = [128]")  # the checked-in pte's
    board = tmp_path / "m55.toml"
    board.write_text(text)
    return board


def test_code_copied_into_an_itcm(
    data_pte_u55_shared: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The default RAM is the ITCM when the code's reserve fits (selftest: 192 KiB), the
    next executable RAM when not (the runner's 320 KiB: PSRAM); a named one that is too
    small is refused. Both linker renderings keep the reset code and the tables in FLASH."""
    board = _m55(tmp_path, 'code = "copy"')
    project = make_project(data_pte_u55_shared, tmp_path / "s", board=board, app="selftest")
    code = project.buffers()["code"]
    assert (code["region"], code["load_region"]) == ("CODE", "FLASH")
    script = (project.generated / "linker.ld").read_text()
    assert re.search(
        r"\.text\.boot : ALIGN\(4\)\n  \{[^}]*__copy_table_start__[^}]*\} > FLASH", script
    )
    assert "LONG(LOADADDR(.text)) LONG(ADDR(.text)) LONG(SIZEOF(.text))" in script
    # .text (with .rodata), .rel.dyn, .ARM.extab, .ARM.exidx, .init_array
    assert script.count("> CODE AT> FLASH") == 5, script
    header = (project.generated / "kit_sections.h").read_text()
    assert '#define KIT_SECTION_BOOT_TEXT ".text.boot"' in header
    scatter = (project.generated / "scatter.sct").read_text()
    boot = scatter.index("KIT_BOOT AlignExpr(ImageLimit(KIT_VECTORS), 16)")
    assert scatter.index("LR_KIT_FLASH 0x10000000") < boot < scatter.index("KIT_CODE 0x00000000")
    assert "* (.text.boot)" in scatter and "* (InRoot$$Sections)" in scatter[boot:]

    runner = make_project(data_pte_u55_shared, tmp_path / "r", board=board, app="executor_runner")
    assert runner.buffers()["code"]["region"] == "PSRAM"
    named = _m55(tmp_path, 'code = "copy"\ncode_region = "CODE"')
    capsys.readouterr()
    argv = gen_argv(data_pte_u55_shared, tmp_path / "n", board=named, app="executor_runner")
    assert main(argv) == 3
    err = capsys.readouterr().err
    assert "does not fit in CODE (0x00000000, 256 KiB, 262,144 bytes free)" in err, err
