"""The firmware's exit codes: one table for C (generated kit_exit_codes.h) and Python.

Every kit app (bringup, selftest, executor_runner) and the SDK leave through these
codes; `ethosu-kit run` returns the firmware's code and names it with `describe()`.
Codes 0..15 are the apps', 16 and up the SDK's own failures. `run`'s own failures
(RUN_TOOL_EXIT_CODES) are in 64..78, apart from every firmware code (at most 63).
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
    ExitCode(
        "DATA_MISMATCH",
        11,
        "the external data (.ptd) in the image lacks a key the program reads, or holds other "
        "bytes under it: not its data",
    ),
    ExitCode("FAULT", 16, "a CPU fault or an unhandled interrupt"),
    ExitCode("INIT", 17, "platform init failed (board, console, timer or NPU)"),
)
BY_VALUE: Final = {c.value: c for c in EXIT_CODES}


def describe(code: int) -> str:
    """`7 (PLAN_MISMATCH: the program needs more than ...)`, or just the number."""
    c = BY_VALUE.get(code)
    return f"{code} ({c.name}: {c.meaning})" if c else str(code)


# `ethosu-kit run`'s own failures, in a range of their own (64..78, as sysexits.h's) so
# that `run`'s exit status names one thing: below 64 the firmware's code (the table
# above; an app of your own should keep its codes below 64 as well), 64..78 the tool's,
# 128 + N a signal to ethosu-kit. The other commands keep the CLI's codes (a KitError 2,
# a FitError 3, an ElfCheckError 4, a usage error 2).
RUN_TOOL_EXIT_CODES: Final = (
    ExitCode("USAGE", 64, "the command line is wrong (an unknown option, a bad --timeout)"),
    ExitCode(
        "REFUSED",
        65,
        "run refused before the emulator started or could not start it: not a kit image, "
        "no plan for it, no emulator for its board, --inputs that do not fit the program",
    ),
    ExitCode("INTERNAL", 70, "a bug of the kit (internal error; --debug shows a traceback)"),
    ExitCode("IO", 74, "the file system refused a read or a write (no permission, disk full)"),
    ExitCode("TIMEOUT", 75, "the time limit (--timeout) passed; the emulator was stopped"),
    ExitCode(
        "NO_EXIT",
        76,
        "the emulator ended without the firmware's `kit: exit <code>` line: its code is unknown",
    ),
    ExitCode("FLOOD", 77, "the firmware printed more UART text than the kit keeps; stopped"),
    ExitCode(
        "OUTPUTS",
        78,
        "the firmware passed but its output files (-o, --print-outputs) are missing or wrong",
    ),
)
RUN_TOOL: Final = {c.name: c.value for c in RUN_TOOL_EXIT_CODES}
FIRMWARE_MAX: Final = 63  # the firmware's codes, the kit's and an app's own, stay at or below

# The two tables must not meet: run's status would name two things again.
if not max(BY_VALUE) <= FIRMWARE_MAX < min(RUN_TOOL.values()):
    raise RuntimeError("exit code ranges overlap")


def table_markdown(codes: tuple[ExitCode, ...], macro: bool) -> str:
    """A table of `codes` as docs/running.md has it (the docs are checked against it)."""
    head = (
        "| code | C macro | meaning |\n|---|---|---|\n"
        if macro
        else "| code | name | meaning |\n|---|---|---|\n"
    )
    rows = (
        f"| {c.value} | `KIT_EXIT_{c.name}` | {c.meaning} |"
        if macro
        else f"| {c.value} | {c.name} | {c.meaning} |"
        for c in codes
    )
    return head + "\n".join(rows) + "\n"
