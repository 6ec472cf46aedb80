"""`ethosu-kit advise` (issue 19): on a small model's TOSA graph (the cached tiny CNN,
lowered once for the virtual-NPU tests with its intermediate artifacts kept) and
Corstone-300 it lists the U55-128 Shared_Sram and Sram_Only candidates with Vela's
estimates and picks one that fits; on a board with a small SRAM the candidate that does
not fit is shown with the region and the bytes; the HTML section holds the same table;
bad input is one `error:` line. Two Vela compiles of a tiny graph: about a second."""

from __future__ import annotations

import contextlib
import io
import json
from html.parser import HTMLParser
from pathlib import Path

import pytest
from rich.console import Console

from ethosu_kit.board.loader import load_board
from ethosu_kit.cli.app import main as kit_main
from ethosu_kit.pte import read_pte
from ethosu_kit.pte.vela_compile import stream_bytes, tosa_files
from ethosu_kit.report import advise, advise_candidates, advise_compile, advise_view
from vnpu_models import BY_NAME, lowered

REPO = Path(__file__).resolve().parents[1]
SMALL_SRAM = 8 * 1024  # holds Shared_Sram's scratch (6.6 KiB), not Sram_Only's network too
U55_TWO_MODES = ["--accelerator", "ethos-u55-128", "--mode", "Shared_Sram", "--mode", "Sram_Only"]


@pytest.fixture(scope="module")
def tiny() -> Path:
    """The tiny CNN's lowered folder: model.pte and dump/ (ExecuTorch's artifacts)."""
    try:
        return lowered(BY_NAME["tiny_cnn"])
    except ImportError as exc:
        pytest.skip(f"lowering needs torch and executorch: {exc.name} is missing")


@pytest.fixture(scope="module")
def small_board(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tests' custom SoC with a U55-128 and an 8 KiB NPU SRAM."""
    text = (REPO / "tests/data/boards/custom_m55.toml").read_text()
    text = text.replace("ethos-u55 = [64]", "ethos-u55 = [128]")
    text = text.replace(
        'base = 0x20000000\nsize = "512 KiB"', f"base = 0x20000000\nsize = {SMALL_SRAM}"
    )
    assert f"size = {SMALL_SRAM}" in text
    path = tmp_path_factory.mktemp("board") / "board.toml"
    path.write_text(text.replace('name = "custom-m55"', 'name = "small-sram"'))
    return path


@pytest.fixture(scope="module")
def run(tiny: Path, small_board: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """advise's JSON and page for the two U55-128 candidates on both boards."""
    out = tmp_path_factory.mktemp("advise")
    html = out / "advice.html"
    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout):
        rc = kit_main(
            ["advise", str(tiny / "dump"), "--pte", str(tiny / "model.pte"),
             "--board", "corstone-300", "--board", str(small_board), *U55_TWO_MODES,
             "--json", "--html", str(html)]
        )  # fmt: skip
    assert rc == 0
    return {"json": json.loads(stdout.getvalue()), "html": html.read_text()}


def test_corstone300_candidates_and_pick(run: dict) -> None:
    data = run["json"]
    assert data["boards"] == ["corstone-300", "small-sram"]
    assert data["estimate_label"] == "Vela's estimate"
    names = [o["candidate"] for o in data["outcomes"]]
    assert [n.split()[:2] for n in names] == [
        ["ethos-u55-128", "Shared_Sram"],
        ["ethos-u55-128", "Sram_Only"],
    ]
    for o in data["outcomes"]:
        assert not o["error"]
        e = o["estimate"]
        assert e["cycles_total"] > 0 and e["inference_time"] > 0
        assert e["bytes_total"]["sram"] > 0  # per memory: the feature maps live in SRAM
        assert o["fits"][0]["fits"], o["fits"][0]  # Corstone-300 has room for both
    # Shared_Sram's weights come over the external port, Sram_Only's from SRAM
    shared, sram_only = (o["estimate"] for o in data["outcomes"])
    assert shared["bytes_total"]["off_chip_flash"] > 0
    assert sram_only["bytes_total"]["off_chip_flash"] == 0
    pick = data["picks"][0]
    assert pick["board"] == "corstone-300" and pick["index"] >= 0
    chosen = data["outcomes"][pick["index"]]
    fastest = min(data["outcomes"], key=lambda o: o["estimate"]["inference_time"])
    assert chosen["candidate"] == fastest["candidate"] == pick["candidate"]
    assert pick["compile_spec"].startswith('EthosUCompileSpec("ethos-u55-128"')


def test_network_size_is_the_ptes(tiny: Path, run: dict) -> None:
    """With --pte, the Shared_Sram candidate (the pte's own target) is the pte exactly."""
    model = read_pte(tiny / "model.pte")
    shared = run["json"]["outcomes"][0]
    assert shared["network"] == model.file_bytes
    assert shared["scratch"] == model.peak_scratch
    d = model.ethosu_delegates[0]
    assert d.vela is not None
    n_in, n_out = len(d.vela.inputs), len(d.vela.outputs)
    assert stream_bytes(d.vela.cmd_bytes, d.vela.weight_bytes, n_in, n_out) == d.processed_bytes


def test_unfit_candidate_names_region_and_bytes(run: dict) -> None:
    shared, sram_only = (o["fits"][1] for o in run["json"]["outcomes"])
    assert shared["fits"]
    assert not sram_only["fits"]
    short = sram_only["short"]
    assert short["region"] == "SRAM" and short["size"] == SMALL_SRAM
    assert short["used"] > SMALL_SRAM  # what the region would need
    assert run["json"]["picks"][1]["candidate"].split()[1] == "Shared_Sram"


class _Table(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.rows: list[dict[str, str]] = []
        self.cells: list[dict[str, str]] = []
        self.picks: list[dict[str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "tr" and "data-candidate" in a:
            self.rows.append(a)
        elif tag == "td" and "data-fits" in a:
            self.cells.append({**a, "candidate": self.rows[-1]["data-candidate"]})
        elif tag == "li" and "data-board" in a:
            self.picks.append(a)


def test_html_section(run: dict) -> None:
    page = run["html"]
    for banned in ("http://", "https://", "<script", "<link", "src="):
        assert banned not in page
    t = _Table()
    t.feed(page)
    names = [o["candidate"] for o in run["json"]["outcomes"]]
    assert [r["data-candidate"] for r in t.rows] == names
    # the pick per board: Sram_Only (fastest) on Corstone-300, Shared_Sram on the small one
    picks = sorted((c["data-board"], c["candidate"]) for c in t.cells if c.get("data-pick"))
    assert picks == [("corstone-300", names[1]), ("small-sram", names[0])]
    by = {(c["candidate"], c["data-board"]): c for c in t.cells}
    assert len(by) == 4
    unfit = by[(names[1], "small-sram")]
    assert unfit["data-fits"] == "no" and unfit["data-region"] == "SRAM"
    short = run["json"]["outcomes"][1]["fits"][1]["short"]
    assert int(unfit["data-short"]) == short["used"] - short["size"]
    assert f"SRAM short by {short['used'] - short['size']:,} B" in page
    assert [p["data-board"] for p in t.picks] == ["corstone-300", "small-sram"]
    assert "Vela&#39;s estimate" in page or "Vela's estimate" in page
    # the page is the recommended plan's memory picture with the advice on top
    assert page.index('id="advice"') < page.index("<h2>Map</h2>")


def test_terminal_table_fits_80_columns(tiny: Path) -> None:
    boards = [load_board("corstone-300")]
    candidates = advise_candidates.choose_candidates(boards, ["ethos-u55-128"], ["Shared_Sram"])
    compiled = advise_compile.compile_candidates(
        [(tosa_files(tiny / "dump"), candidates[0].target)]
    )
    a = advise.advise("tiny", candidates, compiled, boards)
    console = Console(file=io.StringIO(), width=80, highlight=False, emoji=False)
    advise_view.terminal(a, console)
    text = console.file.getvalue()  # type: ignore[attr-defined]
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "Vela's estimate" in text and "ethos-u55-128" in text
    # no --pte: the network is the payload plus the stated program overhead
    assert "program around them" in a.outcomes[0].network_how


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--board", "corstone-300"], "name the model once"),
        (["PTE", "--board", "corstone-300"], "not a TOSA flatbuffer"),
        (["TOSA", "--board", "no-such-board"], "unknown board"),
        (["TOSA", "--accelerator", "ethos-u99-1"], "unknown candidate"),
        (["TOSA", "--mode", "Fast_Sram"], "unknown candidate"),
        (["TOSA", "--mode", "Dedicated_Sram_999KB"], "unknown candidate"),
        (["TOSA", "--accelerator", "ethos-u55-128", "--fast-scratch", "64KiB"], "no candidate"),
        (["TOSA", "--system-config", "No_Such_Config"], "unknown candidate"),
        (["TOSA", "--accelerator", "ethos-u55-128", "--mode", "Dedicated_Sram"], "no candidate"),
        (["NOWHERE"], "no such file"),
        (
            ["GARBLED", "--accelerator", "ethos-u55-128", "--mode", "Sram_Only"],
            "Vela compiled none",
        ),
    ],
)
def test_bad_input_is_one_error_line(
    tiny: Path, args: list[str], words: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    garbled = tmp_path / "garbled.tosa"  # the identifier, then bytes Vela cannot read
    garbled.write_bytes(b"\x08\0\0\0TOSA" + bytes(range(256)) * 2)
    subst = {
        "PTE": str(tiny / "model.pte"),
        "TOSA": str(tosa_files(tiny / "dump")[0]),
        "NOWHERE": str(tiny / "nowhere.tosa"),
        "GARBLED": str(garbled),
    }
    rc = kit_main(["advise", *(subst.get(a, a) for a in args)])
    err = capsys.readouterr().err
    assert rc != 0
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and words in errors[0], err
    assert "Traceback" not in err


def test_nothing_fits_exits_3(
    tiny: Path, small_board: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc = kit_main(
        ["advise", str(tosa_files(tiny / "dump")[0]), "--board", str(small_board),
         "--accelerator", "ethos-u55-128", "--mode", "Sram_Only", "--width", "100"]
    )  # fmt: skip
    out, err = capsys.readouterr()
    assert rc == 3
    assert "no: SRAM short by" in out
    assert err.count("error:") == 1 and "no candidate fits small-sram" in err


@pytest.mark.slow
@pytest.mark.lowering
def test_module_is_lowered_once(capsys: pytest.CaptureFixture[str]) -> None:
    """--module: the kit's example lowered for the U55 profile, compiled per candidate,
    and the recommendation carries the kit's own lowering command."""
    pytest.importorskip("executorch")
    rc = kit_main(
        ["advise", "--module", "ethosu_kit.aot.examples:example_model", "--board",
         "corstone-300", *U55_TWO_MODES, "--json"]
    )  # fmt: skip
    assert rc == 0
    data = json.loads(capsys.readouterr().out)
    assert len(data["outcomes"]) == 2
    assert all(o["network_how"].startswith("network") for o in data["outcomes"])
    assert "model.pte's program" in data["outcomes"][0]["network_how"]
    assert data["picks"][0]["lower_command"].startswith("ethosu-kit lower-example")
