"""Boards as data: the built-in board files, a custom one, and every way a file can be wrong."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ethosu_kit.board.loader import builtin_boards, load_board, stand_in_board
from ethosu_kit.board.model import RegionKind
from ethosu_kit.core.errors import BoardError
from ethosu_kit.core.paths import boards_dir

DATA = Path(__file__).parent / "data" / "boards"
CUSTOM = DATA / "custom_m55.toml"
KIB, MIB = 1 << 10, 1 << 20


def test_builtin_boards_and_aliases() -> None:
    names = {b.name for b in builtin_boards()}
    assert names == {"corstone-300", "corstone-320"}
    assert load_board("cs300") is load_board("corstone-300")
    assert load_board("CS320").name == "corstone-320"
    assert load_board(boards_dir() / "corstone-300" / "board.toml").name == "corstone-300"


def _regions(name: str) -> dict[str, tuple[int, int]]:
    return {r.name: (r.base, r.size) for r in load_board(name).regions}


def test_corstone_300_facts() -> None:
    b = load_board("cs300")
    assert _regions("cs300") == {
        "ITCM": (0x10000000, 512 * KIB),
        "BRAM": (0x11000000, 1 * MIB),
        "DTCM": (0x30000000, 512 * KIB),
        "SRAM": (0x31000000, 2 * MIB),
        "QSPI": (0x38000000, 8 * MIB),
        "DDR": (0x70000000, 256 * MIB),
    }
    assert (b.npu.base, b.npu.base_ns, b.npu.irq) == (0x58102000, 0x48102000, 56)
    assert (b.console.kind, b.console.base, b.console.base_ns) == (
        "cmsdk-apb", 0x59303000, 0x49303000)  # fmt: skip
    assert b.qemu is not None and (b.qemu.machine, b.qemu.cpu) == ("mps3-an547", "cortex-m55")
    assert b.boot is not None and (b.boot.vector_region, b.boot.vector_address) == (
        "ITCM", 0x10000000)  # fmt: skip
    assert (b.cpu.irqs, b.cpu.fpu, b.cpu.mve, b.cpu.trustzone) == (96, "dp", "fp", True)
    assert b.schema == 2 and b.port.sources == () and b.port.hooks == ()
    assert b.npu.supports("ethos-u55", 128) and b.npu.supports("ethos-u65", 512)
    assert not b.npu.supports("ethos-u85")
    assert ("ethos-u55", "Dedicated_Sram") not in b.npu.registers
    assert b.npu.registers[("ethos-u65", "Dedicated_Sram")].qconfig == 3
    assert "-mcpu=cortex-m55" in b.cpu.flags["gcc"]


def test_corstone_320_facts() -> None:
    b = load_board("cs320")
    regions = _regions("cs320")
    assert regions["ITCM"] == (0x10000000, 32 * KIB)
    assert regions["BROM"] == (0x11000000, 128 * KIB)
    assert regions["BRAM"] == (0x12000000, 2 * MIB)
    assert regions["DTCM"] == (0x30000000, 32 * KIB)
    assert regions["SRAM"] == (0x31000000, 4 * MIB)
    assert regions["DDR"] == (0x70000000, 256 * MIB)
    assert (b.npu.base, b.npu.irq, b.npu.kinds) == (0x50004000, 16, ("ethos-u85",))
    # no QEMU machine models it: mps3-an547 stands in, with the map laid onto it
    assert b.qemu is not None and b.qemu.machine == "mps3-an547" and b.qemu.stand_in
    assert b.qemu.cpu == "cortex-m55" and b.qemu.layout is not None
    assert b.boot is not None and b.boot.vector_region == "BROM"
    # Debian's GCC 12.2 has no cortex-m85: the board spells out the M85's ISA for it.
    assert "-march=armv8.1-m.main+mve.fp+fp.dp" in b.cpu.flags["gcc"]
    assert "-mcpu=cortex-m85" in b.cpu.flags["clang"]


def test_corstone_320_on_its_stand_in_is_its_parsed_layout() -> None:
    """The stand-in board (gen --qemu-stand-in) is the board with its [qemu.layout] as
    parsed (QemuLayout) applied: BRAM where mps3-an547 has it, booting from ITCM."""
    b = load_board("cs320")
    assert b.qemu is not None and b.qemu.layout is not None
    layout = b.qemu.layout
    assert [(p.name, p.base, p.size) for p in layout.regions] == [
        ("BRAM", 0x11020000, 1920 * KIB)]  # fmt: skip
    s = stand_in_board(b)
    assert s.qemu_layout and not b.qemu_layout
    moved = {p.name: (p.base, p.size) for p in layout.regions}
    assert {r.name: (r.base, r.size) for r in s.regions} == _regions("cs320") | moved
    assert s.boot is not None and s.boot.vector_region == layout.vector_region == "ITCM"
    assert stand_in_board(s) is s
    with pytest.raises(BoardError, match=r"no \[qemu.layout\]"):
        stand_in_board(load_board("cs300"))


@pytest.mark.parametrize("name", ["cs300", "cs320"])
def test_npu_never_reaches_tcm(name: str) -> None:
    for r in load_board(name).regions:
        if r.kind in (RegionKind.ITCM, RegionKind.DTCM):
            assert not r.npu, r.name


def test_custom_board_file_with_kind_defaults() -> None:
    b = load_board(str(CUSTOM))
    assert b.name == "custom-m55" and b.source == str(CUSTOM)
    assert b.npu.base == 0x40004000 and not b.npu.secure
    sram = b.region("SRAM")
    assert sram.npu and sram.on_chip and sram.writable and sram.size == 512 * KIB
    flash = b.region("FLASH")
    assert not flash.volatile and not flash.writable and flash.npu
    assert b.glue == {"systick_hz": 48_000_000}
    # schema 1: [uart] is the console; no board.c in the folder, so no port sources
    assert b.schema == 1 and b.console.kind == "pl011" and b.console.base == 0x40100000
    assert b.port.dir == str(DATA.resolve()) and b.port.sources == ()
    assert b.cpu.fpu == "dp" and b.cpu.flags["gcc"] == (
        "-mcpu=cortex-m55+nomve.fp",
        "-mfloat-abi=hard",
    )
    assert b.cpu.flags["clang"][1] == "-mcpu=cortex-m55+nomve.fp"  # derived: no override


# a Dedicated_Sram register setting for the board's Ethos-U55, which has no such mode
U55_DEDICATED = "Dedicated_Sram = { qconfig = 3, regioncfg = [3,3,0,0,0,0,0,0] }\nSram_Only = {"

# Each malformed board: (what to change in the valid custom file, key the error names,
# words of the problem). The change is a (regex, replacement) on the file text.
BAD = {
    "overlapping regions": (
        (r"base = 0x60000000", "base = 0x10200000"),
        "region[3] 'PSRAM'",
        "overlaps region 'FLASH'",
    ),
    "region named twice": ((r'name = "PSRAM"', 'name = "SRAM"'), "region[3].name", "twice"),
    "missing key": ((r'(?m)^core = "cortex-m55"\n', ""), "cpu.core", "missing"),
    "missing npu base": ((r'(?m)^base = "0x40004000"\n', ""), "npu.base", "missing"),
    "missing npu irq": ((r"(?m)^irq = 55\n", ""), "npu.irq", "missing"),
    "negative size": ((r'size = "8 MiB"', "size = -4"), "region[3] 'PSRAM'.size", "> 0, got -4"),
    "zero size": ((r'size = "8 MiB"', "size = 0"), "region[3] 'PSRAM'.size", "> 0, got 0"),
    "wrong type": ((r"fpu = true", "fpu = 3"), "cpu.fpu", 'must be "dp", "sp" or "none"'),
    "bad fpu": ((r"fpu = true", 'fpu = "sp"'), "cpu.fpu", 'FPU is "dp" or "none"'),
    "unknown core": ((r'core = "cortex-m55"', 'core = "cortex-m99"'), "cpu.core", "unknown value"),
    "wrong arch": ((r'arch = "armv8.1-m.main"', 'arch = "armv7e-m"'), "cpu.arch", "is armv8.1-m"),
    "mve on m33": ((r'core = "cortex-m55"\narch = .*', 'core = "cortex-m33"'), "cpu.mve", "no MVE"),
    "too few irqs": ((r'mve = "int"', 'mve = "int"\nirqs = 32'), "cpu.irqs", "NPU's IRQ 55"),
    "bad flag": ((r'"-mfloat-abi=hard"\]', '"-O2 -g"]'), "cpu.flags.gcc[1]", "not one"),
    "console without base": ((r"(?m)^base = 0x40100000\n", ""), "uart.base", "missing"),
    "size not a number": ((r'size = "8 MiB"', 'size = "eight"'), "PSRAM'.size", "cannot read"),
    "unknown key": ((r"(?m)^mve = ", "vector = 1\nmve = "), "cpu.vector", "unknown key"),
    "unknown region kind": ((r'kind = "dram"', 'kind = "hbm"'), "PSRAM'.kind", "unknown value"),
    "unknown npu": ((r'kinds = \["ethos-u55"\]', 'kinds = ["ethos-u99"]'), "kinds[0]", "unknown"),
    "impossible MACs": ((r"ethos-u55 = \[64\]", "ethos-u55 = [2048]"), "macs.ethos-u55", "2048"),
    "npu in tcm": ((r'kind = "itcm"', 'kind = "itcm"\nnpu = true'), "CODE'.npu", "TCM"),
    "u55 dedicated": ((r"Sram_Only = \{", U55_DEDICATED), "Dedicated_Sram", "cannot run"),
    "bad regioncfg": ((r"\[1, 0, 0, 0, 0, 0, 0, 0\]", "[1, 0]"), "Sram_Only.regioncfg", "8 values"),
    "past 4 GiB": ((r"base = 0x60000000", "base = 0xFFF00000"), "PSRAM'.size", "4 GiB"),
    "not toml": ((r"(?m)^\[uart\]", "[uart"), "", "not valid TOML"),
    "no regions": ((r"(?s)\[\[region\]\].*?(?=\[glue\])", ""), "region", "missing"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_malformed_board_is_one_line_error_naming_file_and_key(case: str, tmp_path: Path) -> None:
    (pattern, replacement), key, problem = BAD[case]
    text, n = re.subn(pattern, replacement, CUSTOM.read_text(), count=1)
    assert n == 1, f"test case {case!r} did not change the file"
    path = tmp_path / "board.toml"
    path.write_text(text)
    with pytest.raises(BoardError) as info:
        load_board(str(path))
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"{path}: "), message
    assert key in message, message
    assert problem in message, message


def test_unknown_board_and_missing_file(tmp_path: Path) -> None:
    with pytest.raises(BoardError, match=r"unknown board 'corstone-999'") as info:
        load_board("corstone-999")
    assert info.value.hint and "cs300" in info.value.hint
    with pytest.raises(BoardError, match="no such file"):
        load_board(str(tmp_path / "nope.toml"))


EXAMPLES = Path(__file__).resolve().parents[1] / "docs" / "examples" / "boards"

# Schema 2 mistakes, on a copy of the AN500 example folder: (edit, key, words).
BAD_V2 = {
    "port source missing": (('sources = ["board.c"]', 'sources = ["nope.c"]'), "port.sources[0]",
                            "no such file"),
    "unknown hook": (('hooks = ["console"]', 'hooks = ["consol"]'), "port.hooks[0]", "unknown"),
    "hook twice": (('hooks = ["console"]', 'hooks = ["console", "console"]'), "port.hooks[1]",
                   "twice"),
    "boot region unknown": (('vector_region = "SSRAM1"', 'vector_region = "ROM"'),
                            "boot.vector_region", "no region named 'ROM'"),
    "boot misaligned": (('vector_region = "SSRAM1"', "vector_address = 0x40"),
                        "boot.vector_address", "256-byte aligned"),
    "boot not executable": (('vector_region = "SSRAM1"', 'vector_region = "SRAM"'),
                            "boot.vector_region", "loadable and executable"),
    "console address on semihosting": (('kind = "custom"', 'kind = "semihosting"\nbase = 0x1'),
                                       "console.base", "has no address"),
    "uart at zero": (('kind = "custom"', 'kind = "pl011"\nbase = 0'), "console.base", "address 0"),
    "no dsp on m7": (('core = "cortex-m7"', 'core = "cortex-m7"\ndsp = false'), "cpu.dsp",
                     "always has"),
    "mve on m7": (('core = "cortex-m7"', 'core = "cortex-m7"\nmve = "int"'), "cpu.mve", "no MVE"),
    "too many irqs": (("irqs = 48", "irqs = 241"), "cpu.irqs", "at most 240"),
    "timer unknown": (('timer = "systick"', 'timer = "rtc"'), "cpu.timer", "unknown value"),
    "schema 1 and 2 spellings": (("[console]", '[uart]\nkind = "none"\nbase = 0\n\n[console]'),
                                 "uart", "keep [console]"),
    "glue table value": (("uart0_baud = 115200", "uart0_baud = [1, 2]"), "glue.uart0_baud",
                         "integer, a boolean or one line"),
    "glue key not C": (("uart0_baud = 115200", '"uart0-baud" = 1'), "glue.uart0-baud",
                       "not a C identifier"),
    "glue keys collide": (("uart0_baud = 115200", "UART0_BASE = 1"), "glue.UART0_BASE",
                          "KIT_GLUE_UART0_BASE"),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(BAD_V2))
def test_malformed_board_folder_names_file_and_key(case: str, tmp_path: Path) -> None:
    import shutil

    (old, new), key, problem = BAD_V2[case]
    folder = tmp_path / "board"
    shutil.copytree(EXAMPLES / "mps2-an500", folder)
    toml = folder / "board.toml"
    assert old in toml.read_text(), case
    toml.write_text(toml.read_text().replace(old, new, 1))
    with pytest.raises(BoardError) as info:
        load_board(str(folder))
    message = str(info.value)
    assert "\n" not in message and message.startswith(f"{toml}: "), message
    assert key in message and problem in message, message


def test_board_folder_relative_to_the_caller(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--board DIR`, `DIR/board.toml` and `./DIR` are the caller's paths; the port's
    sources are resolved against the board's folder."""
    import shutil

    shutil.copytree(EXAMPLES / "mps2-an521", tmp_path / "an521")
    monkeypatch.chdir(tmp_path)
    for spelling in ("an521", "an521/board.toml", "./an521", "an521/"):
        board = load_board(spelling)
        assert board.name == "mps2-an521"
        assert board.port.dir == str((tmp_path / "an521").resolve())
    assert load_board("an521").console.kind == "semihosting"


def test_hooks_table_and_defaults() -> None:
    from ethosu_kit.board.hooks import HOOK_NAMES, hal_default

    assert HOOK_NAMES == ("console", "timer", "board_init", "cache", "npu", "exit", "fault")
    an500 = load_board(str(EXAMPLES / "mps2-an500"))
    assert hal_default(an500, "console").required_because == '[console] kind = "custom"'
    assert hal_default(an500, "cache").sources == ("sdk/src/hal/cache_l1.c",)
    an521 = load_board(str(EXAMPLES / "mps2-an521"))
    assert hal_default(an521, "console").sources == ("sdk/src/hal/console_semihosting.c",)
    assert hal_default(an521, "cache").sources == ("sdk/src/hal/cache_none.c",)
    assert an521.cpu.flags["gcc"] == ("-mcpu=cortex-m33+nodsp+nofp", "-mfloat-abi=soft", "-mthumb")
    kit = Path(__file__).resolve().parents[1]
    for board in (an500, an521, load_board("cs300"), load_board("cs320")):
        for hook in HOOK_NAMES:
            for src in hal_default(board, hook).sources:
                assert (kit / src).is_file(), src
