"""The Arm driver's stack path that `--stack auto` adds (usage.DRIVER_PATH_BYTES), and the
kit's NPU interrupt path inside the interrupt margin, checked against the real build.

The measuring run cannot see either (it runs the virtual NPU, which calls no driver and
takes no exception), so the plan adds documented figures. This test keeps them honest:
it configures the self-test for the Arm driver (the user's driver and CMSIS checkouts),
compiles every C file again with its own flags and GCC's `-fcallgraph-info=su`, and
takes the deepest chain from `ethosu_invoke_v3` (the driver, the kit's hooks it calls,
its error print down to the console's putc) and from the kit's NPU IRQ handler. A
library function with no frame data (strlen, libgcc's division) counts LIBRARY_LEAF;
a call through a pointer or a recursion on the way fails the test: then the figure is
not a bound any more and the documented one must be looked at again.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from callgraph import CallGraph, compile_with_callgraph
from ethosu_kit.firmware.measure import DRIVER_PATH_BYTES, STACK_INTERRUPT_BYTES
from fw_helpers import need_cross_gcc
from projects import make_project

pytestmark = [pytest.mark.firmware]

# A leaf of newlib or libgcc called on the way (no .ci: not compiled by the build):
# strlen's frame is 0-8 B, __aeabi_uldivmod's with __udivmoddi4 under 48 B.
LIBRARY_LEAF = 64
# The exception frame the margin holds besides the handler: 26 words with the FP state
# and 4 B of alignment (usage.py).
EXCEPTION_FRAME = 108


@pytest.mark.parametrize("fixture", ["pte_u55_shared", "pte_u85_shared"])
def test_driver_and_irq_paths_are_within_the_documented_figures(
    request: pytest.FixtureRequest, tmp_path: Path, fixture: str
) -> None:
    need_cross_gcc()
    missing = [n for n in ("ETHOSU_DRIVER_ROOT", "CMSIS_ROOT") if not os.environ.get(n)]
    if missing:
        pytest.skip(f"{', '.join(missing)} not set: the driver build needs the user's checkouts")
    version = subprocess.run(
        ["arm-none-eabi-gcc", "-dumpversion"], capture_output=True, text=True, check=False
    ).stdout
    if int(version.split(".")[0] or 0) < 10:
        pytest.skip(f"arm-none-eabi-gcc {version.strip()} writes no call graph (GCC >= 10 does)")
    pte: Path = request.getfixturevalue(fixture)
    project = tmp_path / "fw"
    board = "cs300" if "u55" in fixture else "cs320"
    make_project(pte, project, board=board, app="selftest")
    configure = subprocess.run(
        ["cmake", "--preset", "gcc", "-DETHOSU_KIT_APP=selftest", "-DETHOSU_KIT_NPU=driver",
         "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON"],
        cwd=project, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert configure.returncode == 0, configure.stdout + configure.stderr
    graph = CallGraph(
        compile_with_callgraph(project / "build/gcc/compile_commands.json", tmp_path / "ci")
    )

    driver = graph.deepest("ethosu_invoke_v3", LIBRARY_LEAF)
    # kit_irq_dispatch calls the registered handler through its table (no edge): the NPU
    # path is the dispatcher's own frame + the kit's NPU handler's chain
    npu_irq = graph.deepest(graph.find("npu_irq"), LIBRARY_LEAF)
    irq_path = graph.frames[graph.find("kit_irq_dispatch")] + npu_irq.bytes
    print(
        f"\n{board}: ethosu_invoke_v3 chain {driver.bytes} B (documented bound "
        f"{DRIVER_PATH_BYTES} B): {' -> '.join(driver.functions)}"
        f"\n{board}: NPU IRQ path {irq_path} B + {EXCEPTION_FRAME} B exception frame "
        f"(margin {STACK_INTERRUPT_BYTES} B): kit_irq_dispatch -> {' -> '.join(npu_irq.functions)}"
    )
    assert driver.bytes <= DRIVER_PATH_BYTES, driver
    assert irq_path + EXCEPTION_FRAME <= STACK_INTERRUPT_BYTES, npu_irq
