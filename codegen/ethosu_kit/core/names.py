"""The generated project's file names, written once: render writes them, and the
selftest, inputs, build and run stages find them again by the same names.
"""

from __future__ import annotations

PTE_NAME = "model.pte"


# The NPU self-test's files, rendered when the plan places its vectors (app selftest).
SELFTEST_VECTORS = "kit_selftest_vectors.bin"


def input_data_file(index: int) -> str:
    return f"kit_input_data_{index}.bin"
