"""`ethosu-kit report`: the page in a real headless chromium (no request outside the page,
every region and buffer of the plan shown, a screenshot that is not blank), the SVG (valid
XML, one element per region and block), the terminal view (80 columns), the JSON, and
--budget (a broken budget exits non-zero naming the region)."""

from __future__ import annotations

import dataclasses
import io
import json
import re
import shutil
import struct
import subprocess
import xml.etree.ElementTree as ET
import zlib
from pathlib import Path

import pytest
from rich.console import Console

from ethosu_kit.cli.app import main as kit_main
from ethosu_kit.plan.fill import region_fill
from ethosu_kit.plan.types import MemoryPlan, Role
from ethosu_kit.report import picture, views
from projects import make_project

REPO = Path(__file__).resolve().parents[1]
PTE = REPO / "tests" / "data" / "pte"
# (id, pte, board): a Corstone-300, a Corstone-320 Dedicated_Sram and a port's plan
CASES = {
    "cs300": (PTE / "u55_shared.pte", "corstone-300"),
    "cs320_dedicated": (PTE / "u85_dedicated.pte", "corstone-320"),
    "port_mps2_an500": (PTE / "u55_shared.pte", str(REPO / "docs/examples/boards/mps2-an500")),
}
CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--no-first-run",
]  # fmt: skip


@pytest.fixture(scope="module", params=sorted(CASES))
def project(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    pte, board = CASES[request.param]
    out = tmp_path_factory.mktemp("report") / request.param
    make_project(pte, out, board=board)
    return out


def _plan(project: Path) -> MemoryPlan:
    return MemoryPlan.from_json(project / "memory_plan.json")


def _chromium() -> str:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        pytest.skip("chromium is not installed (apt-get install chromium)")
    return exe


def _png_colours(data: bytes) -> int:
    """Distinct pixel values of an 8-bit RGB/RGBA PNG (no Pillow on the machine)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width, height, channels = 8, b"", 0, 0, 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour_type = struct.unpack(">IIBB", body[:10])
            assert depth == 8
            channels = {2: 3, 6: 4}[colour_type]
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels
    previous = bytearray(stride)
    colours = set()
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b = previous[i]
            c = previous[i - channels] if i >= channels else 0
            if f == 1:
                line[i] = (line[i] + a) & 0xFF
            elif f == 2:
                line[i] = (line[i] + b) & 0xFF
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xFF
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[i] = (line[i] + pred) & 0xFF
        colours.update(bytes(line[i : i + channels]) for i in range(0, stride, channels * 4))
        previous = line
    return len(colours)


def test_page_in_chromium(project: Path, tmp_path: Path) -> None:
    exe = _chromium()
    page = tmp_path / "memory.html"
    assert kit_main(["report", str(project), "--html", str(page)]) == 0
    text = page.read_text()
    # nothing the browser would fetch: no URL, no external src/href, no script
    assert not re.search(r"(https?:)?//[a-z0-9]", text, re.IGNORECASE), "a URL in the page"
    assert not re.search(r"\b(src|href)\s*=", text, re.IGNORECASE)
    assert "<script" not in text and "<link" not in text and "@import" not in text
    dom = subprocess.run(
        [exe, *CHROMIUM_FLAGS, "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=120, check=True,
    ).stdout  # fmt: skip
    plan = _plan(project)
    for region in plan.board.regions:
        assert f'data-region="{region.name}"' in dom, region.name
    for b in plan.buffers:
        # code and data are the linker's: the plan shows its reserves for them
        name = f"{b.name} (reserve)" if b.role in (Role.CODE, Role.DATA) else b.name
        if b.role in (Role.CODE, Role.DATA) and b.region not in _reserve_regions(plan):
            continue
        assert f'data-name="{name}"' in dom, name
    shot = tmp_path / "memory.png"
    subprocess.run(
        [exe, *CHROMIUM_FLAGS, f"--screenshot={shot}", "--window-size=1200,900", page.as_uri()],
        capture_output=True, timeout=120, check=True,
    )  # fmt: skip
    assert _png_colours(shot.read_bytes()) > 8, "the screenshot is (nearly) blank"


def _reserve_regions(plan: MemoryPlan) -> set[str]:
    pic = picture.build_picture(plan)
    return {r.name for r in pic.regions for b in r.plan_blocks if b.name.endswith("(reserve)")}


def test_svg_has_an_element_per_region_and_block(project: Path) -> None:
    plan = _plan(project)
    pic = picture.build_picture(plan, project / "memory_plan.json")
    root = ET.fromstring(views.svg(pic))
    ns = {"s": "http://www.w3.org/2000/svg"}
    groups = root.findall(".//s:g[@class='region']", ns)
    assert [g.get("data-region") for g in groups] == [r.name for r in pic.regions]
    on_board = sorted(r.name for r in plan.board.regions)
    assert on_board == sorted(str(g.get("data-region")) for g in groups)
    blocks = root.findall(".//s:rect[@class='block']", ns)
    drawn = sorted((b.get("data-region"), b.get("data-name")) for b in blocks)
    expected = sorted((r.name, b.name) for r in pic.regions for b in r.plan_blocks)
    assert drawn == expected
    # every buffer the plan places (code/data: their reserves) is one of them
    names = {name for _, name in drawn}
    for b in plan.buffers:
        if b.role not in (Role.CODE, Role.DATA):
            assert b.name in names


def test_numbers_are_the_plans(project: Path) -> None:
    """used per region is plan.fill's, the picture's blocks are the plan's buffers' sizes."""
    plan = _plan(project)
    pic = picture.build_picture(plan)
    for use in region_fill(plan):
        assert pic.region(use.region.name).plan_used == use.used
    sizes = {b.name: b.size for r in pic.regions for b in r.plan_blocks}
    for b in plan.buffers:
        if b.role not in (Role.CODE, Role.DATA):
            assert sizes[b.name] == b.size
    report = json.loads((project / "memory_report.json").read_text())
    for region in report["regions"]:
        assert pic.region(region["name"]).plan_used == region["used"]


def test_terminal_view_fits_80_columns(project: Path) -> None:
    pic = picture.build_picture(_plan(project))
    console = Console(width=80, record=True, file=io.StringIO(), color_system="truecolor")
    views.terminal(pic, console)
    text = console.export_text()
    assert max(len(line) for line in text.splitlines()) <= 80
    for r in pic.regions:
        assert r.name in text


def test_json_has_the_facts(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert kit_main(["report", str(project), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    plan = _plan(project)
    assert [r["name"] for r in data["regions"]] == sorted(
        (r.name for r in plan.board.regions), key=lambda n: plan.board.region(n).base
    )
    if plan.accelerator is not None:
        assert data["npu"]["rows"][0]["register"] == "QCONFIG"


def test_dedicated_npu_registers(tmp_path: Path) -> None:
    """Dedicated_Sram: the fast scratch is region 2, on the port REGIONCFG_2 picks."""
    out = tmp_path / "p"
    make_project(PTE / "u85_dedicated.pte", out, board="corstone-320")
    pic = picture.build_picture(_plan(out))
    assert pic.npu is not None
    rows = {row.register: row for row in pic.npu.rows}
    assert rows["REGIONCFG_2"].buffer == "fast_scratch"
    assert rows["REGIONCFG_2"].region == "SRAM"
    assert rows["REGIONCFG_1"].buffer == "temp_pool"
    # the U85 names its ports by what they reach; the U55/U65 have masters M0 and M1
    assert (rows["REGIONCFG_2"].port, rows["REGIONCFG_1"].port) == ("SRAM AXI", "EXT AXI")
    u55 = tmp_path / "u55"
    make_project(PTE / "u55_shared.pte", u55, board="corstone-300")
    u55_npu = picture.build_picture(_plan(u55)).npu
    assert u55_npu is not None
    assert {row.port for row in u55_npu.rows} == {"M0 (SRAM)", "M1 (external)"}
    assert "M0 (SRAM) port" in views.html(picture.build_picture(_plan(u55)))


def test_budget(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "p"
    make_project(PTE / "u55_shared.pte", out, board="corstone-300")
    plan = _plan(out)
    sram = next(u for u in region_fill(plan) if u.region.name == "SRAM")
    ok = tmp_path / "ok.toml"
    ok.write_text(f'[regions]\nSRAM = {sram.used}\nDTCM = "512 KiB"\n')
    assert kit_main(["report", str(out), "--json", "--budget", str(ok)]) == 0
    capsys.readouterr()
    tight = tmp_path / "tight.json"
    tight.write_text(json.dumps({"regions": {"SRAM": sram.used - 16}}))
    code = kit_main(["report", str(out), "--json", "--budget", str(tight)])
    err = capsys.readouterr().err
    assert code != 0
    assert "region SRAM" in err and "by 16 B" in err
    assert "Traceback" not in err
    bad = tmp_path / "bad.toml"
    bad.write_text('[regions]\nSRAM = "lots"\n')
    assert kit_main(["report", str(out), "--budget", str(bad)]) == 2
    assert "regions.SRAM" in capsys.readouterr().err


def test_budget_names_an_unknown_region(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "p"
    make_project(PTE / "u55_shared.pte", out, board="corstone-300")
    budget = tmp_path / "b.toml"
    budget.write_text("[regions]\nSRAMX = 1\n")
    assert kit_main(["report", str(out), "--json", "--budget", str(budget)]) == 2
    assert "regions.SRAMX: no region SRAMX" in capsys.readouterr().err


def test_copied_buffer_shows_load_and_run(tmp_path: Path) -> None:
    """A buffer with initial contents in RAM nothing loads is stored elsewhere and copied
    at reset: the picture shows its load image where plan.fill put it, and both addresses."""
    out = tmp_path / "p"
    make_project(PTE / "u55_sram_only.pte", out, board="corstone-300")
    plan = _plan(out)
    network = plan.buffer("network")
    copied = dataclasses.replace(network, load_region="QSPI")
    plan = dataclasses.replace(
        plan, buffers=tuple(copied if b.name == "network" else b for b in plan.buffers)
    )
    pic = picture.build_picture(plan)
    (copy,) = pic.copies
    qspi, sram = pic.region("QSPI"), pic.region("SRAM")
    image = next(b for b in qspi.plan_blocks if b.name == "network (load image)")
    run = next(b for b in sram.plan_blocks if b.name == "network")
    assert image.kind == picture.Kind.LOAD_IMAGE and image.size == network.size
    assert (copy.load_region, copy.load_address) == ("QSPI", qspi.base + image.offset)
    assert (copy.run_region, copy.run_address) == ("SRAM", sram.base + run.offset)
    assert qspi.plan_used == next(u.used for u in region_fill(plan) if u.region.name == "QSPI")
    assert "network (load image)" in views.html(pic)


def test_hostile_names_stay_text(tmp_path: Path) -> None:
    """Names and whys come from a plan file: in the page they are escaped text, in the
    terminal neither markup nor control characters."""
    out = tmp_path / "p"
    make_project(PTE / "u55_shared.pte", out, board="corstone-300")
    plan = _plan(out)
    evil = '<script>x</script>[/]\x1b[31m"'
    plan = dataclasses.replace(
        plan,
        buffers=tuple(
            dataclasses.replace(b, name=evil, why=evil) if b.name == "heap" else b
            for b in plan.buffers
        ),
    )
    pic = picture.build_picture(plan)
    for text in (views.html(pic), views.svg(pic)):
        assert "<script" not in text and "\x1b" not in text
    ET.fromstring(views.svg(pic))
    console = Console(width=80, record=True, file=io.StringIO())
    views.terminal(pic, console)
    assert "\x1b[31m" not in console.export_text(styles=True)
