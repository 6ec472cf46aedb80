"""Vela data in named external data (.ptd): a program lowered with ExecuTorch 1.5.1's
VelaExternalBlockPlacements (command streams to tag `cmd_data`, weights to
`weight_data`), read, placed, built, proven and run.

Cheap on purpose: two small models lowered once and cached with the other test models
(keyed by the builders', the lowering modules' sources and the versions); one self-test
build (with a fixed slot) covers the placement, check-elf, the QEMU PASS and the swapped
.ptd; the runner build needs the user's checkouts and skips without them.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from elftools.elf.elffile import ELFFile

import ethosu_kit.aot.external
from conftest import cache_dir, cache_key
from ethosu_kit.aot.lowering import Target
from ethosu_kit.cli.app import main
from ethosu_kit.core.writer import file_lock
from ethosu_kit.firmware.build import build_project
from ethosu_kit.npu.exit_codes import EXIT_CODES
from ethosu_kit.plan.types import MemoryPlan, Role
from ethosu_kit.pte.ptd import read_ptd
from fw_helpers import host_cc, need_cross_gcc, qemu_run
from models import U55, TestModel, conv_relu6_conv, lowering_source, small_cnn
from runner_build import build_with_cli, require_externals, run_qemu

pytestmark = pytest.mark.lowering
REPO = Path(__file__).resolve().parents[1]

MODELS = {
    "ptd_cnn": TestModel("ptd_cnn", small_cnn, Target(U55, memory_mode="Shared_Sram")),
    # another model's .ptd, for the swap and the keys that do not match
    "ptd_other": TestModel("ptd_other", conv_relu6_conv, Target(U55, memory_mode="Shared_Sram")),
}
DATA_MISMATCH = next(c.value for c in EXIT_CODES if c.name == "DATA_MISMATCH")


def lowered_external(name: str) -> Path:
    """The folder holding model.pte, cmd_data.ptd and weight_data.ptd of MODELS[name],
    lowered once (cached beside the other test models, under a lock)."""
    model = MODELS[name]
    extra = hashlib.sha256(lowering_source(ethosu_kit.aot.external).encode()).hexdigest()[:8]
    folder = cache_dir() / f"{name}-{cache_key(model)}-{extra}"
    if (folder / "model.pte").is_file():
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    with file_lock(folder.parent / f"{folder.name}.lock"):
        if (folder / "model.pte").is_file():
            return folder
        try:
            import executorch.exir  # noqa: F401
        except ImportError as exc:
            pytest.skip(f"lowering test models needs torch and executorch: {exc}")
        module, inputs, calibration = model.build()
        staging = folder.with_name(folder.name + ".tmp")
        shutil.rmtree(staging, ignore_errors=True)
        ethosu_kit.aot.external.lower_external(
            module, inputs, model.target, staging, calibration=calibration
        )
        staging.rename(folder)
    return folder


@pytest.fixture(scope="session")
def ptd_cnn() -> Path:
    return lowered_external("ptd_cnn")


@pytest.fixture(scope="session")
def ptd_other() -> Path:
    return lowered_external("ptd_other")


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _keys(folder: Path, tag: str) -> list[str]:
    return sorted(read_ptd(folder / f"{tag}.ptd").entries)


def test_lowering_writes_one_ptd_per_tag(ptd_cnn: Path) -> None:
    assert sorted(p.name for p in ptd_cnn.glob("*.ptd")) == ["cmd_data.ptd", "weight_data.ptd"]
    for tag in ("cmd_data", "weight_data"):
        ptd = read_ptd(ptd_cnn / f"{tag}.ptd")
        for key, entry in ptd.entries.items():
            # arm_vela.py: the key is the SHA-256 of the tag, a NUL and the payload
            payload = ptd.data[entry.offset : entry.offset + entry.size]
            assert key == hashlib.sha256(tag.encode() + b"\0" + payload).hexdigest()


def test_inspect_lists_blocks_keys_and_files(
    ptd_cnn: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = _cli(capsys, "inspect", str(ptd_cnn / "model.pte"))  # found beside it
    assert code == 0
    for tag in ("cmd_data", "weight_data"):
        (key,) = _keys(ptd_cnn, tag)
        assert f"forward delegate 0 {tag}: key {key}" in out
        assert f"{ptd_cnn / tag}.ptd" in out
    code, out, _ = _cli(
        capsys, "inspect", "--json", str(ptd_cnn / "model.pte"),
        "--ptd", str(ptd_cnn / "cmd_data.ptd"), "--ptd", str(ptd_cnn / "weight_data.ptd"),
    )  # fmt: skip
    blocks = json.loads(out)["external_data"]["blocks"]
    assert {(b["block"], b["tag"]) for b in blocks} == {
        ("cmd_data", "cmd_data"),
        ("weight_data", "weight_data"),
    }


def test_a_missing_ptd_is_one_error(
    ptd_cnn: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    alone = tmp_path / "model.pte"
    shutil.copy(ptd_cnn / "model.pte", alone)
    (key,) = _keys(ptd_cnn, "cmd_data")
    for argv in (["inspect", str(alone)], ["gen", "--pte", str(alone), "-o", str(tmp_path / "f")]):
        code, _, err = _cli(capsys, *argv)
        assert code == 2
        first = err.splitlines()[0]
        assert first.startswith("error: ") and key in first and "no .ptd file given" in first
        assert "Traceback" not in err
    assert not (tmp_path / "f").exists()


def test_a_ptd_program_among_several_is_refused_for_what_it_is(
    ptd_cnn: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Its .ptd files beside it: the answer is "one program per .ptd image", not "no .ptd
    beside the pte" (which it was before, while the files were there)."""
    other = Path(__file__).parent / "data" / "pte" / "u55_shared.pte"
    out = tmp_path / "f"
    argv = ["gen", "--pte", f"cnn={ptd_cnn / 'model.pte'}", "--pte", f"a={other}", "-o", str(out)]
    code, _, err = _cli(capsys, *argv)
    assert code == 2 and err.startswith("error: ") and "Traceback" not in err
    assert "program 'cnn' keeps its Vela data in .ptd files" in err.splitlines()[0]
    assert not out.exists()


def test_a_ptd_whose_keys_do_not_match_is_one_error(
    ptd_cnn: Path, ptd_other: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (key,) = _keys(ptd_cnn, "weight_data")
    wrong = str(ptd_other / "weight_data.ptd")
    code, _, err = _cli(
        capsys, "gen", "--pte", str(ptd_cnn / "model.pte"), "-o", str(tmp_path / "f"),
        "--ptd", str(ptd_cnn / "cmd_data.ptd"), "--ptd", wrong,
    )  # fmt: skip
    assert code == 2
    first = err.splitlines()[0]
    assert first.startswith("error: ") and key in first and wrong in first


def test_gen_places_each_ptd_where_its_tag_says(
    ptd_cnn: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pte = str(ptd_cnn / "model.pte")
    code, _, err = _cli(capsys, "gen", "--pte", pte, "-o", str(tmp_path / "a"), "-q")
    assert code == 0, err
    plan = MemoryPlan.from_json(tmp_path / "a" / "memory_plan.json")
    placed = {b.name: b for b in plan.by_role(Role.EXTERNAL_DATA)}
    # default: non-volatile memory the NPU reaches (Corstone-300's QSPI flash)
    assert {n: b.region for n, b in placed.items()} == {
        "ptd_cmd_data": "QSPI",
        "ptd_weight_data": "QSPI",
    }
    assert all(b.npu and b.align % 16 == 0 for b in placed.values())
    gen = tmp_path / "a" / "generated"
    for tag in ("cmd_data", "weight_data"):  # the file itself, assembled in, not a copy of it
        assert (gen / f"{tag}.ptd").read_bytes() == (ptd_cnn / f"{tag}.ptd").read_bytes()
    code, _, err = _cli(
        capsys, "gen", "--pte", pte, "-o", str(tmp_path / "b"), "-q",
        "--place-data", "cmd_data=SRAM", "--place-data", "weight_data=DDR",
    )  # fmt: skip
    assert code == 0, err
    plan = MemoryPlan.from_json(tmp_path / "b" / "memory_plan.json")
    assert plan.buffer("ptd_cmd_data").region == "SRAM"
    assert plan.buffer("ptd_weight_data").region == "DDR"


def _patch_section(elf: Path, section: str, data: bytes, out: Path) -> None:
    """`out`: `elf` with `section`'s bytes replaced by `data`, padded as erased flash:
    what flashing another .ptd into a slot does, without relinking."""
    with elf.open("rb") as f:
        s = ELFFile(f).get_section_by_name(section)
        offset, size = s["sh_offset"], s["sh_size"]
    assert len(data) <= size
    image = bytearray(elf.read_bytes())
    image[offset : offset + size] = data + b"\xff" * (size - len(data))
    out.write_bytes(bytes(image))


SLOT = 0x38400000  # Corstone-300 QSPI + 4 MiB


@pytest.mark.firmware
@pytest.mark.qemu
def test_selftest_in_a_slot_passes_and_a_swapped_ptd_is_refused(
    ptd_cnn: Path, ptd_other: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    need_cross_gcc()
    project = tmp_path / "fw"
    code, _, err = _cli(
        capsys, "gen", "--pte", str(ptd_cnn / "model.pte"), "-o", str(project), "-q",
        "--app", "selftest", "--npu", "virtual", "--ptd-slot", f"weight_data={SLOT:#x}:64KiB",
    )  # fmt: skip
    assert code == 0, err
    elf = build_project(project, app="selftest", toolchain="gcc")
    # check-elf proves every block: placed, aligned, the slot's address, the file's bytes
    code, out, err = _cli(capsys, "check-elf", str(elf))
    assert code == 0, out + err
    run = qemu_run(elf)
    assert run.exit_code == 0, run.output
    assert "kit: external data: 2 key(s) found and verified in 2 .ptd file(s)" in run.output
    assert "SELFTEST PASS" in run.output

    swapped = tmp_path / "swapped.elf"
    _patch_section(
        elf, ".kit.ptd_weight_data", (ptd_other / "weight_data.ptd").read_bytes(), swapped
    )
    run = qemu_run(swapped)
    (key,) = _keys(ptd_cnn, "weight_data")
    assert run.exit_code == DATA_MISMATCH, run.output
    assert f"needs key {key[:16]}... in weight_data.ptd: key not in the .ptd" in run.output
    assert "not this program's" in run.output
    assert "delegate 0:" not in run.output  # reported at start-up, never executed
    # the right keys over altered bytes: the start-up hash finds it
    altered = bytearray((ptd_cnn / "weight_data.ptd").read_bytes())
    altered[read_ptd(ptd_cnn / "weight_data.ptd").entries[key].offset + 5] ^= 0x40
    _patch_section(elf, ".kit.ptd_weight_data", bytes(altered), tmp_path / "altered.elf")
    run = qemu_run(tmp_path / "altered.elf")
    assert run.exit_code == DATA_MISMATCH, run.output
    assert "weight_data.ptd: data is not what its key names (SHA-256 differs)" in run.output
    assert "delegate 0:" not in run.output
    plan = str(project / "memory_plan.json")
    code, out, err = _cli(capsys, "check-elf", str(swapped), "--plan", plan)
    assert code != 0 and "not weight_data.ptd" in out + err


@pytest.mark.firmware
@pytest.mark.qemu
@pytest.mark.slow
def test_runner_equals_simulate(ptd_cnn: Path, tmp_path: Path) -> None:
    """The executor_runner hands ExecuTorch the placed data map; its outputs equal the
    host simulation's (0 LSB). Needs the user's checkouts."""
    require_externals("EXECUTORCH_ROOT", "ETHOSU_DRIVER_ROOT", "CMSIS_ROOT")
    project = tmp_path / "fw"
    pte = ptd_cnn / "model.pte"
    assert main(["gen", "--pte", str(pte), "-o", str(project), "-q", "--npu", "virtual"]) == 0
    elf = build_with_cli(project, "virtual")
    assert main(["check-elf", str(elf)]) == 0
    assert run_qemu(elf).exit_code == 0
    inputs = tmp_path / "x.npy"
    import numpy as np

    np.save(inputs, np.random.default_rng(3).uniform(-1, 1, (1, 3, 16, 16)).astype(np.float32))
    ran, simulated = tmp_path / "run.npz", tmp_path / "sim.npz"
    result = subprocess.run(
        ["ethosu-kit", "run", str(elf), "--inputs", str(inputs), "-o", str(ran)],
        capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert main(["simulate", str(pte), "--inputs", str(inputs), "-o", str(simulated)]) == 0
    assert main(["compare", "--pte", str(pte), "--lsb", "0", str(ran), str(simulated)]) == 0


def test_the_lowering_module_is_keyed_apart() -> None:
    """aot/external is a module of its own: the other test models' cache keys (the
    lowering module's source) do not move when it changes."""
    assert "VelaExternalBlockPlacements" in inspect.getsource(ethosu_kit.aot.external)
    assert "VelaExternalBlockPlacements" not in lowering_source(ethosu_kit.aot.lowering)


def test_board_data_places_a_tag(
    ptd_cnn: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """[external_data] in board.toml maps a tag to a region; the command line wins."""
    board = tmp_path / "board" / "board.toml"
    board.parent.mkdir()
    text = (REPO / "boards" / "corstone-300" / "board.toml").read_text()
    board.write_text(text + '\n[external_data]\nweight_data = "DDR"\nbiases = "QSPI"\n')
    pte = str(ptd_cnn / "model.pte")
    code, _, err = _cli(
        capsys, "gen", "--pte", pte, "--board", str(board), "-o", str(tmp_path / "a"), "-q"
    )
    assert code == 0, err
    plan = MemoryPlan.from_json(tmp_path / "a" / "memory_plan.json")
    assert plan.buffer("ptd_weight_data").region == "DDR"  # a tag this program lacks: ignored
    code, _, err = _cli(
        capsys, "gen", "--pte", pte, "--board", str(board), "-o", str(tmp_path / "b"), "-q",
        "--place-data", "weight_data=QSPI",
    )  # fmt: skip
    assert code == 0, err
    assert (
        MemoryPlan.from_json(tmp_path / "b" / "memory_plan.json").buffer("ptd_weight_data").region
        == "QSPI"
    )
    board.write_text(text + '\n[external_data]\nweight_data = "NOWHERE"\n')
    code, _, err = _cli(
        capsys, "gen", "--pte", pte, "--board", str(board), "-o", str(tmp_path / "c")
    )
    assert code == 2 and err.startswith("error: ") and "NOWHERE" in err.splitlines()[0]


def test_malformed_ptd_files_are_one_error_and_the_c_reader_never_reads_past(
    ptd_cnn: Path, tmp_path: Path
) -> None:
    """Truncated and bit-flipped .ptd files: the Python reader refuses them with PteError
    (or reads them), and the firmware's reader (sdk/src/ptd.c, built for the host with
    the sanitizers) answers a status for each, never reading outside the file."""
    import random

    from ethosu_kit.core.errors import PteError
    from ethosu_kit.pte.ptd import parse_ptd

    good = (ptd_cnn / "weight_data.ptd").read_bytes()
    (key,) = _keys(ptd_cnn, "weight_data")
    rng = random.Random(18)
    cases = [good[:n] for n in (0, 7, 8, 47, 48, 100, 255, 256, len(good) - 1)]
    for _ in range(60):
        bad = bytearray(good)
        for _ in range(rng.randint(1, 4)):
            bad[rng.randrange(0, 256)] = rng.randrange(256)
        cases.append(bytes(bad))
    for data in cases:
        try:
            parse_ptd(data, "x.ptd")
        except PteError as exc:
            assert exc.message.startswith("x.ptd: ")
    cc = host_cc()
    main_c = tmp_path / "main.c"
    main_c.write_text(
        '#include "kit/ptd.h"\n#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n'
        "int main(int argc, char **argv) {\n  if (argc < 3) return 2;\n"
        '  FILE *f = fopen(argv[1], "rb"); if (!f) return 2;\n'
        "  static unsigned char buf[1 << 16] __attribute__((aligned(16)));\n"
        "  size_t n = fread(buf, 1, sizeof buf, f); fclose(f);\n"
        "  unsigned char *copy = malloc(n ? n : 1); memcpy(copy, buf, n);\n"
        "  const uint8_t *d = 0; size_t size = 0;\n"
        "  int rc = kit_ptd_find(n ? copy : 0, n, argv[2], strlen(argv[2]), &d, &size);\n"
        '  printf("%d %zu\\n", rc, size); free(copy); return 0; }\n'
    )
    exe = tmp_path / "ptd_host"
    flags = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all"]
    argv = [cc, "-std=c11", "-Wall", "-Wextra", "-Werror", f"-I{REPO / 'sdk' / 'include'}"]
    built = subprocess.run(
        [*argv, *flags, str(main_c), str(REPO / "sdk" / "src" / "ptd.c"), "-o", str(exe)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if built.returncode != 0:  # no sanitizer runtime here: the bounds still run
        built = subprocess.run(
            [*argv, str(main_c), str(REPO / "sdk" / "src" / "ptd.c"), "-o", str(exe)],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
    assert built.returncode == 0, built.stderr
    results = []
    for i, data in enumerate([good, *cases]):
        path = tmp_path / f"case{i}.ptd"
        path.write_bytes(data)
        run = subprocess.run(
            [str(exe), str(path), key], capture_output=True, text=True, check=False
        )
        assert run.returncode == 0, run.stderr[-2000:]
        results.append(run.stdout.split())
    entry = read_ptd(ptd_cnn / "weight_data.ptd").entries[key]
    assert results[0] == ["0", str(entry.size)]  # the good file: found, its size
    assert all(r[0] in {"0", "-1", "-2", "-3"} for r in results)


# option -> (its value, what the one error line says)
BAD_PLACEMENTS = {
    "--place-data": [
        ("weight_data=DTCM", "the NPU does not reach it"),
        ("weight_data=NOWHERE", "has no region 'NOWHERE'"),
        ("biases=QSPI", "no .ptd with tag 'biases'"),
        ("weight_data", "expected TAG=REGION"),
    ],
    "--ptd-slot": [
        ("weight_data=0x38400004:64KiB", "not 16-byte aligned"),
        ("weight_data=0x38400000:16", "less than the .ptd's"),
        ("weight_data=0x30000000:64KiB", "in DTCM, which the NPU does not reach"),
        ("weight_data=0x38400000", "expected TAG=ADDRESS:SIZE"),
        ("biases=0x38400000:64KiB", "no .ptd with tag 'biases'"),
    ],
}
PLACEMENT_CASES = [(o, value, said) for o, cases in BAD_PLACEMENTS.items() for value, said in cases]


@pytest.mark.parametrize(
    "case", PLACEMENT_CASES, ids=[f"{o} {value}" for o, value, _ in PLACEMENT_CASES]
)
def test_a_bad_placement_or_slot_is_one_error(
    ptd_cnn: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    case: tuple[str, str, str],
) -> None:
    """A tag mapped where the NPU cannot reach, an unknown tag or region, a slot that is
    misaligned, too small or off the NPU's reach: one error line, nothing written."""
    option, value, said = case
    code, _, err = _cli(
        capsys, "gen", "--pte", str(ptd_cnn / "model.pte"), "-o", str(tmp_path / "f"), option, value
    )
    assert code == 2
    assert err.startswith("error: ") and said in err.splitlines()[0], err
    assert not (tmp_path / "f").exists()
