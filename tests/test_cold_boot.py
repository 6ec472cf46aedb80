"""Images that boot cold from non-volatile memory ([boot] from = "nv", docs/boards.md).

The example port docs/examples/boards/mps2-an386 declares QEMU's SSRAM1 as flash: the
bring-up and the self-test (its network copied into SRAM at reset) must pass in QEMU from
the flash artefacts `build` writes alone, with every RAM region filled with garbage; a
board whose RAM is marked loadable builds an image check-elf refuses, naming segment,
address and region. Checked-in ptes (no lowering), real cross compiler, real QEMU 7.2.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from ethosu_kit.board.loader import parse_board
from ethosu_kit.cli.app import main
from ethosu_kit.core.errors import BoardError
from ethosu_kit.firmware.elf_check import check_elf
from ethosu_kit.firmware.flash import intel_hex, manifest_path, read_manifest
from ethosu_kit.firmware.qemu import run_elf
from fw_helpers import REPO, need_cross_gcc, need_qemu
from projects import make_project

pytestmark = pytest.mark.firmware

AN386 = REPO / "docs" / "examples" / "boards" / "mps2-an386"
AN386_RAM = {"BRAM": 0x01000000, "SRAM": 0x20000000, "PSRAM": 0x21000000}


def _build(project: Path, app: str, capsys: pytest.CaptureFixture[str]) -> tuple[Path, str]:
    """`ethosu-kit build` as a user runs it: the ELF (its last line) and what it printed
    (stdout, then stderr)."""
    need_cross_gcc()
    capsys.readouterr()
    assert main(["build", str(project), "--app", app]) == 0
    out, err = capsys.readouterr()
    return Path(out.strip().splitlines()[-1]), out + err


@pytest.fixture(scope="module")
def bringup(root: Path, data_pte_u55_shared: Path) -> Path:
    need_cross_gcc()
    project = make_project(data_pte_u55_shared, root / "bringup", board=AN386, app="bringup")
    from ethosu_kit.firmware.build import build_project

    return build_project(project.path, app="bringup")


# -- the board data ------------------------------------------------------------------------


def _board(boot: str, ram_extra: str = "") -> str:
    return (
        (AN386 / "board.toml")
        .read_text()
        .replace('from = "nv"                 # cold boot', boot + "  # cold boot")
        .replace(
            'size = "4 MiB"\ndescription = "ZBT', f'size = "4 MiB"\n{ram_extra}description = "ZBT'
        )
    )


def test_cold_boot_ram_is_not_loadable_unless_the_region_says_so() -> None:
    cold = parse_board(_board('from = "nv"'), "cold.toml", AN386)
    assert cold.cold_boot
    assert {r.name: r.loadable for r in cold.regions} == {
        "FLASH": True, "BRAM": False, "SRAM": False, "PSRAM": False,
    }  # fmt: skip
    loaded = parse_board(_board('from = "loader"'), "loaded.toml", AN386)
    assert not loaded.cold_boot
    assert all(r.loadable for r in loaded.regions)
    said = parse_board(_board('from = "nv"', "loadable = true\n"), "said.toml", AN386)
    assert said.region("SRAM").loadable and not said.region("PSRAM").loadable


def test_cold_boot_from_volatile_memory_is_refused() -> None:
    text = _board('from = "nv"').replace('vector_region = "FLASH"', 'vector_region = "SRAM"')
    text = text.replace('size = "4 MiB"\ndescription = "ZBT', 'size = "4 MiB"\nexecutable = true\n'
                        'loadable = true\ndescription = "ZBT')  # fmt: skip
    with pytest.raises(BoardError) as exc:
        parse_board(text, "bad.toml", AN386)
    message = str(exc.value)
    assert message.startswith("bad.toml: boot.vector_region:"), message
    assert "'SRAM' at 0x20000000, which is volatile" in message and "FLASH" in message
    # what new-board drafts for a part with no on-chip flash (its boot ROM copies the image
    # from an external flash into RAM): the RAM is not loadable on a cold-boot board, and
    # the message says it is volatile and how a ROM-loaded part is written, not only
    # "must be loadable"
    rom_loaded = _board('from = "nv"').replace('vector_region = "FLASH"', 'vector_region = "SRAM"')
    with pytest.raises(BoardError) as exc:
        parse_board(rom_loaded, "bad.toml", AN386)
    assert "which is volatile" in str(exc.value), str(exc.value)
    assert exc.value.hint and 'from = "loader"' in exc.value.hint and "loadable" in exc.value.hint
    with pytest.raises(BoardError, match=r"boot\.from.*'nv', 'loader'|boot\.from.*nv.*loader"):
        parse_board(_board('from = "rom"'), "bad.toml", AN386)


def test_intel_hex_records() -> None:
    # extended address record per 64 KiB, records never cross it, checksums, EOF
    text = intel_hex(0x1FFF8, bytes(range(16)))
    assert text.splitlines() == [
        ":020000040001F9",
        ":08FFF8000001020304050607E5",
        ":020000040002F8",
        ":0800000008090A0B0C0D0E0F9C",
        ":00000001FF",
    ]


# -- build, check-elf, run -------------------------------------------------------------------


def _hex_bytes(text: str) -> dict[int, int]:
    memory: dict[int, int] = {}
    upper = 0
    for line in text.splitlines():
        raw = bytes.fromhex(line[1:])
        assert sum(raw) & 0xFF == 0, line
        count, offset, kind, data = raw[0], int.from_bytes(raw[1:3], "big"), raw[3], raw[4:-1]
        assert len(data) == count
        if kind == 4:
            upper = int.from_bytes(data, "big") << 16
        elif kind == 0:
            memory.update({upper + offset + i: b for i, b in enumerate(data)})
    return memory


def test_flash_artefacts_hold_the_load_segments(bringup: Path) -> None:
    manifest = read_manifest(manifest_path(bringup))
    assert manifest.elf == bringup.name and manifest.board == "mps2-an386"
    assert not manifest.left_out
    (flash,) = manifest.files
    assert (flash.region, flash.address) == ("FLASH", 0)
    data = (bringup.parent / flash.bin).read_bytes()
    assert len(data) == flash.size < 64 * 1024  # sized to the contents, not the region
    assert hashlib.sha256(data).hexdigest() == flash.sha256
    memory = _hex_bytes((bringup.parent / flash.hex).read_text())
    assert bytes(memory[a] for a in range(flash.size)) == data
    objcopy = shutil.which("arm-none-eabi-objcopy")
    if objcopy:  # one region holds every load byte: objcopy's flat binary is the same
        flat = bringup.with_suffix(".objcopy.bin")
        subprocess.run([objcopy, "-O", "binary", str(bringup), str(flat)], check=True)
        assert flat.read_bytes() == data
    result = check_elf(bringup, bringup.with_name(f"{bringup.stem}.memory_plan.json"))
    assert result.ok, [v.message for v in result.violations]
    assert result.cold_boot == ("FLASH",) and result.copies_read


def test_bringup_and_selftest_pass_from_flash_alone_with_ram_poisoned(
    bringup: Path,
    root: Path,
    data_pte_u55_sram_only: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    need_qemu()
    run = run_elf(bringup, cold_boot=True)
    assert run.exit_code == 0 and "BRINGUP PASS" in run.output, run.output
    devices = [run.command[i + 1] for i, a in enumerate(run.command) if a == "-device"]
    assert "-kernel" not in run.command and str(bringup) not in " ".join(run.command)
    assert devices[0].startswith(f"loader,file={bringup.parent}/bringup.FLASH.bin,addr=0x0,")
    poisoned = {
        int(m, 16) for m in re.findall(r"poison-\d+\.bin,addr=(0x[0-9a-f]+)", " ".join(devices))
    }
    assert set(AN386_RAM.values()) <= poisoned  # every RAM region, from its base
    assert 0x21000000 + 15 * (1 << 20) in poisoned  # ... to its end (PSRAM: 16 MiB)

    # the self-test in Sram_Only: the network stored in FLASH, copied to SRAM at reset
    project = make_project(
        data_pte_u55_sram_only, root / "selftest", board=AN386, app="selftest", npu="virtual"
    )
    plan = project.buffers()
    assert (plan["network"]["region"], plan["network"]["load_region"]) == ("SRAM", "FLASH")
    note = next(n for n in project.plan()["notes"] if n.startswith("cold boot"))
    assert "code runs in place from FLASH" in note
    assert "network stored in FLASH, copied to SRAM at reset" in note
    elf, out = _build(project.path, "selftest", capsys)
    assert f"{elf.parent / 'selftest.FLASH.bin'}  FLASH at 0x00000000" in out
    assert str(manifest_path(elf)) in out.splitlines()
    assert main(["check-elf", str(elf), "-q"]) == 0
    capsys.readouterr()
    assert main(["run", str(elf), "--cold-boot"]) == 0
    captured = capsys.readouterr()
    assert "SELFTEST PASS" in captured.out, captured.out
    assert "cold boot: QEMU gets only selftest.FLASH.bin at 0x00000000" in captured.err
    assert "RAM BRAM, SRAM, PSRAM filled with garbage" in captured.err

    # without the network's copy-table entry (the self-test once relied on
    # kit_sections_init, which it never called) check-elf names the bytes nothing copies
    script = project.generated / "linker.ld"
    text, n = re.subn(r"\n *LONG\(LOADADDR\(\.kit\.network\)\).*", "", script.read_text())
    assert n == 1
    script.write_text(text)
    elf, _ = _build(project.path, "selftest", capsys)
    result = check_elf(elf, project.plan_path)
    assert [v.actual for v in result.violations] == ["SRAM"], result.violations
    assert re.fullmatch(
        r"cold boot: \d+ bytes of load segment \d+ at 0x2[0-9a-f]{7} \(SRAM\) are copied by "
        r"nothing at reset \(stored at 0x000[0-9a-f]{5}\)",
        result.violations[0].message,
    ), result.violations[0].message


def test_run_cold_boot_refuses_artefacts_of_another_build(
    bringup: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    need_qemu()
    away = tmp_path / "away"
    away.mkdir()
    for f in bringup.parent.glob("bringup.*"):
        shutil.copy(f, away / f.name)
    elf = away / bringup.name
    flash = away / "bringup.FLASH.bin"
    data = bytearray(flash.read_bytes())
    data[0] ^= 0xFF  # the initial stack pointer of another image
    flash.write_bytes(data)
    assert main(["run", str(elf), "--cold-boot"]) == 65
    err = capsys.readouterr().err
    assert "the flash file for FLASH is missing or is not what bringup.elf stores" in err, err
    manifest_path(elf).unlink()
    assert main(["run", str(elf), "--cold-boot"]) == 65
    assert "no bringup.flash_manifest.json beside it" in capsys.readouterr().err


def test_run_cold_boot_of_an_elf_named_by_a_relative_path(
    bringup: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`ethosu-kit run fw/build/gcc/bringup.elf --cold-boot`, as the docs write it: QEMU
    runs in another folder (in the sandbox), so the flash files it is given must be
    absolute paths; relative ones made QEMU refuse `Cannot load specified image` (a
    trial on an mps3-an524 port)."""
    need_qemu()
    from ethosu_kit.firmware.qemu import Blob

    assert Blob(0, Path("fw/x.bin")).device.startswith(f"loader,file={Path.cwd()}/fw/x.bin,")
    monkeypatch.chdir(bringup.parent.parent)
    capsys.readouterr()
    assert main(["run", f"{bringup.parent.name}/{bringup.name}", "--cold-boot"]) == 0
    assert "BRINGUP PASS" in capsys.readouterr().out


def test_a_large_ram_is_poisoned_only_where_the_image_is(
    bringup: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A RAM region larger than POISON_WHOLE (an mps3-an524's 2 GiB DDR, as QEMU's map
    gives it) is poisoned only over the span the image uses: whole, its 2048 blobs
    overflowed bwrap's arguments and cost QEMU 4 GiB. Here with the limit lowered to
    8 MiB, the AN386's 16 MiB PSRAM (which the bring-up does not use) is left out."""
    need_qemu()
    from ethosu_kit.firmware import qemu

    monkeypatch.setattr(qemu, "POISON_WHOLE", 8 << 20)
    run = run_elf(bringup, cold_boot=True)
    assert run.exit_code == 0 and "BRINGUP PASS" in run.output, run.output
    addresses = {int(m, 16) for m in re.findall(r"poison-\d+\.bin,addr=(0x[0-9a-f]+)",
                                                 " ".join(run.command))}  # fmt: skip
    assert AN386_RAM["SRAM"] in addresses
    used = [a + n for a, n in qemu.run_extents(bringup) if 0x21000000 <= a < 0x22000000]
    top = max(used, default=0x21000000)
    assert all(a < top for a in addresses if a >= 0x21000000), sorted(map(hex, addresses))


def test_a_flash_file_qemu_cannot_load_gets_a_hint_about_the_file() -> None:
    from typing import Any

    from ethosu_kit.core.errors import KitError
    from ethosu_kit.firmware import run as run_module
    from ethosu_kit.firmware.qemu import RunResult

    said = (
        "qemu-system-arm: -device loader,file=/x/b.BRAM.bin,addr=0x10000000,force-raw=on: "
        "Cannot load specified image /x/b.BRAM.bin\n"
    )
    image: Any = type("Image", (), {"board": type("B", (), {"name": "b"})()})()
    with pytest.raises(KitError) as caught:
        run_module._qemu_failed(Path("fw.elf"), image, RunResult(1, said, 0.1, False, ()))
    assert caught.value.hint and "flash file" in caught.value.hint
    assert "machine and cpu" not in caught.value.hint


def test_a_ram_the_board_writes_non_volatile_stays_loadable_on_a_cold_boot_board() -> None:
    """An MPS2/MPS3 block RAM that the board controller fills from its SD card before
    reset, written `volatile = false` on its [[region]] (kind bram), holds the image like
    flash: the boot region of a cold-boot port, loadable without saying so again."""
    text = _board('from = "nv"').replace(
        'size = "4 MiB"\ndescription = "ZBT', 'size = "4 MiB"\nvolatile = false\ndescription = "ZBT'
    )
    board = parse_board(text, "b.toml", AN386)
    sram = board.region("SRAM")
    assert not sram.volatile and sram.loadable
    assert not board.region("PSRAM").loadable  # the other RAMs: still not


def test_check_elf_refuses_initial_data_in_ram_marked_loadable(
    data_pte_u55_sram_only: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The board says its SRAM is loadable (what a pack draft once did): the plan puts the
    Sram_Only network there with no copy, the build warns, check-elf refuses with one
    violation naming the segment, its address and SRAM."""
    board = tmp_path / "board"
    shutil.copytree(AN386, board)
    (board / "board.toml").write_text(_board('from = "nv"', "loadable = true\n"))
    project = make_project(data_pte_u55_sram_only, tmp_path / "p", board=board, app="bringup")
    assert project.buffers()["network"]["load_region"] is None
    assert any("network in SRAM, RAM that nothing fills" in n for n in project.plan()["notes"])
    elf, printed = _build(project.path, "bringup", capsys)
    assert "is not in non-volatile memory, so in no flash file" in printed
    manifest = json.loads(manifest_path(elf).read_text())
    assert [f["region"] for f in manifest["files"]] == ["FLASH"] and manifest["left_out"]
    result = check_elf(elf, project.plan_path)
    assert len(result.violations) == 1, [v.message for v in result.violations]
    v = result.violations[0]
    assert v.actual == "SRAM" and 0x20000000 <= v.address < 0x20400000
    assert re.fullmatch(
        r"cold boot: load segment \d+ \(\d+ bytes at LMA 0x2[0-9a-f]{7}\) is stored in SRAM, "
        r"volatile memory: at power-up it holds garbage and nothing loads it",
        v.message,
    ), v.message
    assert main(["check-elf", str(elf), "-q"]) == 4


@pytest.mark.parametrize("port", ["mps2-an500", "mps2-an521"])
def test_example_ports_boot_cold_with_their_code_ram_as_flash(
    port: str, data_pte_u55_shared: Path, tmp_path: Path
) -> None:
    """The other example ports' data allow a cold-boot variant: the SSRAM1 they boot from
    declared as flash (kind "flash": read-only, not volatile) and [boot] from = "nv", their
    other RAMs then hold the data. Bring-up passes from the flash artefacts alone."""
    need_cross_gcc()
    need_qemu()
    board = tmp_path / port
    shutil.copytree(REPO / "docs" / "examples" / "boards" / port, board)
    toml = board / "board.toml"
    text = toml.read_text()
    text, n = re.subn(r'(name = "SSRAM1"\nkind = )"bram"', r'\1"flash"', text)
    assert n == 1
    text, n = re.subn(r'(vector_region = "SSRAM1".*\n)', r'\1from = "nv"\n', text)
    assert n == 1
    toml.write_text(text)
    project = make_project(data_pte_u55_shared, tmp_path / "p", board=board, app="bringup")
    from ethosu_kit.firmware.build import build_project

    elf = build_project(project.path, app="bringup")
    result = check_elf(elf, project.plan_path)
    assert result.ok, [v.message for v in result.violations]
    (flash,) = read_manifest(manifest_path(elf)).files
    assert flash.region == "SSRAM1"
    run = run_elf(elf, cold_boot=True)
    assert run.exit_code == 0 and "BRINGUP PASS" in run.output, run.output


@pytest.mark.parametrize(
    ("pack", "extra", "boot"),
    [
        # the pack marks its MRAM startup="1": the part boots cold from it
        ("u85_soc.pdsc", ["--device", "U85SoC-1"], 'vector_region = "MRAM"\nfrom = "nv"'),
        # ... its ITCM (a RAM a boot ROM or debugger fills): loaded
        ("test_soc.pdsc", ["--device", "TestSoC-E7", "--console-peripheral", "UART0"],
         'vector_region = "ITCM_S"\nfrom = "loader"'),
    ],
)  # fmt: skip
def test_new_board_drafts_the_boot_the_pack_gives(
    pack: str, extra: list[str], boot: str, tmp_path: Path
) -> None:
    data = REPO / "tests" / "data"
    out = tmp_path / "board"
    assert main(["new-board", "soc", "-o", str(out), "--pack", str(data / pack), *extra]) == 0
    text = (out / "board.toml").read_text()
    assert re.search(re.escape(boot).replace("\\n", r"\s*(#.*)?\n"), text), text


def test_the_kit_links_with_n_so_no_header_is_loaded(tmp_path: Path) -> None:
    """GNU ld maps the ELF and program headers into the first load segment when they fit
    below its first section in the same page (here: code at 0x1100, headers at 0x1000,
    written into the flash); -n, as the kit links, never does. check-elf's test for it."""
    from ethosu_kit.firmware.elf import read_elf

    need_cross_gcc()
    (tmp_path / "x.c").write_text("int x = 5;\nvoid _start(void) { for (;;) { ++x; } }\n")
    (tmp_path / "x.ld").write_text(
        "MEMORY { FLASH (rx) : ORIGIN = 0, LENGTH = 1M  RAM (rwx) : ORIGIN = 0x20000000, "
        "LENGTH = 1M }\nENTRY(_start)\nSECTIONS { .text 0x1100 : { *(.text*) } > FLASH\n"
        "  .data : { *(.data*) } > RAM AT> FLASH  .bss : { *(.bss*) } > RAM }\n"
    )
    loaded = []
    for flags in ([], ["-Wl,-n"]):
        elf = tmp_path / f"x{len(flags)}.elf"
        subprocess.run(
            ["arm-none-eabi-gcc", "-mcpu=cortex-m4", "-mthumb", "-nostdlib", "-T",
             str(tmp_path / "x.ld"), *flags, str(tmp_path / "x.c"), "-o", str(elf)],
            check=True,
        )  # fmt: skip
        with elf.open("rb") as f:
            image = read_elf(f)
        loaded.append([image.loads_headers(s) for s in image.segments])
    assert loaded[0][0] and not any(loaded[1]), loaded
