"""Property-based hostile inputs, second round (issue 20): the pack, SVD, plan and npz
readers through the real commands.

Generated, hostile but bounded inputs, each through the CLI in-process (the contract
checks of test_hostile_property.kit: exit 0, or one `error:` line and at most one
`hint:`, never `internal error`, never a traceback, never a hang):

- `.pdsc` packs (tests/data/test_soc.pdsc) with attributes and texts replaced by hostile
  values (numbers of thousands of digits, names with a newline, paths out of the pack),
  elements dropped or repeated up to thousands of times, deep nesting, byte damage:
  through `new-board --pack` and `import-pack`. A drafted board must be one the kit
  reads (`boards`), and an SVD outside the pack's folder is never read.
- SVDs (tests/data/test_soc.svd, the pack's `<debug svd>`) the same way, plus `<dim>`
  arrays up to 10^30 elements: through `new-board --pack`.
- memory_plan.json (a real one from `gen`) with values replaced, keys dropped, numbers of
  thousands of digits, deep nesting, byte damage: through `report`, `check-elf --plan`
  (read before the ELF) and `run --plan` (a tiny kit ELF; `--fvp` a file that is not
  there, so nothing runs).
- .npz archives built member by member (names, counts, dtypes including object and
  structured ones, shapes that do not match the data, stored or deflated, damaged
  headers): through `compare` and `simulate --inputs`.

Example counts are modest for CI (ETHOSU_KIT_HYPOTHESIS_EXAMPLES raises them); the counts
run are printed in pytest's summary.
"""

from __future__ import annotations

import io
import json
import shutil
import struct
import subprocess
import zipfile
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hostile import EXAMPLES, example
from projects import make_project
from test_hostile_property import drawn_place, kit, mutations, property_settings, values

DATA = Path(__file__).parent / "data"
PROPERTY = property_settings(15)
OUTSIDE_MARK = "OUTSIDEPERIPH"  # the peripheral only the SVD outside the pack has

HOSTILE_ATTR = [
    "",
    "0x" + "f" * 5000,
    "9" * 5000,
    "-1",
    "0xFFFFFFFF",
    "0x100000000",
    "UART0\n",
    "name\nwith newline",
    "a" * 300,
    "Cortex-M99",
    "rwxs;-fplugin=x",
    "${HOME}",
    "nan",
    "1e999",
    "../outside.svd",
    "@OUTSIDE@",  # the outside SVD's absolute path
    "/proc/self/environ",
    "test_soc.svd",
]
attr_values = st.one_of(st.sampled_from(HOSTILE_ATTR), st.text(max_size=12))


def _elements(root: ET.Element) -> list[tuple[ET.Element | None, ET.Element]]:
    """(parent, element) of every element, the root's parent None."""
    found: list[tuple[ET.Element | None, ET.Element]] = [(None, root)]
    for parent in root.iter():
        found += [(parent, child) for child in parent]
    return found


@st.composite
def xml_documents(
    draw: st.DrawFn, text: str, outside: Path, extra_kinds: tuple[str, ...] = ()
) -> bytes:
    """`text` (an XML document) with 1..3 hostile edits; bytes as a file would hold them."""
    root = ET.fromstring(text)
    nest = 0
    kinds = ["attr", "attr", "text", "drop", "repeat", "nest", "bytes", *extra_kinds]
    damage = False
    for _ in range(draw(st.integers(1, 3))):
        parent, element = draw(st.sampled_from(_elements(root)))
        kind = draw(st.sampled_from(kinds))
        if kind == "attr" and element.attrib:
            key = draw(st.sampled_from(sorted(element.attrib)))
            value = draw(attr_values)
            element.set(key, value.replace("@OUTSIDE@", str(outside)))
        elif kind == "text" and len(element) == 0:
            element.text = draw(attr_values).replace("@OUTSIDE@", str(outside))
        elif kind == "drop" and parent is not None:
            parent.remove(element)
        elif kind == "repeat" and parent is not None:
            for _ in range(draw(st.sampled_from([2, 30, 1500]))):
                parent.append(element)  # the same element again: serialised as copies
        elif kind == "nest":
            nest = draw(st.sampled_from([5, 200, 20_000]))
        elif kind == "dim" and element.tag in ("peripheral", "register"):
            dim = ET.SubElement(element, "dim")
            dim.text = str(draw(st.sampled_from([2, 1000, 100_000, 10**30])))
            ET.SubElement(element, "dimIncrement").text = "0x4"
            if draw(st.booleans()):
                name = element.find("name")
                if name is not None and name.text:
                    name.text += "[%s]"
        elif kind == "bytes":
            damage = True
    data = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    if nest:  # textually: ElementTree's own writer recurses
        at = data.index(b">", data.index(b"<", 40)) + 1
        data = data[:at] + b"<x>" * nest + b"</x>" * nest + data[at:]
    if damage:
        data = draw(mutations(data))
    return data


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("property-readers")
    # an SVD outside every pack folder below: its peripheral must never reach a board
    outside = (
        (DATA / "test_soc.svd")
        .read_text()
        .replace(
            "<peripherals>",
            f"<peripherals><peripheral><name>{OUTSIDE_MARK}</name>"
            "<baseAddress>0x49000000</baseAddress></peripheral>",
            1,
        )
    )
    (folder / "outside.svd").write_text(outside)
    return folder


def _pack(scratch: Path, pdsc: bytes, svd: bytes | None = None) -> Path:
    folder = scratch / "pack"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    (folder / "test_soc.pdsc").write_bytes(pdsc)
    (folder / "test_soc.svd").write_bytes(svd or (DATA / "test_soc.svd").read_bytes())
    return folder / "test_soc.pdsc"


def _draft_is_readable(out: Path) -> None:
    """A board `new-board` drafted is one the kit reads, and has nothing from outside."""
    board = out / "board.toml"
    assert board.is_file()
    assert OUTSIDE_MARK not in board.read_text(), "read an SVD outside the pack's folder"
    code, _, err = kit("boards", board)
    assert code == 0, f"new-board drafted a board `boards` refuses: {err}"


def _new_board(pdsc: Path, out: Path) -> int:
    """new-board from `pdsc`'s TestSoC-E7 into a fresh `out`; its exit code. A folder it
    drafts must load."""
    shutil.rmtree(out, ignore_errors=True)
    code, _, _ = kit("new-board", "b", "--pack", pdsc, "--device", "TestSoC-E7",
                     "--console-peripheral", "UART0", "-o", out)  # fmt: skip
    if code == 0:
        _draft_is_readable(out)
    return code


def test_generated_packs_through_new_board_and_import_pack(scratch: Path) -> None:
    outside = scratch / "outside.svd"
    text = (DATA / "test_soc.pdsc").read_text()

    @PROPERTY
    @given(xml_documents(text, outside))
    def check(data: bytes) -> None:
        EXAMPLES["pdsc"] += 1
        pdsc = _pack(scratch, data)
        out = scratch / "board"
        if _new_board(pdsc, out) != 0:
            assert not out.exists(), "a refused new-board left its folder"
        toml = scratch / "imported.toml"
        toml.unlink(missing_ok=True)
        code, _, _ = kit("import-pack", pdsc, "--device", "TestSoC-E7", "-o", toml)
        if code == 0:
            assert OUTSIDE_MARK not in toml.read_text()

    check()


def test_generated_svds_through_new_board(scratch: Path) -> None:
    outside = scratch / "outside.svd"
    text = (DATA / "test_soc.svd").read_text()
    pdsc = (DATA / "test_soc.pdsc").read_bytes()

    @PROPERTY
    @given(xml_documents(text, outside, extra_kinds=("dim", "dim", "dim")))
    def check(data: bytes) -> None:
        EXAMPLES["svd"] += 1
        _new_board(_pack(scratch, pdsc, data), scratch / "board-svd")

    check()


# -- memory_plan.json read back ---------------------------------------------------------

FAKE_ELF_S = """\
    .section .kit.info, "", %progbits
    .asciz "board=@BOARD@\\napp=bringup\\n"
    .text
    .global _start
_start:
    b _start
"""


@pytest.fixture(scope="module")
def plan_and_elf(data_pte_u55_shared: Path, scratch: Path) -> tuple[dict[str, Any], Path]:
    """A real memory_plan.json (gen) and a tiny kit ELF for its board (no build)."""
    if shutil.which("arm-none-eabi-gcc") is None:
        pytest.skip("arm-none-eabi-gcc is not installed")
    project = make_project(data_pte_u55_shared, scratch / "fw", mode="Shared_Sram")
    plan = project.plan()
    source = scratch / "fake.s"
    source.write_text(FAKE_ELF_S.replace("@BOARD@", plan["board"]))
    elf = scratch / "fake.elf"
    subprocess.run(
        ["arm-none-eabi-gcc", "-nostdlib", "-nostartfiles", "-Wl,-Ttext=0x10000000",
         "-o", str(elf), str(source)],
        check=True,
    )  # fmt: skip
    return plan, elf


@st.composite
def plans(draw: st.DrawFn, base: dict[str, Any]) -> bytes:
    data = json.loads(json.dumps(base))  # a deep copy
    tail = b""
    for _ in range(draw(st.integers(1, 3))):
        parent, key = drawn_place(draw, data)
        kind = draw(st.sampled_from(["replace", "replace", "drop", "huge", "nest", "bytes"]))
        if kind == "replace":
            parent[key] = draw(values)
        elif kind == "drop":
            del parent[key]
        elif kind == "huge":  # 5,000 digits (written as text: Python's int limit)
            parent[key] = draw(st.sampled_from(["@HUGE@", "@-HUGE@"]))
        elif kind == "nest":
            depth = draw(st.sampled_from([50, 5000, 100_000]))
            parent[key] = "@NEST@"
            tail = b"[" * depth + b"]" * depth
        else:
            text = json.dumps(data).encode()
            return bytes(draw(mutations(text)))
    text = json.dumps(data).encode()
    text = text.replace(b'"@HUGE@"', b"9" * 5000).replace(b'"@-HUGE@"', b"-" + b"9" * 5000)
    return text.replace(b'"@NEST@"', tail) if tail else text


def test_generated_plans_through_report_check_elf_and_run(
    plan_and_elf: tuple[dict[str, Any], Path], scratch: Path
) -> None:
    base, elf = plan_and_elf

    @PROPERTY
    @given(plans(base))
    def check(data: bytes) -> None:
        plan = example("plan", scratch / "memory_plan.json", data)
        kit("report", plan, "--json")
        # the plan is read before the ELF (absent here: its checks are test_elf_check's)
        code, _, _ = kit("check-elf", scratch / "absent.elf", "--plan", plan, "-q")
        assert code != 0
        code, _, _ = kit("run", elf, "--plan", plan, "--fvp", scratch / "no-such-fvp")
        assert code != 0  # nothing ran: there is no FVP

    check()


# -- .npz archives built member by member ------------------------------------------------

DTYPES: list[Any] = ["<f4", "<f8", "|i1", "<i4", ">f4", "|O", "<U4", "|V3", "<c8", "|b1",
                    "<f2", [("a", "<i4")], "<M8[s]"]  # fmt: skip
NAMES = ["x", "input0", "output0", "../x", "a\nb", "", "x" * 200, "dir/x", "/abs", "x.npy"]


@st.composite
def npy_members(draw: st.DrawFn) -> bytes:
    dtype = draw(st.sampled_from(DTYPES))
    shape = draw(
        st.lists(st.sampled_from([0, 1, 3, 16, 1 << 31, 1 << 62]), max_size=4).map(tuple)
        | st.just((1, 3, 16, 16))
    )
    fortran = draw(st.booleans())
    header = repr({"descr": dtype, "fortran_order": fortran, "shape": shape})
    header = draw(st.sampled_from([header, header, "{'descr': '<f4'", "{}", "x" * 70000]))
    body = header.encode("latin1") + b" " * (15 - (len(header) + 10) % 16) + b"\n"
    payload = draw(st.sampled_from([0, 4, 768 * 4, 1 << 16]))
    if len(body) > 0xFFFF:  # format 2.0: a 4-byte header length
        return b"\x93NUMPY\x02\x00" + struct.pack("<I", len(body)) + body + b"\x07" * payload
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(body)) + body + b"\x07" * payload


@st.composite
def npz_archives(draw: st.DrawFn) -> bytes:
    buf = io.BytesIO()
    method = draw(st.sampled_from([zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED]))
    count = draw(st.sampled_from([1, 1, 2, 40]))
    with zipfile.ZipFile(buf, "w", method) as z:
        for i in range(count):
            name = draw(st.sampled_from(NAMES)) + (str(i) if i else "")
            z.writestr(name if name.endswith(".npy") else name + ".npy", draw(npy_members()))
    data = buf.getvalue()
    return draw(mutations(data)) if draw(st.booleans()) else data


def test_generated_npz_through_compare_and_simulate(
    data_pte_u55_shared: Path, scratch: Path
) -> None:
    import numpy as np

    good = scratch / "good.npz"
    np.savez(good, output0=np.zeros((1, 3, 16, 16), dtype=np.float32))

    @PROPERTY
    @given(npz_archives())
    def check(data: bytes) -> None:
        npz = example("npz-generated", scratch / "generated.npz", data)
        kit("compare", npz, good)
        kit("compare", good, npz)
        out = scratch / "sim.npz"
        out.unlink(missing_ok=True)
        code, _, _ = kit("simulate", data_pte_u55_shared, "--inputs", npz, "-o", out)
        if code != 0:
            assert not out.exists()

    check()


def test_cut_off_npy_header(scratch: Path) -> None:
    """Found by the property above: a header dict cut off (`{'descr': '<f4'`) made numpy's
    fallback tokenizer raise TokenError, an internal error of `compare`."""
    body = b"{'descr': '<f4'" + b" " * 6 + b"\n"
    member = b"\x93NUMPY\x01\x00" + struct.pack("<H", len(body)) + body
    npz = scratch / "cut.npz"
    with zipfile.ZipFile(npz, "w") as z:
        z.writestr("x.npy", member)
    code, _, err = kit("compare", npz, npz)
    assert code != 0 and "not a valid .npy header" in err, err


@pytest.mark.parametrize("release", ["", "<release>first</release>"])
def test_pack_without_a_release_version(scratch: Path, release: str) -> None:
    """Found by the property above: cmsis-pack-manager indexes the pack's first release
    without checking there is one, a Rust panic that killed the interpreter (signal 11);
    in a child process here, so a crash fails the test instead of pytest."""
    from hostile import assert_refused, run_kit

    text = (DATA / "test_soc.pdsc").read_text()
    pdsc = _pack(
        scratch, text.replace('<release version="1.0.0">first</release>', release).encode()
    )
    out = scratch / "no-release"
    result = run_kit("new-board", "b", "--pack", pdsc, "--device", "TestSoC-E7",
                     "--console-peripheral", "UART0", "-o", out)  # fmt: skip
    assert_refused(result, "no <release version=", absent=[out])
    result = run_kit("import-pack", pdsc, "--device", "TestSoC-E7", "-o", scratch / "nr.toml")
    assert_refused(result, "no <release version=")
