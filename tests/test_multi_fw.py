"""Several programs in one image, and a program with two methods (issue 18), in QEMU.

One self-test image per built-in board, every program for the board's NPU configuration:
Corstone-300 (Ethos-U55, Shared_Sram: three checked-in programs) and Corstone-320 (Ethos-U85,
Dedicated_Sram, on its QEMU stand-in: two programs). Every delegate of every program runs
on the virtual NPU and must PASS; the planned RAM of the shared buffers is the largest
need, not the sum (the figures are printed); check-elf proves every program's buffers.
The errors a user meets naming programs and methods are one `error:` line each.

Cheap: the programs are the checked-in ptes plus one cached lowering per extra program;
each image is one small build. The runner itself (with the ExecuTorch checkouts) is in
test_multi_runner.py.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from ethosu_kit.cli.app import main as kit_main
from ethosu_kit.firmware.elf_check import check_elf
from ethosu_kit.firmware.image import identify
from ethosu_kit.firmware.qemu import RunResult, run_image
from ethosu_kit.plan.types import MemoryPlan, Role
from fw_helpers import need_cross_gcc, need_qemu
from hostile import assert_refused, run_kit
from multi_models import two_method_pte

PTE = Path(__file__).resolve().parent / "data" / "pte"
U55_SHARED = {"accelerator": "ethos-u55-128", "memory_mode": "Shared_Sram"}

pytestmark = [pytest.mark.firmware, pytest.mark.qemu]


def images(request: pytest.FixtureRequest) -> dict[str, tuple[list[str], list[str]]]:
    """board -> (gen's board options, its --pte NAME=FILE options)."""
    return {
        "cs300": (
            ["--board", "corstone-300"],
            [
                f"kws={PTE / 'u55_shared.pte'}",
                f"vww={PTE / 'two_delegates.pte'}",
                f"tio={PTE / 'two_io.pte'}",
            ],
        ),
        "cs320": (
            ["--board", "corstone-320", "--qemu-stand-in"],
            [
                f"person={PTE / 'u85_dedicated.pte'}",
                f"io={request.getfixturevalue('pte_u85_dedicated_io')}",
            ],
        ),
    }


def selftest_image(project: Path, board: list[str], ptes: list[str]) -> Path:
    need_cross_gcc()
    argv = ["gen", *board, "--app", "selftest", "--npu", "virtual", "-o", str(project), "-q"]
    for pte in ptes:
        argv += ["--pte", pte]
    assert kit_main(argv) == 0
    assert kit_main(["build", str(project), "--app", "selftest", "--npu", "virtual"]) == 0
    elf = project / "build" / "gcc" / "selftest.elf"
    assert elf.is_file()
    return elf


def run(elf: Path, *words: str) -> RunResult:
    need_qemu()
    image = identify(elf)
    result = run_image(image, 60, semihosting_args=(elf.name, *words) if words else ())
    assert not result.timed_out, result.output
    return result


@pytest.fixture(scope="module")
def built(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, tuple[Path, Path]]:
    """board -> (project, self-test ELF), built once per board on first use."""
    return {}


def image_for(
    board: str, request: pytest.FixtureRequest, built: dict[str, tuple[Path, Path]], root: Path
) -> tuple[Path, Path]:
    if board not in built:
        options, ptes = images(request)[board]
        project = root / board
        built[board] = (project, selftest_image(project, options, ptes))
    return built[board]


@pytest.mark.parametrize("board", ["cs300", "cs320"])
def test_every_delegate_of_every_program_passes(
    request: pytest.FixtureRequest, built: dict[str, tuple[Path, Path]], root: Path, board: str
) -> None:
    project, elf = image_for(board, request, built, root)
    plan = MemoryPlan.from_json(project / "memory_plan.json")
    names = [p.name for p in plan.programs]
    result = run(elf)
    assert result.exit_code == 0, result.output
    delegates = sum(len(p.model.ethosu_delegates) for p in _models(project, names))
    assert f"SELFTEST PASS ({delegates} of {delegates} delegates passed)" in result.output
    for name in names:
        assert re.search(rf"PASS \({name}\.forward delegate", result.output), result.output
    # check-elf proves every program's buffers
    checked = check_elf(elf, project / "memory_plan.json")
    assert not checked.violations, checked.violations
    # the shared per-execute buffers are the largest need, not the sum
    summary = plan.to_json_dict()["sharing_summary"]
    temp = next(s for s in plan.sharing if s.buffer == "temp_pool")
    assert plan.buffer("temp_pool").size == max(o.need for o in temp.owners)
    assert set(names) == {o.program for o in temp.owners}
    if plan.mode.value == "Dedicated_Sram":
        assert len(plan.by_role(Role.FAST_SCRATCH)) == 1
    print(
        f"{board}: {len(names)} programs, RAM {summary['ram_shared_total']} B shared vs "
        f"{summary['ram_sum_alone']} B as one image per program; temp_pool "
        f"{plan.buffer('temp_pool').size} B for needs {[o.need for o in temp.owners]}"
    )
    assert summary["ram_shared_total"] < summary["ram_sum_alone"]


def _models(project: Path, names: list[str]) -> list:  # type: ignore[type-arg]
    from ethosu_kit.pte import read_pte
    from ethosu_kit.pte.programs import Program

    return [Program(n, read_pte(project / "generated" / f"{n}.pte")) for n in names]


def test_one_program_by_name(
    request: pytest.FixtureRequest, built: dict[str, tuple[Path, Path]], root: Path
) -> None:
    _, elf = image_for("cs300", request, built, root)
    result = run(elf, "--kit-program=vww")
    assert result.exit_code == 0, result.output
    assert "SELFTEST PASS (2 of 2 delegates passed)" in result.output
    assert "kws." not in result.output and "tio." not in result.output
    unknown = run(elf, "--kit-program=nope")
    assert unknown.exit_code == 10, unknown.output
    assert "no program named nope in this image (it has kws vww tio)" in unknown.output
    # run refuses an unknown name before the emulator starts
    refused = run_kit("run", elf, "--program", "nope")
    assert_refused(refused, "no program named 'nope'")
    assert "SELFTEST" not in refused.stdout


def test_two_method_program(tmp_path: Path) -> None:
    """Each method of a program exported with encode and decode is planned and its
    delegates pass; each is simulated by name."""
    from ethosu_kit.aot.lowering import Target

    pte = tmp_path / "codec.pte"
    shutil.copyfile(two_method_pte(Target(**U55_SHARED)), pte)
    project = tmp_path / "fw"
    elf = selftest_image(project, ["--board", "corstone-300"], [str(pte)])
    plan = MemoryPlan.from_json(project / "memory_plan.json")
    assert plan.programs[0].name == "codec"
    assert set(plan.programs[0].methods) == {"encode", "decode"}
    result = run(elf)
    assert result.exit_code == 0, result.output
    assert "SELFTEST PASS (2 of 2 delegates passed)" in result.output
    for method in ("encode", "decode"):
        assert f"PASS (codec.{method} delegate 0" in result.output
        sim = run_kit("simulate", pte, "--method", method)
        assert sim.returncode == 0, sim.stderr
        assert f"({method})" in sim.stdout and sim.stdout.count("delegate ") == 1
    assert_refused(run_kit("simulate", pte, "--method", "nope"), "no method 'nope'")


def test_errors_are_one_line(tmp_path: Path) -> None:
    out = tmp_path / "fw"
    mismatched = run_kit(
        "gen", "--pte", f"a={PTE / 'u55_shared.pte'}", "--pte", f"b={PTE / 'u85_shared.pte'}",
        "-o", out,
    )  # fmt: skip
    assert_refused(mismatched, "u85_shared.pte", "u55_shared.pte", absent=[out])
    same = run_kit(
        "gen", "--pte", f"kws={PTE / 'u55_shared.pte'}", "--pte", f"kws={PTE / 'two_io.pte'}",
        "-o", out,
    )  # fmt: skip
    assert_refused(same, "two programs named 'kws'", absent=[out])
    manifest = tmp_path / "programs.toml"
    manifest.write_text(
        f'[[program]]\nname = "a"\npte = "{PTE / "u55_shared.pte"}"\n'
        f'[[program]]\nname = "a"\npte = "{PTE / "two_io.pte"}"\n'
    )
    assert_refused(run_kit("gen", "--programs", manifest, "-o", out), "two programs named 'a'")
    # a project of several programs: an unknown program for simulate
    programs = ["--pte", f"kws={PTE / 'u55_shared.pte'}", "--pte", f"tio={PTE / 'two_io.pte'}"]
    assert kit_main(["gen", *programs, "-o", str(out), "-q"]) == 0
    assert_refused(run_kit("simulate", out, "--program", "nope"), "no program named 'nope'")
    # `--concurrent "kws, tio"` (a space after the comma) names the programs
    spaced = run_kit("gen", *programs, "--concurrent", "kws, tio", "-o", tmp_path / "c", "-q")
    assert spaced.returncode == 0, spaced.stderr
    # the folder without --program: which to name, not "is a directory, not a .pte"
    folder = run_kit("simulate", out)
    assert_refused(folder, "needs --program NAME")
    assert "its programs are kws, tio" in folder.stderr
    sim = run_kit("simulate", out, "--program", "tio")
    assert sim.returncode == 0, sim.stderr
