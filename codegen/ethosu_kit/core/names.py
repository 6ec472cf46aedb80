"""The generated project's file names, written once: render writes them, and the
selftest, inputs, build and run stages find them again by the same names (through
`firmware.project.ProjectDir`, the typed view of a project folder).
"""

from __future__ import annotations

# The project folder's top level.
PLAN_JSON = "memory_plan.json"
REPORT_TXT = "memory_report.txt"
REPORT_JSON = "memory_report.json"
MODEL_INFO_JSON = "model_info.json"
MEASURED_USAGE = "measured_usage.json"  # gen --stack/--heap auto's measurement
GENERATED = "generated"  # every generated source, header and linker file
BUILD = "build"  # build/<toolchain>/<app>.elf, CMake's binary folders

PTE_NAME = "model.pte"
PROGRAMS_HEADER = "kit_programs.h"  # an image of several programs: KIT_PROGRAMS(X)


def program_pte(name: str) -> str:
    """The copy of a program's .pte in an image of several: generated/<name>.pte."""
    return f"{name}.pte"


# The NPU self-test's files, rendered when the plan places its vectors (app selftest).
SELFTEST_VECTORS = "kit_selftest_vectors.bin"
SELFTEST_HEADER = "kit_selftest.h"


def generated(name: str) -> str:
    """A generated file's path in the project, relative: `generated/<name>`."""
    return f"{GENERATED}/{name}"


def input_data_file(index: int) -> str:
    return f"kit_input_data_{index}.bin"
