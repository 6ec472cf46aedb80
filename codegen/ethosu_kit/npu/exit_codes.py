"""The firmware's exit codes: one table for C (generated kit_exit_codes.h) and Python.

Every kit app (bringup, selftest, executor_runner) and the SDK leave through these
codes; `ethosu-kit run` returns the firmware's code and names it with `describe()`.
Codes 0..15 are the apps', 16 and up the SDK's own failures.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

# The last line every kit app prints, through kit_app_result (sdk/src/app.c prints it,
# the one C place): the UART protocol `ethosu-kit run` and the measurements read.
EXIT_LINE: Final = re.compile(r"^kit: exit (\d+)\s*$", re.MULTILINE)


def exit_lines(output: str) -> list[str]:
    """The codes of every `kit: exit <code>` line in a UART transcript, in order."""
    return EXIT_LINE.findall(output)


@dataclass(frozen=True)
class ExitCode:
    name: str  # C macro KIT_EXIT_<name>
    value: int
    meaning: str


EXIT_CODES: Final = (
    ExitCode("OK", 0, "the app passed"),
    ExitCode("FAIL", 1, "the app's own check failed (bringup: a buffer; selftest: an output)"),
    ExitCode("PROGRAM_LOAD", 2, "the program did not load (not a .pte, or another runtime)"),
    ExitCode("METHOD_LOAD", 3, "the method did not load (a pool too small, a missing kernel)"),
    ExitCode("INPUTS", 4, "the inputs could not be set"),
    ExitCode("EXECUTE", 5, "execute failed (NPU, delegate or a kernel)"),
    ExitCode("OUTPUTS", 6, "the outputs could not be read"),
    ExitCode("PLAN_MISMATCH", 7, "the program needs more than the memory plan gave"),
    ExitCode("ABORT", 8, "the ExecuTorch runtime aborted (its platform layer's abort)"),
    ExitCode("NPU_ERROR", 9, "the NPU driver refused a command stream or the NPU failed"),
    ExitCode("SETUP", 10, "the app cannot run here (no NPU driver, or the plan cannot hold it)"),
    ExitCode("FAULT", 16, "a CPU fault or an unhandled interrupt"),
    ExitCode("INIT", 17, "platform init failed (board, console, timer or NPU)"),
)
BY_VALUE: Final = {c.value: c for c in EXIT_CODES}


def describe(code: int) -> str:
    """`7 (PLAN_MISMATCH: the program needs more than ...)`, or just the number."""
    c = BY_VALUE.get(code)
    return f"{code} ({c.name}: {c.meaning})" if c else str(code)
