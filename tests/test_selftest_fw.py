"""The NPU self-test (apps/selftest) in QEMU: every Ethos-U delegate's own command stream
run by the firmware on the virtual NPU, every output byte compared with the vectors built
into the image.

Through the user's interface: `ethosu-kit build DIR --app selftest --npu virtual
[--vectors FILE.npz]`, then the ELF in QEMU. Per built-in board and mode QEMU can run:
random vectors (made on the host by the virtual NPU), vectors from `ethosu-kit simulate -o`,
and a deliberately wrong expected byte, which must fail naming the delegate, output,
index and both values. Every configuration here is one QEMU and the virtual NPU support:
if either stops supporting one, the test fails (it is never turned into a skip).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from ethosu_kit.cli.app import main as kit_main
from ethosu_kit.core.errors import KitError
from ethosu_kit.firmware.elf_check import check_elf
from ethosu_kit.firmware.qemu import RunResult, run_elf
from fw_helpers import need_cross_gcc, need_qemu
from projects import make_project

pytestmark = [pytest.mark.firmware, pytest.mark.qemu]

CONFIGS = [
    # (fixture, board, mode)
    ("pte_u55_shared", "cs300", "Shared_Sram"),
    ("pte_u55_sram_only", "cs300", "Sram_Only"),
    ("pte_u65_dedicated", "cs300", "Dedicated_Sram"),
    ("pte_u85_shared", "cs320", "Shared_Sram"),
    ("pte_u85_dedicated", "cs320", "Dedicated_Sram"),
]


def build_selftest(project: Path, vectors: Path | None = None) -> Path:
    args = ["build", str(project), "--app", "selftest", "--npu", "virtual"]
    if vectors is not None:
        args += ["--vectors", str(vectors)]
    # a KitError here (the virtual NPU cannot make the vectors) is a failure, not a skip:
    # every configuration in CONFIGS is one the virtual NPU and QEMU support today
    assert kit_main(args) == 0
    elf = project / "build" / "gcc" / "selftest.elf"
    assert elf.is_file()
    return elf


def run(elf: Path) -> RunResult:
    need_qemu()
    result = run_elf(elf, timeout=60)  # a board QEMU cannot run is a failure, not a skip
    assert not result.timed_out, result.output
    return result


@pytest.mark.parametrize(("fixture", "board", "mode"), CONFIGS)
def test_selftest_passes(
    request: pytest.FixtureRequest, root: Path, fixture: str, board: str, mode: str
) -> None:
    """Random vectors: the firmware's NPU run equals the host's, byte for byte."""
    need_cross_gcc()
    pte: Path = request.getfixturevalue(fixture)
    if board == "cs300":
        # generated for the runner, as README command one does: build --app selftest re-plans
        out = root / f"{fixture}-{board}"
        project = make_project(pte, out, board=board, mode=mode, app="executor_runner").path
    else:
        # laid out for the board's QEMU stand-in (cs320 on mps3-an547, docs/running.md)
        project = root / f"{fixture}-{board}"
        make_project(pte, project, board=board, mode=mode, app="selftest", qemu_stand_in=True)
    elf = build_selftest(project)
    result = check_elf(elf, project / "memory_plan.json")
    assert result.ok, [v.message for v in result.violations]
    assert "selftest_vectors" in result.checked
    out = run(elf)
    assert out.exit_code == 0, out.output
    assert re.search(r"^delegate 0: PASS", out.output, re.M), out.output
    assert "SELFTEST PASS" in out.output
    assert re.search(r"^usage: stack used \d+ of \d+ bytes", out.output, re.M)


def test_simulate_vectors_and_a_wrong_byte(
    pte_two_delegates: Path, root: Path, tmp_path: Path
) -> None:
    """`simulate -o` makes the vectors; one flipped expected byte fails, named exactly."""
    need_cross_gcc()
    vectors = tmp_path / "v.npz"
    assert kit_main(["simulate", str(pte_two_delegates), "--seed", "7", "-o", str(vectors)]) == 0
    project = make_project(
        pte_two_delegates, root / "two", board="cs300", mode="Shared_Sram", app="selftest"
    ).path
    out = run(build_selftest(project, vectors))
    assert out.exit_code == 0, out.output
    assert len(re.findall(r"^delegate \d: PASS", out.output, re.M)) == 2, out.output
    assert "vectors: v.npz" in out.output

    arrays = dict(np.load(vectors))
    want = arrays["delegate1_output0"].reshape(-1)
    index = 77
    got = int(want[index])
    want[index] = np.int8(got + 1 if got < 127 else got - 1)
    bad = tmp_path / "bad.npz"
    np.savez(bad, **arrays)
    out = run(build_selftest(project, bad))
    assert out.exit_code == 1, out.output
    assert re.search(r"^delegate 0: PASS", out.output, re.M), out.output
    line = (
        rf"^delegate 1: FAIL output 0 index {index}: got {got}, want {int(want[index])} "
        r"\(delegate1_output0; 1 of \d+ elements differ\)"
    )
    assert re.search(line, out.output, re.M), out.output
    assert "SELFTEST FAIL" in out.output


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda a: a.update(delegate0_input0=a["delegate0_input0"].astype(np.int16)),
            "dtype int16",
        ),
        # the wanted shape as simulate -o writes it (the program's rank, batch included)
        (
            lambda a: a.update(delegate0_input0=a["delegate0_input0"][..., :2]),
            "shape [1, 3, 8, 2], the delegate's tensor is [1, 3, 8, 8]",
        ),
        (lambda a: a.pop("delegate1_input0"), "no delegate1_input0"),
        (lambda a: a.update(delegate2_input0=a["delegate0_input0"]), "key delegate2_input0"),
    ],
    ids=["dtype", "shape", "missing", "unknown"],
)
def test_bad_vectors_name_the_key(
    pte_two_delegates: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    change,
    message,  # type: ignore[no-untyped-def]
) -> None:
    vectors = tmp_path / "v.npz"
    assert kit_main(["simulate", str(pte_two_delegates), "-o", str(vectors)]) == 0
    arrays = dict(np.load(vectors))
    change(arrays)
    np.savez(vectors, **arrays)
    capsys.readouterr()
    out = tmp_path / "fw"
    code = kit_main(
        ["gen", "--pte", str(pte_two_delegates), "--app", "selftest", "--vectors", str(vectors),
         "-o", str(out), "-q"]
    )  # fmt: skip
    err = capsys.readouterr().err
    assert code != 0
    lines = [x for x in err.splitlines() if x.startswith("error:")]
    assert len(lines) == 1 and message in lines[0] and "v.npz" in lines[0], err
    assert "Traceback" not in err
    assert not out.exists(), "a failed gen wrote nothing"


def test_selftest_with_the_arm_driver_builds(pte_u65_dedicated: Path, root: Path) -> None:
    """`--npu driver`: the Arm Ethos-U core driver from ETHOSU_DRIVER_ROOT links in and the
    image checks; QEMU has no NPU, so the run stops at NPU init, named, not in a hang."""
    import os

    need_cross_gcc()
    missing = [n for n in ("ETHOSU_DRIVER_ROOT", "CMSIS_ROOT") if not os.environ.get(n)]
    if missing:
        pytest.skip(f"{', '.join(missing)} not set: the Arm driver comes from the user's checkout")
    project = make_project(
        pte_u65_dedicated, root / "driver", board="cs300", mode="Dedicated_Sram", app="selftest"
    ).path
    args = ["build", str(project), "--app", "selftest", "--npu", "driver"]
    assert kit_main(args) == 0
    elf = project / "build" / "gcc" / "selftest.elf"
    assert check_elf(elf, project / "memory_plan.json").ok
    out = run(elf)
    assert out.exit_code == 17, out.output
    assert "ethosu_init failed" in out.output


def test_a_driver_selftest_where_no_npu_answers_names_npu_base(
    pte_u55_shared: Path, root: Path
) -> None:
    """A board whose npu.base has nothing behind it (the AN521 example: QEMU faults there):
    the Arm driver's first register access is a bus fault, and the fault report says it is
    at the NPU's registers and which board keys to check, then `kit: exit 16`."""
    import os

    need_cross_gcc()
    missing = [n for n in ("ETHOSU_DRIVER_ROOT", "CMSIS_ROOT") if not os.environ.get(n)]
    if missing:
        pytest.skip(f"{', '.join(missing)} not set: the Arm driver comes from the user's checkout")
    board = Path(__file__).parents[1] / "docs" / "examples" / "boards" / "mps2-an521"
    project = make_project(
        pte_u55_shared, root / "an521", board=board, mode="Shared_Sram", app="selftest"
    ).path
    assert kit_main(["build", str(project), "--app", "selftest", "--npu", "driver"]) == 0
    out = run(project / "build" / "gcc" / "selftest.elf")
    assert out.exit_code == 16, out.output
    assert "E: the bus fault is at NPU register 0x" in out.output, out.output
    assert "of npu.base 0x58102000: no NPU answers there" in out.output, out.output
    assert out.output.rstrip().endswith("kit: exit 16"), out.output


def test_a_virtual_npu_error_prints_its_64_bit_figures(
    pte_u65_dedicated: Path, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The virtual NPU's messages print 64-bit values; the firmware's newlib-nano snprintf
    has no %lld/%llu, which once made this `[ld, ld) outside its region of 1522771260
    bytes`. A fast scratch of 16 B for a stream that needs 768 B: the right figures. (gen
    now refuses that size up front; its host check is set aside to get the image.)"""
    from ethosu_kit.firmware import pipeline

    monkeypatch.setattr(pipeline, "check_fast_scratch", lambda *args, **kwargs: None)
    need_cross_gcc()
    project = root / "fast16"
    make_project(
        pte_u65_dedicated, project, board="cs300", app="selftest", npu="virtual", fast_scratch=16
    )
    out = run(build_selftest(project))
    assert out.exit_code == 9, out.output
    assert "OFM tile 0 spans bytes [0, 768) outside its region of 16 bytes" in out.output, (
        out.output
    )


def test_the_virtual_npus_64_bit_text_on_the_host(tmp_path: Path) -> None:
    """The same formatter in the host build (glibc): every edge of both ranges."""
    import shutil
    import subprocess

    from ethosu_kit.vnpu.build import source_dir

    cc = shutil.which("cc")
    if cc is None:
        pytest.skip("no host C compiler")
    src = tmp_path / "t.c"
    src.write_text(
        '#include <stdio.h>\n#include "common/num.h"\n'
        "int main(void) {\n"
        '    printf("%s %s %s %s %s\\n", VNPU_I64(INT64_MIN), VNPU_I64(-1), VNPU_I64(0),\n'
        "           VNPU_I64(INT64_MAX), VNPU_U64(UINT64_MAX));\n"
        "    return 0;\n}\n"
    )
    root_dir = source_dir()
    exe = tmp_path / "t"
    flags = ["-std=c99", "-Wall", "-Wextra", "-Werror"]
    subprocess.run(
        [cc, *flags, f"-I{root_dir / 'src'}", f"-I{root_dir / 'include'}", str(src),
         str(root_dir / "src" / "common" / "num.c"), "-o", str(exe)],
        check=True,
    )  # fmt: skip
    text = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout
    assert text.split() == [
        "-9223372036854775808", "-1", "0", "9223372036854775807", "18446744073709551615"
    ]  # fmt: skip


POOL_APP = """\
#include "kit/app.h"
#include "kit_memory_config.h"

int ethosu_kit_app_main(void) { return kit_app_result(kit_method_pool[0]); }
"""


def test_an_app_whose_pools_the_selftest_plan_lacks_names_the_fix(
    pte_u55_shared: Path, root: Path
) -> None:
    """A self-test plan has no runner pools: building the runner (or an app of one's own
    that takes the method pool) from it stops with the way out, not with `undefined
    reference to kit_method_pool`."""
    from ethosu_kit.firmware.build import build_project

    need_cross_gcc()
    project = make_project(
        pte_u55_shared, root / "pools", board="cs300", mode="Shared_Sram", app="selftest"
    ).path
    with pytest.raises(KitError) as err:
        build_project(project, app="executor_runner", npu="virtual")
    assert "the memory plan in" in str(err.value) and 'is for app "selftest"' in str(err.value)
    assert "gen-firmware --app executor_runner" in str(err.value)

    app = root / "pool_app"
    app.mkdir()
    (app / "main.c").write_text(POOL_APP)
    with pytest.raises(KitError) as err:
        build_project(project, app=str(app), npu="virtual")
    assert "undefined reference" not in str(err.value)
    # the build's error line keeps the compiler's last words: the fix
    assert "regenerate the project for this app (gen-firmware --app <this app>)" in str(err.value)
