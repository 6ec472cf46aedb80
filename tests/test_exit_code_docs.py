"""docs/running.md copies the two exit-code tables of ethosu_kit.npu.exit_codes: the
firmware's (EXIT_CODES) and `run`'s own (RUN_TOOL_EXIT_CODES). The copies must be the
tables, and the two ranges must not meet (run's status names one thing)."""

from __future__ import annotations

from pathlib import Path

from ethosu_kit.npu.exit_codes import (
    BY_VALUE,
    EXIT_CODES,
    FIRMWARE_MAX,
    RUN_TOOL,
    RUN_TOOL_EXIT_CODES,
    table_markdown,
)

DOC = Path(__file__).resolve().parents[1] / "docs" / "running.md"


def _between(text: str, marker: str) -> str:
    start = text.index(f"<!-- {marker} -->\n") + len(f"<!-- {marker} -->\n")
    return text[start : text.index(f"<!-- /{marker} -->")]


def test_running_md_has_the_tables() -> None:
    text = DOC.read_text()
    assert _between(text, "firmware-exit-codes") == table_markdown(EXIT_CODES, True)
    assert _between(text, "run-tool-exit-codes") == table_markdown(RUN_TOOL_EXIT_CODES, False)


def test_the_ranges_are_disjoint() -> None:
    assert max(BY_VALUE) <= FIRMWARE_MAX < min(RUN_TOOL.values())
    assert max(RUN_TOOL.values()) < 128  # signals are 128 + N
    assert len(set(RUN_TOOL.values())) == len(RUN_TOOL_EXIT_CODES)
