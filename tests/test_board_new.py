"""`ethosu-kit new-board` and `boards DIR`: a board folder from a pack + SVD, from an existing
board, and the TODOs, hooks and readiness `boards` reports. (Building what it drafts with the
real cross compiler and running it in QEMU: tests/test_fw_new_board.py.)"""

from __future__ import annotations

import json
import shutil
from dataclasses import asdict
from pathlib import Path

import pytest

from ethosu_kit.board.draft.cmsis_pack import load_device
from ethosu_kit.board.draft.facts import Source
from ethosu_kit.board.draft.new_board import (
    Choices,
    apply_choices,
    apply_svd,
    draft_from_board,
    draft_from_pack,
    finish,
    validate,
)
from ethosu_kit.board.draft.svd import find_console, find_npu, load_svd, npu_kind, uart_kind
from ethosu_kit.board.loader import load_board
from ethosu_kit.board.schema import SCHEMA, keys
from ethosu_kit.cli.app import main
from ethosu_kit.core.errors import BoardError
from projects import make_project

DATA = Path(__file__).parent / "data"
PDSC = DATA / "test_soc.pdsc"
SVD = DATA / "test_soc.svd"
PACK = ["--pack", str(PDSC), "--device", "TestSoC-E7"]


def _new(tmp_path: Path, *args: str, name: str = "testsoc", folder: str = "board") -> Path:
    out = tmp_path / folder
    assert main(["new-board", name, "-o", str(out), *args]) == 0
    return out


def _error(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """Run a command that must fail; return its one error line (and the hint, if any)."""
    assert main(list(argv)) != 0
    err = capsys.readouterr().err.splitlines()
    assert err and err[0].startswith("error: "), err
    assert len(err) <= 2 and all(line.startswith("hint: ") for line in err[1:]), err
    return "\n".join(err)


def test_svd_peripherals() -> None:
    svd = load_svd(SVD)
    assert svd.cpu is not None
    assert (svd.cpu.dcache, svd.cpu.icache, svd.cpu.irqs) == (True, True, 96)
    npu = find_npu(svd)  # ETHOSU_S + ETHOSU_NS are one NPU; the timing adapter is not one
    assert npu is not None
    assert (npu.base, npu.base_ns, npu.irq) == (0x58102000, 0x48102000, 56)
    assert npu_kind(npu) == "ethos-u55"
    ns = find_npu(svd, secure=False)
    assert ns is not None and (ns.base, ns.base_ns) == (0x48102000, None)
    uart0 = find_console(svd, "UART0")
    assert uart0 is not None and (uart0.base, uart0.base_ns) == (0x59303000, 0x49303000)
    assert uart_kind(uart0) == "cmsdk-apb"
    serial2 = find_console(svd, "serial2")
    assert serial2 is not None and uart_kind(serial2) == "pl011"
    lpuart = find_console(svd, "LPUART3")
    assert lpuart is not None and uart_kind(lpuart) is None  # no driver: a custom console
    with pytest.raises(BoardError, match=r"4 peripherals could be the console UART: LPUART3, "
                       r"SERIAL2, UART0, UART1") as info:  # fmt: skip
        find_console(svd)
    assert info.value.hint and "--console-peripheral" in info.value.hint
    with pytest.raises(BoardError, match=r"no <peripheral> named 'UART7'"):
        find_console(svd, "UART7")


def test_new_board_from_pack_and_svd(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = _new(tmp_path, *PACK, "--console-peripheral", "UART0", "--npu", "ethos-u55-128")
    printed = capsys.readouterr().out
    assert "note: SVD: " in printed and "(named by the pack)" in printed
    assert "TODO, blocking: none" in printed
    board = load_board(out)
    assert board.todo == ()
    # Dmve="FP_MVE" and Dclock="200000000" read from the pdsc (issue 17 item 4)
    assert (board.cpu.core, board.cpu.fpu, board.cpu.mve) == ("cortex-m55", "dp", "fp")
    assert board.cpu.clock_hz == 200_000_000
    assert (board.cpu.dcache, board.cpu.icache, board.cpu.irqs) == (True, True, 96)  # the SVD
    assert board.cpu.trustzone
    assert (board.npu.base, board.npu.base_ns, board.npu.irq) == (0x58102000, 0x48102000, 56)
    assert board.npu.kinds == ("ethos-u55",) and board.npu.macs == {"ethos-u55": (128,)}
    assert (board.console.kind, board.console.base) == ("cmsdk-apb", 0x59303000)
    assert board.boot is not None and board.boot.vector_region == "ITCM_S"  # startup="1"
    assert [r.name for r in board.regions] == [
        "ITCM_S", "BOOT_ROM_S", "DTCM_S", "SRAM0_S", "FLASH", "HYPERRAM_S"]  # fmt: skip
    text = (out / "board.toml").read_text()
    assert 'mve = "fp"\n' in text and "clock_hz = 200000000\n" in text
    # RAMs are volatile and not loadable, but for the one the pack marks startup="1"
    loadable = {r.name: r.loadable for r in board.regions}
    assert loadable == {"ITCM_S": True, "BOOT_ROM_S": False, "DTCM_S": False,
                        "SRAM0_S": False, "FLASH": True, "HYPERRAM_S": False}  # fmt: skip
    assert sorted(p.name for p in out.iterdir()) == ["board.toml"]  # every hook has a default


def test_svd_uart_without_a_kit_driver_gets_a_stub(tmp_path: Path) -> None:
    out = _new(tmp_path, *PACK, "--console-peripheral", "LPUART3")
    board = load_board(out)
    assert board.console.kind == "custom" and board.port.hooks == ("console",)
    stub = (out / "console.c").read_text()
    assert "#define BOARD_CONSOLE_BASE 0x5930b000u" in stub and "LPUART3" in stub
    pl011 = load_board(_new(tmp_path, *PACK, "--console-peripheral", "SERIAL2", folder="p"))
    assert (pl011.console.kind, pl011.console.base) == ("pl011", 0x5930A000)


def test_unknown_npu_is_a_blocking_todo(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pdsc = tmp_path / "pack" / "test_soc.pdsc"  # the pack without its SVD beside it
    pdsc.parent.mkdir()
    shutil.copy(PDSC, pdsc)
    out = _new(tmp_path, "--pack", str(pdsc), "--device", "TestSoC-E7")
    printed = capsys.readouterr().out
    assert "names the SVD test_soc.svd; not found next to the .pdsc" in printed
    board = load_board(out)
    assert board.todo == ("npu.base", "npu.irq")
    assert board.console.kind == "none"
    assert main(["boards", str(out)]) == 0
    report = capsys.readouterr().out
    assert "TODO, blocking (2)" in report
    assert "npu.base                 blocks builds with --npu driver" in report
    assert "console.kind" in report and "nothing is printed" in report
    ready = report[report.index("ready:") :]
    assert "build --app bringup                              yes" in ready
    assert "no: npu.base is TODO, npu.irq is TODO" in ready
    assert "ethosu-kit run --probe KIND (the board)" in ready  # no [qemu]: the probe path
    # a blocking TODO survives a copy, and a TODO boot region blocks every build
    text = (out / "board.toml").read_text()
    (out / "board.toml").write_text(
        text.replace('vector_region = "ITCM_S"', 'vector_region = "TODO"')
    )
    copy = load_board(_new(tmp_path, "--from", str(out), folder="copy"))
    assert copy.todo == ("npu.base", "npu.irq", "boot.vector_region")
    assert main(["boards", str(tmp_path / "copy")]) == 0
    assert "build --app bringup                              no: boot.vector_region is TODO" in (
        capsys.readouterr().out
    )


EXAMPLES = Path(__file__).resolve().parents[1] / "docs" / "examples" / "boards"


def test_from_board_round_trips(tmp_path: Path) -> None:
    """Built-in boards and the example folders (with their own C) copy to equal boards."""
    sources = ["cs300", "cs320", *(str(p) for p in sorted(EXAMPLES.iterdir()) if p.is_dir())]
    assert len(sources) >= 4
    for i, builtin in enumerate(sources):
        original = load_board(builtin)
        copy = load_board(_new(tmp_path, "--from", builtin, name="copy", folder=f"b{i}"))
        a, b = asdict(original), asdict(copy)
        for key in ("name", "aliases", "description", "source", "port"):
            a.pop(key), b.pop(key)
        assert a == b, builtin
        assert (copy.port.sources, copy.port.hooks) == (original.port.sources, original.port.hooks)
        for rel in original.port.sources:
            assert (
                Path(copy.port.path(rel)).read_bytes() == Path(original.port.path(rel)).read_bytes()
            )


def test_from_board_marks_every_copied_fact_to_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A copied fact is true of the board it came from, not known of the new SoC: each is a
    default to check that `boards DIR` lists by key; a fact an option gives is not marked;
    deleting the comments once checked leaves nothing to check."""
    out = _new(tmp_path, "--from", "cs300", "--npu-irq", "12", "--qemu-machine", "mps3-an524")
    report = capsys.readouterr().out
    assert "TODO, blocking: none" in report
    keys = {line.split()[0] for line in report.splitlines() if "copied from corstone-300" in line}
    regions = {f"region[{i}]" for i in range(len(load_board("cs300").regions))}
    assert keys == {"cpu.core", "npu.base", "npu.registers.ethos-u55", "npu.registers.ethos-u65",
                    "console.kind", "boot.vector_region", "fvp"} | regions, keys  # fmt: skip
    capsys.readouterr()
    assert main(["boards", str(out)]) == 0
    listed = capsys.readouterr().out
    assert "npu.base " in listed and "region[3] 'SRAM'.base" in listed, listed
    assert "npu.irq " not in listed and "qemu.machine" not in listed  # given: --npu-irq, --qemu-...
    # the copy is still the same board (the marks are comments), and builds as it is
    assert asdict(load_board(out)).get("regions") == asdict(load_board("cs300")).get("regions")
    toml = out / "board.toml"
    toml.write_text("\n".join(line.split("  # TODO:")[0] if "# TODO: copied" in line else line
                               for line in toml.read_text().splitlines() if not line.startswith(
                                   "# TODO: copied")))  # fmt: skip
    assert main(["boards", str(out)]) == 0
    assert "defaults to check" not in capsys.readouterr().out


def test_from_folder_copies_its_own_code(tmp_path: Path) -> None:
    src = _new(tmp_path, "--from", "cs300", "--console", "custom", name="mine", folder="mine")
    (src / "inc").mkdir()
    (src / "inc" / "pins.h").write_text("#define PINS 1\n")
    (src / "board.c").write_text('#include "pins.h"\nint kit_hal_board_init(void) { return 0; }\n')
    toml = (src / "board.toml").read_text()
    toml = toml.replace('sources = ["console.c"]', 'sources = ["console.c", "board.c"]')
    toml = toml.replace('include_dirs = ["."]', 'include_dirs = [".", "inc"]')
    toml = toml.replace('hooks = ["console"]', 'hooks = ["console", "board_init"]')
    (src / "board.toml").write_text(toml)
    copy = _new(tmp_path, "--from", str(src), name="copy", folder="copy")
    board = load_board(copy)
    assert board.port.hooks == ("console", "board_init")
    assert (copy / "board.c").read_text() == (src / "board.c").read_text()
    assert (copy / "inc" / "pins.h").is_file() and (copy / "console.c").is_file()


def test_from_board_with_options_and_custom_console(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = _new(tmp_path, "--from", "cs300", "--npu", "ethos-u65-256", "--npu-base", "0x40004000",
               "--npu-irq", "12", "--console", "custom")  # fmt: skip
    board = load_board(out)
    assert board.npu.kinds == ("ethos-u65",) and board.npu.macs == {"ethos-u65": (256,)}
    assert (board.npu.base, board.npu.base_ns, board.npu.irq) == (0x40004000, None, 12)
    assert board.console.kind == "custom"
    assert board.port.hooks == ("console",) and board.port.sources == ("console.c",)
    stub = (out / "console.c").read_text()
    assert "int kit_hal_console_init(void)" in stub and "void kit_hal_console_putc(char c)" in stub
    capsys.readouterr()
    assert main(["boards", str(out)]) == 0
    report = capsys.readouterr().out
    assert "console     board    console.c" in report
    assert "TODO in the board's C (2):" in report and "console.c:" in report


def test_boards_names_a_missing_hook(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = _new(tmp_path, "--from", "cs300", "--console", "custom")
    text = (out / "board.toml").read_text()
    (out / "board.toml").write_text(text.replace('hooks = ["console"]', "hooks = []"))
    capsys.readouterr()
    assert main(["boards", str(out)]) == 0
    report = capsys.readouterr().out
    assert 'console     MISSING  [console] kind = "custom" needs the board\'s own' in report
    assert "build --app bringup                              no: hook console missing" in report


def test_existing_folder_is_not_overwritten(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = _new(tmp_path, "--from", "cs300")
    (out / "notes.txt").write_text("mine")
    (out / "board.toml").write_text("# my edits\n")
    err = _error(capsys, "new-board", "x", "-o", str(out), "--from", "cs300")
    assert f"error: {out}: exists and is not empty" in err and "--force" in err
    assert (out / "board.toml").read_text() == "# my edits\n"
    assert main(["new-board", "x", "-o", str(out), "--from", "cs300", "--force"]) == 0
    assert (out / "notes.txt").read_text() == "mine"  # --force replaces only its own files
    assert load_board(out).name == "x"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["Bad_Name", "--from", "cs300"], "board name 'Bad_Name': use lower case"),
        (["x"], "new-board needs a CPU and memory map to start from"),
        (["x", "--svd", str(SVD)], "--svd adds peripherals, not the memory map"),
        (["x", "--from", "cs300", *PACK], "--from and --pack both given"),
        (["x", "--pack", str(PDSC)], "--pack needs --device NAME"),
        (["x", "--pack", str(PDSC), "--device", "Nope"], "no <device> 'Nope' in the pack"),
        (["x", "--from", "cs300", "--npu", "ethos-u55-512"], "ethos-u55 has no 512-MAC"),
        (["x", "--from", "cs300", "--npu", "ethos-u99"], "not an Ethos-U"),
        (["x", "--from", "cs300", "--console", "pl011"], "--console pl011 needs --console-base"),
        (["x", "--from", "cs300", "--console", "uart"], "--console 'uart': not a console kind"),
        (["x", "--from", "cs300", "--console-peripheral", "UART0"], "give --svd"),
        (["x", *PACK], "4 peripherals could be the console UART"),
        (["x", *PACK, "--console-peripheral", "UART9"], "no <peripheral> named 'UART9'"),
        (["x", "--from", "cs300", "--npu-irq", "500"], "the drafted board is not valid"),
        (["x", "--from", "nope"], "unknown board 'nope'"),
    ],
)
def test_bad_arguments(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    out = tmp_path / "board"
    err = _error(capsys, "new-board", args[0], "-o", str(out), *args[1:])
    assert message in err
    assert not out.exists()  # nothing half-written


def test_bad_pack_and_svd_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = tmp_path / "broken.pdsc"
    broken.write_text(PDSC.read_text()[:-40])
    err = _error(capsys, "new-board", "x", "-o", str(tmp_path / "a"), "--pack", str(broken),
                 "--device", "TestSoC-E7")  # fmt: skip
    assert f"error: {broken}: not well-formed XML" in err and "line" in err
    svd_as_pack = _error(capsys, "new-board", "x", "-o", str(tmp_path / "b"), "--pack", str(SVD),
                         "--device", "TestSoC-E7")  # fmt: skip
    assert "not a CMSIS-Pack description (root element <device>" in svd_as_pack
    bad_svd = tmp_path / "bad.svd"
    bad_svd.write_text(SVD.read_text().replace("</peripherals>", ""))
    err = _error(capsys, "new-board", "x", "-o", str(tmp_path / "c"), *PACK, "--svd", str(bad_svd))
    assert f"error: {bad_svd}: not well-formed XML" in err
    pack_as_svd = _error(capsys, "new-board", "x", "-o", str(tmp_path / "d"), *PACK, "--svd",
                         str(PDSC))  # fmt: skip
    assert "not a CMSIS-SVD file (root element <package>" in pack_as_svd
    two_npus = tmp_path / "two.svd"
    two_npus.write_text(SVD.read_text().replace("<name>ETHOSU_TA0</name>", "<name>NPU1</name>"))
    err = _error(capsys, "new-board", "x", "-o", str(tmp_path / "e"), *PACK, "--svd",
                 str(two_npus), "--console-peripheral", "UART0")  # fmt: skip
    assert (
        "2 peripherals could be the NPU: ETHOSU (ethos-u55), NPU1 (ethos-u55)" in err
        and "--npu-peripheral" in err
    )
    missing = _error(capsys, "new-board", "x", "-o", str(tmp_path / "f"), "--pack",
                     str(tmp_path / "none.pdsc"), "--device", "D")  # fmt: skip
    assert "none.pdsc: no such file" in missing
    assert not any((tmp_path / x).exists() for x in "abcdef")


def test_hostile_pack_strings_stay_data(tmp_path: Path) -> None:
    """A device name with quotes and a newline lands escaped in strings and comments."""
    evil = 'TestSoC-E7"\n[npu]\nbase = 0'
    pdsc = tmp_path / "evil.pdsc"
    escaped = 'Dname="TestSoC-E7&quot;&#10;[npu]&#10;base = 0"'
    pdsc.write_text(PDSC.read_text().replace('Dname="TestSoC-E7"', escaped))
    out = _new(tmp_path, "--pack", str(pdsc), "--device", evil, "--npu-base", "0x40000000",
               "--npu-irq", "3", "--console", "semihosting")  # fmt: skip
    board = load_board(out)
    assert 'TestSoC-E7" [npu] base = 0' in board.description and board.npu.base == 0x40000000
    # an SVD peripheral name lands in the C stub's comment: it cannot end the comment
    svd = tmp_path / "evil.svd"
    svd.write_text(SVD.read_text().replace("<name>LPUART3</name>", "<name>U3*/ int x; /*</name>"))
    stub = _new(tmp_path, *PACK, "--svd", str(svd), "--console-peripheral", "U3*/ int x; /*",
                folder="stub")  # fmt: skip
    text = (stub / "console.c").read_text()
    assert "int x;" in text and "*/ int x" not in text


_PACK_HEAD = """<?xml version="1.0" encoding="UTF-8"?>
<package schemaVersion="1.7.7"><vendor>V</vendor><name>N_DFP</name><description>d</description>
<url>https://example.invalid/</url><releases><release version="1.0.0">r</release></releases>
<devices><family Dfamily="F" Dvendor="V:0">"""
_PACK_TAIL = "</family></devices></package>"


def test_multi_core_device_and_unsupported_core(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pdsc = tmp_path / "dual.pdsc"
    pdsc.write_text(
        _PACK_HEAD
        + """<device Dname="DUAL">
      <processor Pname="HP" Dcore="Cortex-M55" Dfpu="DP_FPU"/>
      <processor Pname="HE" Dcore="Cortex-M55" Dfpu="DP_FPU"/>
      <memory name="ITCM_HP" access="rwx" start="0x00000000" size="0x40000" Pname="HP" startup="1"/>
      <memory name="ITCM_HE" access="rwx" start="0x00000000" size="0x10000" Pname="HE" startup="1"/>
      <memory name="SRAM0" access="rwx" start="0x02000000" size="0x400000"/>
    </device>
    <device Dname="M33"><processor Dcore="Cortex-M33" Dfpu="SP_FPU"/>
      <memory name="CODE" access="rx" start="0x10000000" size="0x80000" startup="1"/>
      <memory name="SRAM" access="rwx" start="0x20000000" size="0x80000"/></device>
    <device Dname="OLD"><processor Dcore="Cortex-M0+" Dfpu="NO_FPU"/>
      <memory name="RAM" access="rwx" start="0x20000000" size="0x1000"/></device>"""
        + _PACK_TAIL
    )
    args = ["--pack", str(pdsc), "--npu-base", "0x40000000", "--npu-irq", "1", "--console", "none"]
    err = _error(capsys, "new-board", "x", "-o", str(tmp_path / "a"), *args, "--device", "DUAL")
    assert "device DUAL has 2 processors (HP, HE)" in err and "--processor" in err
    board = load_board(_new(tmp_path, *args, "--device", "DUAL", "--processor", "HE"))
    assert [(r.name, r.size) for r in board.regions] == [("ITCM_HE", 0x10000), ("SRAM0", 0x400000)]
    m33 = load_board(_new(tmp_path, *args, "--device", "M33", folder="m33"))
    assert (m33.cpu.core, m33.cpu.fpu, m33.cpu.dsp) == ("cortex-m33", "sp", False)  # safe default
    assert "+nodsp" in m33.cpu.flags["gcc"][0]
    assert (
        "dsp = false  # TODO: the pack gives no Ddsp"
        in (tmp_path / "m33" / "board.toml").read_text()
    )
    err = _error(capsys, "new-board", "x", "-o", str(tmp_path / "b"), *args, "--device", "OLD")
    assert "processor cortex-m0+ is not a core the kit builds for" in err


def test_a_pack_with_no_non_volatile_memory_says_how_such_a_part_boots(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A part whose boot ROM copies the image from an external flash into RAM (Himax WE2:
    TCMs and SRAMs only in its pack): vector_region stays blocking, and its comment says
    how to write such a part instead of naming a memory it does not have."""
    pdsc = tmp_path / "ram_only.pdsc"
    pdsc.write_text(
        _PACK_HEAD
        + """<device Dname="RAMONLY"><processor Dcore="Cortex-M55" Dfpu="DP_FPU"/>
      <memory name="ITCM_S" access="rws" start="0x10000000" size="0x40000"/>
      <memory name="SRAM0_S" access="rws" start="0x34000000" size="0x100000"/></device>"""
        + _PACK_TAIL
    )
    args = ["--pack", str(pdsc), "--device", "RAMONLY", "--npu-base", "0x40000000"]
    out = _new(tmp_path, *args, "--npu-irq", "1", "--console", "none")
    text = (out / "board.toml").read_text()
    line = next(x for x in text.splitlines() if x.startswith("vector_region"))
    assert "the pack lists no non-volatile memory" in line, line
    assert 'from = "loader" and loadable = true' in line, line
    # a device whose pack names no SVD (Alif's E1C): naming a peripheral says so, and
    # how to give the facts instead
    err = _error(
        capsys, "new-board", "x", "-o", str(tmp_path / "p"), *args, "--console-peripheral", "UART4"
    )
    assert "the pack names no SVD for this device" in err
    assert "hint: give --svd FILE.svd" in err and "--npu-base ADDR" in err


def test_from_a_stand_in_board_with_another_machine_drops_the_stand_in(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Corstone-320's [qemu] is a stand-in (mps3-an547 with its map laid out anew): a board
    drafted from it for another machine keeps neither the stand-in's text nor its layout;
    drafted without --qemu-machine, both are marked as copied."""
    out = _new(tmp_path, "--from", "cs320", "--qemu-machine", "mps3-an524", folder="other")
    board = load_board(out)
    assert board.qemu is not None and board.qemu.machine == "mps3-an524"
    assert not board.qemu.stand_in and not board.qemu_layout
    capsys.readouterr()
    out = _new(tmp_path, "--from", "cs320", folder="same")
    report = capsys.readouterr().out
    assert "qemu.machine " in report and "qemu.layout " in report, report
    assert load_board(out).qemu_layout == load_board("cs320").qemu_layout


def test_draft_records_where_each_fact_came_from(tmp_path: Path) -> None:
    """Draft.sources: the pack's CPU and map, the SVD's peripherals, the user's options,
    the kit's defaults; a fact a real source gives is no longer a checked default."""
    device = load_device(PDSC, "TestSoC-E7")
    d = draft_from_pack(device, PDSC, "x", "auto")
    assert d.sources["cpu.core"] is Source.PACK
    assert d.sources["cpu.clock_hz"] is Source.PACK and "cpu.clock_hz" not in d.todo
    choices = Choices(console="none")
    apply_svd(d, load_svd(SVD), choices)
    assert d.sources["npu.base"] is Source.SVD and "npu.base" not in d.todo
    apply_choices(d, Choices(npu="ethos-u55-128", console="none"))
    finish(d)
    assert d.sources["npu.kinds"] is Source.USER
    assert d.sources["console.kind"] is Source.USER and "console.kind" not in d.todo
    assert d.npu.kinds == ("ethos-u55",) and d.npu.macs == {"ethos-u55": (128,)}


def test_draft_sources_are_schema_keys() -> None:
    """Provenance names facts as board/schema.py does: no third spelling of a key. A
    per-kind key (npu.macs.<kind>) names its schema table and the kind."""
    d = draft_from_board(load_board("corstone-300"), "x")
    apply_choices(d, Choices(npu="ethos-u55-128", console="none"))
    finish(d)
    device = load_device(PDSC, "TestSoC-E7")
    p = draft_from_pack(device, PDSC, "x", "auto")
    apply_svd(p, load_svd(SVD), Choices(console_peripheral="UART0"))
    finish(p)
    top = {k.name for k in SCHEMA[""]}
    for key in [*d.sources, *d.todo, *p.sources, *p.todo]:
        table, _, name = key.rpartition(".")
        if key in top or table in ("npu.macs", "npu.registers", "qemu.layout"):
            continue
        assert table in SCHEMA and name in keys(table), key


def test_draft_validates_from_memory(tmp_path: Path) -> None:
    """The drafted folder is loaded with the real loader before anything is written: its
    [port] paths are checked against the files about to be written, not a folder."""
    toml = (Path(__file__).parents[1] / "boards" / "corstone-300" / "board.toml").read_text()
    toml = toml.replace(
        "sources = []\nhooks = []", 'sources = ["c/board.c"]\nhooks = ["board_init"]'
    )
    target = tmp_path / "never" / "board.toml"
    board = validate({"board.toml": toml.encode(), "c/board.c": b"int x;\n"}, str(target))
    assert board.port.sources == ("c/board.c",)
    with pytest.raises(BoardError, match=r"port\.sources\[0\]: 'c/board.c': no such file"):
        validate({"board.toml": toml.encode()}, str(target))
    assert not target.parent.exists()


U85_PDSC = DATA / "u85_soc.pdsc"


def test_vendor_facts_read_right(tmp_path: Path) -> None:
    """Issue 17 item 4, on a made-up device (tests/data/u85_soc.*): an Ethos-U85 known only
    by its ID/CONFIG reset values, its MACs from CONFIG, Dmve/Dclock/Ddsp/Dtz from the
    pdsc, an aliased RAM merged into one region, `rws` access on an ITCM, RAMs not
    loadable, the MRAM the load memory, a custom console's clock a TODO."""
    out = _new(tmp_path, "--pack", str(U85_PDSC), "--device", "U85SoC-1", name="u85soc")
    text = (out / "board.toml").read_text()
    board = load_board(out)
    assert board.todo == ()
    # the SVD's NPU0 names no product: CONFIG 0x20000119 = product 2, MACS_PER_CC 9
    assert board.npu.kinds == ("ethos-u85",) and board.npu.macs == {"ethos-u85": (512,)}
    assert "NPU kind: ethos-u85, from CONFIG reset value 0x20000119" in text
    assert "ethos-u85 = [512]\n" in text  # no TODO: the SVD said
    assert (board.npu.base, board.npu.irq) == (0x40200000, 40)
    # the pdsc's processor: Dmve="MVE", Dclock, Ddsp, Dtz; none left a TODO
    cpu = board.cpu
    assert (cpu.core, cpu.fpu, cpu.mve, cpu.clock_hz) == ("cortex-m55", "dp", "int", 300_000_000)
    assert cpu.dsp and cpu.trustzone
    for line in ('mve = "int"\n', "clock_hz = 300000000\n", "trustzone = true\n"):
        assert line in text
    regions = {r.name: r for r in board.regions}
    # ITCM alias="SRAM_I": one region, the alias recorded on it and in the left-out list
    assert sorted(regions) == ["DTCM", "ITCM", "MRAM", "SRAM0"]
    assert "alias SRAM_I at 0x50000000" in regions["ITCM"].description
    assert "SRAM_I 0x50000000 size 0x40000 access rws: the same memory as ITCM (alias)" in text
    # "rws": the ITCM executes (it exists to), the DTCM does not (SRAM0 spells x: the
    # pack uses the letter)
    assert regions["ITCM"].executable and not regions["DTCM"].executable
    assert regions["SRAM0"].executable
    # every RAM volatile and not loadable; the MRAM (startup="1") the load memory
    for name in ("ITCM", "DTCM", "SRAM0"):
        assert regions[name].volatile and not regions[name].loadable, name
    mram = regions["MRAM"]
    assert (mram.kind, mram.volatile, mram.loadable, mram.writable) == ("flash", False, True, False)
    assert mram.on_chip  # an MRAM is on the die, not an external flash
    assert board.boot is not None and board.boot.vector_region == "MRAM"
    # the SVD's UART2 has registers no kit driver knows: a custom console, its clock a TODO
    assert board.console.kind == "custom"
    assert "clock_hz = 25000000  # TODO: the UART's input clock" in text
    stub = (out / "console.c").read_text()
    assert "KIT_CONSOLE_CLOCK_HZ" in stub and "KIT_CONSOLE_BAUD" in stub


def test_custom_console_clock_reaches_c(tmp_path: Path, pte_u55_shared: Path) -> None:
    """[console] clock_hz/baud of a custom console are in kit_board_config.h: the drafted
    stub uses them (they were `undeclared`)."""
    out = _new(tmp_path, *PACK, "--console-peripheral", "LPUART3", "--npu", "ethos-u55-128")
    toml = out / "board.toml"
    toml.write_text(toml.read_text().replace("clock_hz = 25000000  #", "clock_hz = 48000000  #"))
    project = make_project(pte_u55_shared, tmp_path / "fw", board=out).path
    header = next(project.rglob("kit_board_config.h")).read_text()
    assert "#define KIT_CONSOLE_CLOCK_HZ 48000000u" in header
    assert "#define KIT_CONSOLE_BAUD 115200u" in header
    assert "KIT_CONSOLE_BASE" not in header  # a custom console's base is its own C's


_VARIANT_PDSC = """<?xml version="1.0"?>
<package schemaVersion="1.7.7"><vendor>V</vendor><name>W_DFP</name><description>d</description>
<url>https://example.invalid/</url>
<releases><release version="1.0.0">r</release></releases><devices>
<family Dfamily="W" Dvendor="V:1">
  <description>W family</description>
  <processor Pname="core0" Dcore="Cortex-M55" Dfpu="DP_FPU" Dmve="FP_MVE" Ddsp="DSP" Dtz="TZ"
             Dclock="400000000"/>
  <processor Pname="core1" Dcore="Cortex-M55" Dfpu="DP_FPU" Dmve="NO_MVE" Dclock="100000000"/>
  <memory name="ITCM_NS" access="rwn" start="0x00000000" size="0x40000" alias="ITCM_S"/>
  <memory name="DTCM_NS" access="rwn" start="0x20000000" size="0x40000" alias="DTCM_S"/>
  <memory name="SRAM0_NS" access="rwn" start="0x24000000" size="0x100000" alias="SRAM0_S"/>
  <memory name="ITCM_S" access="rws" start="0x10000000" size="0x40000"/>
  <memory name="DTCM_S" access="rws" start="0x30000000" size="0x40000"/>
  <memory name="SRAM0_S" access="rws" start="0x34000000" size="0x100000"/>
  <device Dname="W"><variant Dvariant="W_QFN"/><variant Dvariant="W_BGA"/></device>
</family></devices></package>
"""


def test_variant_with_security_aliases_and_no_x(tmp_path: Path) -> None:
    """A pack shaped like Himax WE2's: the processor attributes of a <variant>'s family
    per Pname, secure regions recording their non-secure alias=, and `rws`/`rwn` only
    (the pack writes x nowhere): the RAMs execute, a DTCM does not, none is loadable."""
    pdsc = tmp_path / "w.pdsc"
    pdsc.write_text(_VARIANT_PDSC)
    core0 = load_device(pdsc, "W_QFN", "core0")
    assert (core0.mve, core0.clock_hz, core0.dsp, core0.trustzone) == (
        "fp",
        400_000_000,
        True,
        True,
    )
    core1 = load_device(pdsc, "W_BGA", "core1")
    assert (core1.mve, core1.clock_hz, core1.dsp, core1.trustzone) == ("", 100_000_000, None, None)
    d = draft_from_pack(core0, pdsc, "w", "auto")
    regions = {f.region.name: f.region for f in d.regions}
    assert sorted(regions) == ["DTCM_S", "ITCM_S", "SRAM0_S"]
    assert "alias ITCM_NS at 0x00000000" in regions["ITCM_S"].description
    assert regions["ITCM_S"].executable and regions["SRAM0_S"].executable
    assert not regions["DTCM_S"].executable
    assert not any(r.loadable for r in regions.values())
    # no startup memory, no non-volatile one to suggest: a blocking TODO
    assert d.sources["boot.vector_region"] is Source.TODO and not d.known("boot.vector_region")


def test_a_drafted_u85_soc_plans_dedicated_sram(
    tmp_path: Path, data_pte_u85_dedicated: Path
) -> None:
    """Issue 17 item 4: a U85's Dedicated_Sram temp pool goes to a large on-chip SRAM (the
    draft gives an NPU-reachable SRAM npu_port = "both", with a TODO to check the bus
    matrix), the network to the MRAM beside the vectors; no off-chip DRAM needed."""
    out = _new(tmp_path, "--pack", str(U85_PDSC), "--device", "U85SoC-1", name="u85soc")
    toml = out / "board.toml"
    assert 'npu_port = "both"  # TODO' in toml.read_text()
    # the test pte is a U85-256's; the made-up SoC's CONFIG says 512 MACs
    toml.write_text(toml.read_text().replace("ethos-u85 = [512]", "ethos-u85 = [256, 512]"))
    project = make_project(data_pte_u85_dedicated, tmp_path / "fw", board=out).path
    plan = json.loads((project / "memory_plan.json").read_text())
    where = {b["name"]: b["region"] for b in plan["buffers"]}
    assert where["network"] == "MRAM" and where["temp_pool"] == "SRAM0", where
    assert where["fast_scratch"] == "SRAM0", where
