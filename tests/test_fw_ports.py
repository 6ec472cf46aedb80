"""Porting to boards the kit does not ship: the example board folders (docs/examples/boards)
of two QEMU machines with other cores, the HAL hooks a board provides, and bring-up
built and run for each Cortex-M configuration the kit derives flags for.

Real .pte, real generator, real cross compiler, real QEMU 7.2 runs.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ethosu_kit.core.errors import KitError
from ethosu_kit.firmware.build import build_project
from ethosu_kit.firmware.elf_check import check_elf
from fw_helpers import REPO, built, elf_symbols, need_cross_gcc, need_qemu, qemu_run
from projects import make_project

pytestmark = pytest.mark.firmware

EXAMPLES = REPO / "docs" / "examples" / "boards"
AN500 = EXAMPLES / "mps2-an500"  # Cortex-M7, FPU dp, caches; console: board.c
AN521 = EXAMPLES / "mps2-an521"  # Cortex-M33, TrustZone, no FPU/DSP; console: semihosting
CS300 = REPO / "boards" / "corstone-300"


@pytest.fixture(scope="session")
def fw_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("ports")


def _bringup_passes(elf: Path, board: str) -> str:
    run = qemu_run(elf)
    assert run.exit_code == 0, run.output
    assert f"bringup: board {board}," in run.output, run.output
    assert "0 failed" in run.output and "BRINGUP PASS" in run.output, run.output
    cycles = re.search(r"bringup: \d+ buffers checked, 0 failed, (\d+) cycles", run.output)
    assert cycles, run.output
    # SysTick read before its first reload once made this 2^32 - a few million (QEMU may
    # reload late on a loaded host: 0 is possible, garbage is not)
    assert int(cycles.group(1)) < 1 << 28, run.output
    return run.output


@pytest.mark.parametrize(
    ("folder", "unexpected"),
    [
        # the board's own console (board.c): the kit's UART driver is not linked
        (AN500, {"kit_uart_cmsdk_putc", "kit_semihost_writec"}),
        # semihosting console: no UART driver at all
        (AN521, {"kit_uart_cmsdk_putc", "kit_uart_pl011_putc"}),
    ],
    ids=["mps2-an500-m7-own-console", "mps2-an521-m33-semihosting"],
)
def test_example_board_gen_build_check_run(
    pte_u55_shared: Path, fw_root: Path, folder: Path, unexpected: set[str]
) -> None:
    b = built(pte_u55_shared, str(folder), "Shared_Sram", fw_root)
    result = check_elf(b.elf, b.plan)
    assert result.ok, [v.message for v in result.violations]
    symbols = elf_symbols(b.elf)
    assert "kit_hal_console_putc" in symbols
    assert not symbols & unexpected, symbols & unexpected
    _bringup_passes(b.elf, folder.name)
    # the command a user types: its exit code is the firmware's
    run = subprocess.run(
        [sys.executable, "-m", "ethosu_kit", "run", str(b.elf)],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    assert "BRINGUP PASS" in run.stdout


def test_an_elf_copied_away_from_its_board_folder_project_runs(
    pte_u55_shared: Path, fw_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An ELF of a board-folder board copied out of its project: `run` finds the board
    through the plan copy beside it (`<elf>.memory_plan.json`) or `--plan`, and without
    either says so and how, rather than guessing a machine."""
    from ethosu_kit.cli.app import main

    b = built(pte_u55_shared, str(AN521), "Shared_Sram", fw_root)
    need_qemu()
    elf = tmp_path / "away" / "fw.elf"
    elf.parent.mkdir()
    shutil.copy(b.elf, elf)
    assert main(["run", str(elf)]) == 65  # run refused it (its own codes: 64..78)
    err = capsys.readouterr().err
    assert "'mps2-an521', which is not a built-in board" in err, err
    assert "fw.memory_plan.json" in err and "--plan" in err, err
    assert main(["check-elf", str(elf)]) == 2
    assert "--plan" in capsys.readouterr().err
    # --plan: the project's plan, wherever the ELF is
    assert main(["run", str(elf), "--plan", str(b.plan)]) == 0
    assert "BRINGUP PASS" in capsys.readouterr().out
    # a plan of another board is refused, not used
    other = built(pte_u55_shared, "corstone-300", "Shared_Sram", fw_root)
    assert main(["run", str(elf), "--plan", str(other.plan)]) == 65
    assert "is for board 'corstone-300': not this image's plan" in capsys.readouterr().err
    # the plan copy the build leaves beside the ELF, copied along with it
    shutil.copy(
        b.elf.with_name(f"{b.elf.stem}.memory_plan.json"), elf.with_name("fw.memory_plan.json")
    )
    assert main(["run", str(elf)]) == 0
    assert "BRINGUP PASS" in capsys.readouterr().out
    assert main(["check-elf", str(elf), "-q"]) == 0


def test_vector_table_at_the_boot_address(pte_u55_shared: Path, fw_root: Path) -> None:
    """[boot]: the table is where the core looks at reset, sized from [cpu].irqs."""
    from elftools.elf.elffile import ELFFile

    for folder, address, irqs in ((AN500, 0x0, 48), (AN521, 0x10000000, 96)):
        b = built(pte_u55_shared, str(folder), "Shared_Sram", fw_root)
        with b.elf.open("rb") as f:
            vectors = ELFFile(f).get_section_by_name(".vectors")
            assert vectors is not None
            assert vectors["sh_addr"] == address and vectors["sh_size"] == (16 + irqs) * 4


def _copy_board(src: Path, dst: Path, *edits: tuple[str, str]) -> Path:
    """A copy of a board folder with regex edits to its board.toml."""
    if dst.exists():
        shutil.rmtree(dst)
    shutil.copytree(src, dst)
    toml = dst / "board.toml"
    text = toml.read_text()
    for pattern, replacement in edits:
        text, n = re.subn(pattern, replacement, text, count=1, flags=re.M)
        assert n == 1, f"{pattern!r} not in {src}/board.toml"
    toml.write_text(text)
    return dst


def test_a_copied_region_the_machine_lacks_is_named_by_the_fault(
    pte_u55_shared: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The porting walk on QEMU's mps2-an505 (an IoT Kit: 32 KiB of internal SRAM where the
    AN521 has 128 KiB): `new-board --from` the AN521 example marks the copied region, the
    image built with it takes a bus fault in that region's missing part, and the fault
    report names the region and its board key; with the size `info mtree` gives, it runs."""
    from ethosu_kit.cli.app import main

    need_cross_gcc()
    need_qemu()
    board = tmp_path / "an505"
    assert main(["new-board", "mps2-an505", "--from", str(AN521), "--qemu-machine", "mps2-an505",
                 "-o", str(board)]) == 0  # fmt: skip
    assert "region[1] 'ISRAM'.base" in capsys.readouterr().out
    project = make_project(pte_u55_shared, tmp_path / "fw", board=board, mode="Shared_Sram").path
    run = qemu_run(build_project(project))
    assert run.exit_code == 16, run.output
    assert "E: the bus fault is in region ISRAM (0x30000000, 131072 bytes)" in run.output
    assert "board.toml [[region]] ISRAM" in run.output and "kit: exit 16" in run.output
    size = (r"^(base = 0x30000000.*\n)size = 0x20000$", r"\1size = 0x8000")
    fixed = _copy_board(board, tmp_path / "an505-fixed", size)
    project = make_project(pte_u55_shared, tmp_path / "fw2", board=fixed, mode="Shared_Sram").path
    _bringup_passes(build_project(project), "mps2-an505")


def test_needed_hook_missing_fails_at_configure(pte_u55_shared: Path, tmp_path: Path) -> None:
    """console = "custom" without the board naming the hook: CMake stops, naming it."""
    need_cross_gcc()
    board = _copy_board(AN500, tmp_path / "board", (r'^hooks = \["console"\]', "hooks = []"))
    project = make_project(pte_u55_shared, tmp_path / "fw", board=board, mode="Shared_Sram").path
    with pytest.raises(KitError) as info:
        build_project(project)
    message = " ".join(info.value.message.split())  # CMake wraps its messages
    assert "configure failed" in message
    assert "needs the HAL hook 'console'" in message, message
    assert '[console] kind = "custom"' in message, message
    assert "kit_hal_console_init, kit_hal_console_putc" in message, message


def test_hook_implemented_but_not_named_is_a_link_error(
    pte_u55_shared: Path, tmp_path: Path
) -> None:
    """No weak symbols: a board's console that [port].hooks does not name collides with the
    kit's default at link time instead of one of them being picked silently."""
    need_cross_gcc()
    board = _copy_board(
        AN500,
        tmp_path / "board",
        (r'^kind = "custom".*', 'kind = "cmsdk-apb"\nbase = 0x40004000'),
        (r'^hooks = \["console"\]', "hooks = []"),
    )
    project = make_project(pte_u55_shared, tmp_path / "fw", board=board, mode="Shared_Sram").path
    with pytest.raises(KitError) as info:
        build_project(project)
    assert "multiple definition of `kit_hal_console_init'" in info.value.message


def test_uart_console_chosen_by_data_on_another_machine(
    pte_u55_shared: Path, tmp_path: Path
) -> None:
    """The same AN521 folder with its CMSDK UART0 as console: the kit's driver prints."""
    need_cross_gcc()
    board = _copy_board(
        AN521,
        tmp_path / "an521-uart",
        (r'^kind = "semihosting"', 'kind = "cmsdk-apb"\nbase = 0x50200000\nclock_hz = 20_000_000'),
    )
    project = make_project(pte_u55_shared, tmp_path / "fw", board=board, mode="Shared_Sram").path
    elf = build_project(project)
    assert "kit_uart_cmsdk_putc" in elf_symbols(elf)
    assert "kit_semihost_writec" not in elf_symbols(elf)
    _bringup_passes(elf, "mps2-an521")


@pytest.mark.parametrize("kind", ["none", "pl011"])
def test_silent_consoles_never_hang(pte_u55_shared: Path, tmp_path: Path, kind: str) -> None:
    """console "none" writes nowhere (never address 0); a PL011 where QEMU has a CMSDK UART
    initialises without hanging. Both images still exit 0 through semihosting."""
    need_cross_gcc()
    console = 'kind = "none"' if kind == "none" else 'kind = "pl011"\nbase = 0x50200000'
    board = _copy_board(AN521, tmp_path / kind, (r'^kind = "semihosting"', console))
    project = make_project(pte_u55_shared, tmp_path / "fw", board=board, mode="Shared_Sram").path
    elf = build_project(project)
    symbols = elf_symbols(elf)
    assert ("kit_uart_pl011_putc" in symbols) == (kind == "pl011")
    assert "kit_semihost_writec" not in symbols and "kit_uart_cmsdk_putc" not in symbols
    run = qemu_run(elf)
    assert run.exit_code == 0, run.output
    assert "BRINGUP PASS" not in run.output, run.output


FAULT_APP = """\
#include "kit/app.h"
#include "kit/log.h"
#include "kit/platform.h"

int ethosu_kit_app_main(void)
{
    if (kit_platform_init() != 0) {
        return 17;
    }
    kit_printf("faulting now\\n");
    __asm volatile("udf #0"); /* permanently undefined: a UsageFault on every core */
    return 0;
}
"""


def _app_elf(pte: Path, board: Path, tmp_path: Path, name: str, source: str) -> Path:
    """An app of one's own (a folder with main.c) built on `board` without an NPU."""
    from ethosu_kit.cli.app import main as kit_main

    need_cross_gcc()
    app = tmp_path / name
    app.mkdir()
    (app / "main.c").write_text(source)
    project = make_project(pte, tmp_path / "fw", board=board, mode="Shared_Sram").path
    assert kit_main(["build", str(project), "--app", str(app), "--npu", "none"]) == 0
    return project / "build" / "gcc" / f"{name}.elf"


@pytest.mark.parametrize("folder", [AN500, AN521], ids=["m7-own-console", "m33-semihosting"])
def test_fault_reaches_the_console_and_exit_code(
    pte_u55_shared: Path, tmp_path: Path, folder: Path
) -> None:
    """The HAL's fault default: the registers on the board's console, then exit 16."""
    run = qemu_run(_app_elf(pte_u55_shared, folder, tmp_path, "fault_app", FAULT_APP))
    assert run.exit_code == 16, run.output
    assert "faulting now" in run.output, run.output
    assert re.search(r"E: fault: exception 6 pc=0x[0-9a-f]{8} .*CFSR=0x00010000", run.output), (
        run.output
    )


SILENT_APP = """\
#include "kit/app.h"

/* No kit_platform_init(): the console never comes up, so not even the exit line is seen. */
int ethosu_kit_app_main(void) { return kit_app_result(0); }
"""


def test_an_app_that_never_prints_its_exit_line_is_not_a_pass(
    pte_u55_shared: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """QEMU's status 0 alone once made `run` report success for a custom app that never
    brought its console up: without the `kit: exit <code>` line it is exit 76 (run's
    no-exit-line code), as on an FVP, and the hint names the contract (docs/apps.md)."""
    from ethosu_kit.cli.app import main as kit_main

    need_qemu()
    elf = _app_elf(pte_u55_shared, AN500, tmp_path, "silent_app", SILENT_APP)
    assert qemu_run(elf).exit_code == 0, "QEMU's own status says 0"
    capsys.readouterr()
    assert kit_main(["run", str(elf)]) == 76
    err = capsys.readouterr().err
    assert "without the firmware's last line `kit: exit <code>`" in err, err
    assert "kit_platform_init()" in err and "docs/apps.md" in err, err


OWN_TIMER = """
static uint64_t fake_cycles;

void kit_hal_timer_init(void) { fake_cycles = 1000000u; }

uint64_t kit_hal_cycles(void) { return fake_cycles += 1000u; } /* 1000 per read */
"""
FAILING_BOARD_INIT = """
int kit_hal_board_init(void) { return -5; } /* e.g. a PLL that never locks */
"""


@pytest.mark.parametrize(
    ("extra_c", "toml_edits", "hooks", "exit_code", "expect"),
    [
        # timer = "custom": the board's counter is the one kit_cycles() reads
        (OWN_TIMER, [(r'^timer = "systick".*', 'timer = "custom"')], '"console", "timer"', 0,
         "0 failed, 1000 cycles"),
        # board_init runs first, fails; reported once the console is up; exit INIT (17)
        (FAILING_BOARD_INIT, [], '"console", "board_init"', 17,
         "E: board init failed (mps2-an500): -5"),
    ],
    ids=["timer-custom", "board-init-fails"],
)  # fmt: skip
def test_board_hooks_replace_the_defaults(  # noqa: PLR0917 - pytest parameters
    pte_u55_shared: Path,
    tmp_path: Path,
    extra_c: str,
    toml_edits: list[tuple[str, str]],
    hooks: str,
    exit_code: int,
    expect: str,
) -> None:
    need_cross_gcc()
    board = _copy_board(
        AN500, tmp_path / "board", (r'^hooks = \["console"\]', f"hooks = [{hooks}]"), *toml_edits
    )
    with (board / "board.c").open("a") as f:
        f.write(extra_c)
    project = make_project(pte_u55_shared, tmp_path / "fw", board=board, mode="Shared_Sram").path
    elf = build_project(project)
    assert "kit_systick_cycles" not in elf_symbols(elf) or "timer" not in hooks
    run = qemu_run(elf)
    assert run.exit_code == exit_code, run.output
    assert expect in run.output, run.output


# Cortex-M configurations: (id, board folder to start from, [cpu] lines, QEMU machine/cpu
# that runs it or None, also build with clang). The flags are derived (ethosu_kit.board.cores).
AN386_REGIONS = """
[[region]]
name = "SSRAM1"
kind = "bram"
base = 0x00000000
size = "4 MiB"

[[region]]
name = "SRAM"
kind = "sram"
base = 0x20000000
size = "4 MiB"

[[region]]
name = "PSRAM"
kind = "dram"
base = 0x21000000
size = "16 MiB"
"""


def _cpu(core: str, **keys: object) -> str:
    """[cpu] lines: core and the keys given (TOML values)."""
    lines = [f'core = "{core}"'] + [
        f"{k} = {str(v).lower() if isinstance(v, bool) else repr(v).replace(chr(39), chr(34))}"
        for k, v in keys.items()
    ]
    return "\n".join(lines)


AN386 = ("mps2-an386", "cortex-m4")  # QEMU's MPS2 with a Cortex-M4 (FPU)
M7 = ("mps2-an500", "cortex-m7")
M55 = ("mps3-an547", "cortex-m55")
CPU_CONFIGS = [
    ("m4-fpu", AN500, _cpu("cortex-m4", fpu="sp", irqs=32), AN386, True),
    ("m4-nofpu", AN500, _cpu("cortex-m4", fpu="none", irqs=32), AN386, False),
    # single-precision FPU, no caches: runs on the AN500's (double-precision) M7
    ("m7-sp-nocache", AN500, _cpu("cortex-m7", fpu="sp", irqs=48), M7, True),
    # QEMU's MPS2 machines boot no M33 with FPU and DSP: built, not run
    ("m33-fpu", AN521, _cpu("cortex-m33", fpu="sp", trustzone=True, irqs=96), None, True),
    ("m55-mveint", CS300, _cpu("cortex-m55", fpu="dp", mve="int", dcache=True, irqs=96), M55, True),
    ("m55-nofpu-nomve", CS300, _cpu("cortex-m55", fpu="none", irqs=96), M55, False),
    # GCC 12.2 has no -mcpu=cortex-m85: -march=armv8.1-m.main+dsp+fp.dp
    ("m85-nomve", CS300, _cpu("cortex-m85", fpu="dp", icache=True, irqs=96), None, True),
]  # fmt: skip


def _cpu_board(tmp: Path, cid: str, src: Path, cpu: str, qemu: tuple[str, str] | None) -> Path:
    edits = [(r"^\[cpu\][^\n]*\n(?:(?!\[)[^\n]*\n)*", f'[cpu]\n{cpu}\ntimer = "systick"\n\n')]
    if qemu is None:
        edits.append((r"^\[qemu\][^\n]*\n(?:(?!\[)[^\n]*\n)*", ""))
    else:
        edits.append(
            (
                r"^\[qemu\][^\n]*\n(?:(?!\[)[^\n]*\n)*",
                f'[qemu]\nmachine = "{qemu[0]}"\ncpu = "{qemu[1]}"\n\n',
            )
        )
    if src == AN500:
        edits.append((r"^irq = 47", "irq = 31"))
        if qemu and qemu[0] == "mps2-an386":
            edits.append((r"^\[\[region\]\](?s:.*)", AN386_REGIONS.lstrip()))
    board = _copy_board(src, tmp / cid, *edits)
    text = (board / "board.toml").read_text()
    (board / "board.toml").write_text(re.sub(r'(?m)^name = ".*"', f'name = "{cid}"', text, count=1))
    return board


@pytest.mark.parametrize(
    ("cid", "src", "cpu", "qemu", "clang"), CPU_CONFIGS, ids=[c[0] for c in CPU_CONFIGS]
)
def test_bringup_per_cortex_m_configuration(  # noqa: PLR0917 - pytest parameters
    pte_u55_shared: Path,
    tmp_path: Path,
    cid: str,
    src: Path,
    cpu: str,
    qemu: tuple[str, str] | None,
    clang: bool,
) -> None:
    """SDK, drivers and bring-up build warning-free (-Werror) for the core, and run where
    QEMU has it."""
    need_cross_gcc()
    board = _cpu_board(tmp_path, cid, src, cpu, qemu)
    project = make_project(pte_u55_shared, tmp_path / "fw", board=board, mode="Shared_Sram").path
    elf = build_project(project)
    assert check_elf(elf, project / "memory_plan.json").ok
    if clang and (shutil.which("clang-19") or shutil.which("clang")):
        build_project(project, toolchain="clang")
    if qemu is not None:
        _bringup_passes(elf, cid)


SELFTEST_PORTS = [
    ("mps2-an500", AN500, None),
    ("mps2-an521", AN521, None),
    # the virtual NPU's C without FPU or DSP (no SMLAD), and on an M55 without MVE/FPU
    ("m4-nofpu", AN500, CPU_CONFIGS[1]),
    ("m55-nofpu-nomve", CS300, CPU_CONFIGS[5]),
]


@pytest.mark.parametrize(
    ("name", "src", "config"), SELFTEST_PORTS, ids=[p[0] for p in SELFTEST_PORTS]
)
def test_npu_selftest_on_ports(
    pte_u55_shared: Path,
    tmp_path: Path,
    name: str,
    src: Path,
    config: tuple[str, Path, str, tuple[str, str] | None, bool] | None,
) -> None:
    """The NPU self-test (apps/selftest) with the virtual NPU standing in for the made-up
    Ethos-U55: the delegate's command stream run by the firmware on this core, every output
    byte equal to the host's."""
    from ethosu_kit.cli.app import main as kit_main

    need_cross_gcc()
    board = src if config is None else _cpu_board(tmp_path, *config[:3], config[3])
    project = make_project(
        pte_u55_shared, tmp_path / "fw", board=board, mode="Shared_Sram", app="selftest"
    ).path
    assert kit_main(["build", str(project), "--app", "selftest", "--npu", "virtual"]) == 0
    run = qemu_run(project / "build" / "gcc" / "selftest.elf", timeout=60)
    assert run.exit_code == 0, run.output
    assert "SELFTEST PASS (1 of 1 delegates passed)" in run.output, run.output


def test_too_small_stack_on_a_core_without_a_stack_limit_is_an_overflow(
    pte_u55_shared: Path, tmp_path: Path
) -> None:
    """Cortex-M7 (Armv7-M: no MSPLIM): a stack of 1024 B for a self-test that needs ~2.4 KiB
    once ran over into .bss and still printed SELFTEST PASS, exit 0. Its MPU now guards
    the stack's lowest 32 B: the overflow is a fault, named, exit 16."""
    from ethosu_kit.cli.app import main as kit_main

    need_cross_gcc()
    project = tmp_path / "fw"
    make_project(pte_u55_shared, project, board=AN500, app="selftest", npu="virtual", stack=1024)
    assert kit_main(["build", str(project), "--app", "selftest", "--npu", "virtual"]) == 0
    elf = project / "build" / "gcc" / "selftest.elf"
    from elftools.elf.elffile import ELFFile
    from elftools.elf.sections import SymbolTableSection

    with elf.open("rb") as f:
        symtab = ELFFile(f).get_section_by_name(".symtab")
        assert isinstance(symtab, SymbolTableSection)
        (stack,) = symtab.get_symbol_by_name("kit_stack") or []
        assert stack["st_value"] % 32 == 0, "the guard is an MPU region: 32-aligned"
    run = qemu_run(elf, timeout=60)
    assert run.exit_code == 16, run.output
    assert (
        "E: stack overflow: the stack of 1024 bytes is too small (the MPU guard at its bottom "
        "was hit;" in run.output
    ), run.output
    assert "SELFTEST PASS" not in run.output, run.output
    assert run.output.rstrip().endswith("kit: exit 16"), run.output


STEPPED_OVER_APP = """\
#include <stdint.h>

#include "kit/app.h"
#include "kit/platform.h"
#include "kit/usage.h"
#include "kit_memory_config.h"

int ethosu_kit_app_main(void)
{
    kit_stack_paint();
    if (kit_platform_init() != 0) {
        return kit_app_result(KIT_EXIT_INIT);
    }
    /* What a frame larger than the guard leaves when it steps over it, and what a core
     * without an MPU leaves of any overflow: the stack's lowest word written, no fault. */
    *(volatile uint32_t *)(kit_stack + kit_stack_guard) = 0u;
    kit_usage_report_stack_heap();
    return kit_app_result(KIT_EXIT_OK);
}
"""


def test_a_stack_used_to_its_bottom_without_a_fault_is_an_overflow(
    pte_u55_shared: Path, tmp_path: Path
) -> None:
    """The check every core gets (the only one without MSPLIM or an MPU): the painted
    stack's mark at the bottom is an overflow, after the usage line; exit 16."""
    run = qemu_run(_app_elf(pte_u55_shared, AN500, tmp_path, "stepped", STEPPED_OVER_APP))
    assert run.exit_code == 16, run.output
    used = re.search(r"^usage: stack used (\d+) of (\d+) bytes$", run.output, re.M)
    assert used and int(used.group(2)) - int(used.group(1)) == 32, "all but the guard"
    assert "was used to its bottom (painted stack)" in run.output, run.output
    assert run.output.rstrip().endswith("kit: exit 16"), run.output


@pytest.mark.slow
def test_executor_runner_on_the_m33_example(pte_u55_shared: Path, tmp_path: Path) -> None:
    """The executor_runner (the user's ExecuTorch, soft-float: this M33 has no FPU) with the
    virtual NPU on the AN521 example board, run in its QEMU machine. Skips without
    EXECUTORCH_ROOT (docs/executorch.md)."""
    from runner_build import build_with_cli, require_externals

    require_externals("EXECUTORCH_ROOT")
    project = make_project(pte_u55_shared, tmp_path / "fw", board=AN521).path
    elf = build_with_cli(project, "virtual")
    run = qemu_run(elf, timeout=120)
    assert run.exit_code == 0, run.output
    assert "kit: exit 0" in run.output, run.output


def test_build_failures_are_one_readable_line() -> None:
    """CMake's message (wrapped: joined), or the compiler's and linker's error lines: the
    one `error:` line carries them without newlines, which would print as escapes."""
    from ethosu_kit.firmware.build import gist

    configure = (
        'Preset CMake variables:\n\n  CMAKE_BUILD_TYPE="Release"\n\n'
        "-- Configuring incomplete, errors occurred!\n"
        "CMake Error at cmake/executorch.cmake:29 (message):\n"
        "  ethosu-porting-kit: the Ethos-U core driver 1.x (include/ethosu_driver.h)\n"
        '  not found (ETHOSU_DRIVER_ROOT="").\n\n  Then configure again.\n'
        "Call Stack (most recent call first):\n  cmake/executorch.cmake:69 (_missing)\n"
    )
    assert gist(configure) == (
        "CMake Error at cmake/executorch.cmake:29 (message): ethosu-porting-kit: the Ethos-U"
        ' core driver 1.x (include/ethosu_driver.h) not found (ETHOSU_DRIVER_ROOT=""). Then'
        " configure again."
    )
    link = (
        "[27/28] Building C object main.c.obj\nFAILED: fw.elf\n: && arm-none-eabi-gcc ...\n"
        "/usr/bin/ld: board.c.obj: in function `kit_hal_console_init':\n"
        "board.c:(.text+0x0): multiple definition of `kit_hal_console_init'; first here\n"
        "collect2: error: ld returned 1 exit status\nninja: build stopped: subcommand failed.\n"
    )
    assert gist(link) == (
        "board.c:(.text+0x0): multiple definition of `kit_hal_console_init'; first here"
    )
    compile_ = (
        "FAILED: b.c.obj\nb.c:3:5: error: 'x' undeclared\n    3 |  x;\nninja: build stopped\n"
    )
    assert gist(compile_) == "b.c:3:5: error: 'x' undeclared"
    assert gist("a\nb\nc\n", lines=2) == "b | c"
