"""Hostile inputs, class "packs and SVDs" (issue 20): a deeply nested .pdsc, SVD arrays
and peripheral counts that would expand to millions of objects, a peripheral name with a
newline, a pack with thousands of memories, a pack whose <debug svd> points outside its
folder. Each through the real `new-board` / `import-pack`: one `error:` line (or, for the
SVD path, a board drafted without reading it), no traceback, bounded time."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from hostile import assert_refused, run_kit

DATA = Path(__file__).parent / "data"
PDSC = (DATA / "test_soc.pdsc").read_text()
SVD = (DATA / "test_soc.svd").read_text()
BOUND_S = 30.0  # each case, interpreter start-up included


def _pack(tmp: Path, pdsc: str = PDSC, svd: str | None = SVD) -> Path:
    folder = tmp / "pack"
    folder.mkdir(exist_ok=True)
    (folder / "test_soc.pdsc").write_text(pdsc)
    if svd is not None:
        (folder / "test_soc.svd").write_text(svd)
    return folder / "test_soc.pdsc"


def _new_board(tmp: Path, pdsc: Path, *extra: str) -> tuple[str, Path]:
    out = tmp / "board"
    start = time.monotonic()
    result = run_kit("new-board", "b", "--pack", pdsc, "--device", "TestSoC-E7", "-o", out,
                     *extra, timeout=60)  # fmt: skip
    assert time.monotonic() - start < BOUND_S
    return assert_refused(result, absent=[out]), out


def _svd_with(peripheral_xml: str) -> str:
    return SVD.replace("<peripherals>", f"<peripherals>\n{peripheral_xml}", 1)


def test_deeply_nested_pdsc(tmp_path: Path) -> None:
    deep = "<x>" * 100_000 + "</x>" * 100_000
    pdsc = _pack(tmp_path, PDSC.replace("<releases>", deep + "<releases>", 1))
    line, _ = _new_board(tmp_path, pdsc)
    assert "nested" in line
    result = run_kit("import-pack", pdsc, "--device", "TestSoC-E7", "-o", tmp_path / "b.toml")
    assert "nested" in assert_refused(result, absent=[tmp_path / "b.toml"])


@pytest.mark.parametrize("where", ["peripheral", "register"])
def test_svd_dim_is_bounded(tmp_path: Path, where: str) -> None:
    reg = "<register><name>R%s</name><addressOffset>0</addressOffset></register>"
    if where == "peripheral":
        xml = (
            "<peripheral><dim>100000</dim><dimIncrement>0x100</dimIncrement><name>P%s</name>"
            f"<baseAddress>0x40000000</baseAddress><registers>{reg}</registers></peripheral>"
        )
    else:
        xml = (
            "<peripheral><name>P</name><baseAddress>0x40000000</baseAddress><registers>"
            "<register><dim>100000</dim><dimIncrement>4</dimIncrement><name>R%s</name>"
            "<addressOffset>0</addressOffset></register></registers></peripheral>"
        )
    line, _ = _new_board(tmp_path, _pack(tmp_path, svd=_svd_with(xml)))
    assert "<dim> 100000" in line


def test_svd_with_100k_peripherals(tmp_path: Path) -> None:
    one = "<peripheral><name>P{0}</name><baseAddress>0x40000000</baseAddress></peripheral>"
    xml = "".join(one.format(i) for i in range(100_000))
    line, _ = _new_board(tmp_path, _pack(tmp_path, svd=_svd_with(xml)))
    assert "peripherals" in line


def test_svd_derived_copies_are_counted(tmp_path: Path) -> None:
    """4,000 peripherals derivedFrom one with 1,000 registers: 4M register objects."""
    regs = "".join(
        f"<register><name>R{i}</name><addressOffset>{4 * i}</addressOffset></register>"
        for i in range(1000)
    )
    xml = f"<peripheral><name>BIG</name><baseAddress>0x40000000</baseAddress><registers>{regs}"
    xml += "</registers></peripheral>"
    one = '<peripheral derivedFrom="BIG"><name>C{0}</name><baseAddress>0x4{0:07x}</baseAddress>'
    xml += "".join(one.format(i) + "</peripheral>" for i in range(4000))
    line, _ = _new_board(tmp_path, _pack(tmp_path, svd=_svd_with(xml)))
    assert "derivedFrom copies" in line


def test_svd_peripheral_name_with_a_newline(tmp_path: Path) -> None:
    svd = SVD.replace("<name>UART0_NS</name>", "<name>UART0_NS\n</name>", 1)
    svd = svd.replace('derivedFrom="UART0_NS"', 'derivedFrom="UART0_NS&#10;"', 1)
    line, _ = _new_board(tmp_path, _pack(tmp_path, svd=svd))
    assert "one line" in line


def test_pack_with_thousands_of_memories(tmp_path: Path) -> None:
    mems = "".join(
        f'<memory name="M{i}" access="rwx" start="0x{0x60000000 + i * 0x1000:x}" size="0x1000"/>'
        for i in range(6000)
    )
    pdsc = _pack(tmp_path, PDSC.replace("<subFamily", mems + "<subFamily", 1))
    line, _ = _new_board(tmp_path, pdsc)
    assert "has 6,008 memories (more than 256)" in line


@pytest.mark.parametrize("named", ["../../outside.svd", "ABSOLUTE", "/proc/self/environ"])
def test_pack_svd_outside_the_pack_is_not_read(tmp_path: Path, named: str) -> None:
    outside = tmp_path / "outside.svd"
    # an SVD that would be refused if read: reading it at all would show as an error
    outside.write_text("<device><name>X\n</name></device>")
    if named == "ABSOLUTE":
        named = str(outside)
    (tmp_path / "deep" / "er").mkdir(parents=True)
    pdsc = _pack(tmp_path / "deep" / "er",
                 PDSC.replace('svd="test_soc.svd"', f'svd="{named}"'), svd=None)  # fmt: skip
    if named.startswith(".."):
        (tmp_path / "deep" / "outside.svd").write_text(outside.read_text())
    out = tmp_path / "board"
    result = run_kit("new-board", "b", "--pack", pdsc, "--device", "TestSoC-E7", "-o", out)
    assert result.returncode == 0, result
    assert "outside its folder" in result.stdout + result.stderr
    text = (out / "board.toml").read_text()
    assert "peripherals from" not in text
    assert not re.search(r"environ|outside", text)
