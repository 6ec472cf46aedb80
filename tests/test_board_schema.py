"""The board schema is written once (codegen/ethosu_kit/board/schema.py): docs/boards.md's
key reference is generated from it, the loader refuses keys it does not list, and
new-board's template writes every key it marks drafted."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ethosu_kit.board import schema
from ethosu_kit.board.loader import load_board
from ethosu_kit.board.schema import SCHEMA, ValueType
from ethosu_kit.core.errors import BoardError

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "boards.md"
TEMPLATE = ROOT / "codegen" / "ethosu_kit" / "render" / "templates" / "board.toml.j2"
REGENERATE = (
    "regenerate the table between the schema markers of docs/boards.md with "
    "`python -c 'from ethosu_kit.board.schema import doc_table; print(doc_table(), end=\"\")'`"
)
# the template's section header (line start) per schema table it drafts
SECTIONS = {"": None, "cpu": "[cpu]", "npu": "[npu]", "npu.registers.<kind>.<mode>":
            "[npu.registers.", "console": "[console]", "boot": "[boot]", "qemu": "[qemu]",
            "port": "[port]", "region": "[[region]]"}  # fmt: skip


def test_doc_table_is_the_schema() -> None:
    text = DOC.read_text()
    found = re.search(r"<!-- schema:begin -->\n(.*?)<!-- schema:end -->", text, re.S)
    assert found, "docs/boards.md lost its schema markers"
    assert found.group(1) == schema.doc_table(), REGENERATE


def _sections() -> dict[str | None, str]:
    """The template's text per section header (None: before the first one)."""
    sections: dict[str | None, str] = {None: ""}
    current: str | None = None
    for line in TEMPLATE.read_text().splitlines():
        if line.startswith("["):
            current = next((h for h in SECTIONS.values() if h and line.startswith(h)), line)
            sections.setdefault(current, "")
        sections[current] = sections.get(current, "") + line + "\n"
    return sections


def test_template_writes_every_drafted_key() -> None:
    sections = _sections()
    template = TEMPLATE.read_text()
    missing = []
    for table, keys in SCHEMA.items():
        for k in keys:
            if not k.drafted:
                continue
            full = f"{table}.{k.name}" if table else k.name
            if k.type in (ValueType.TABLE, ValueType.TABLES):
                if not re.search(rf"(?m)^\[\[?{re.escape(full)}[\].]", template):
                    missing.append(full)
                continue
            body = sections.get(SECTIONS[table], "")
            if not re.search(rf"(?m)(^|\{{ |, ){re.escape(k.name)} = ", body):
                missing.append(full)
    assert not missing, f"schema keys board.toml.j2 does not write: {missing}"


def test_template_writes_no_key_the_schema_lacks() -> None:
    unknown = []
    for header, body in _sections().items():
        table = next((t for t, h in SECTIONS.items() if h == header), None)
        if table is None and header is not None:
            continue  # a table the template passes through or names by data
        for name in re.findall(r"(?m)^([a-z_]+) = ", body):
            if name not in schema.keys(table):
                unknown.append(f"{header}: {name}")
    assert not unknown, unknown


@pytest.mark.parametrize("table", [t for t in SCHEMA if "<" not in t])
def test_loader_refuses_a_key_the_schema_lacks(tmp_path: Path, table: str) -> None:
    board = tmp_path / "board.toml"
    text = (ROOT / "boards" / "corstone-320" / "board.toml").read_text()
    if table == "":
        text = "unheard_of = 1\n" + text
    elif table == "cpu.flags":
        text += "\n[cpu.flags]\nunheard_of = 1\n"
    else:
        header = "[[region]]" if table == "region" else f"[{table}]"
        text, found = re.subn(rf"(?m)^{re.escape(header)}.*\n", lambda m: m[0] + "unheard_of = 1\n",
                              text, count=1)  # fmt: skip
        assert found, header
    board.write_text(text)
    with pytest.raises(BoardError) as err:
        load_board(board)
    assert "unheard_of: unknown key" in str(err.value)
    assert err.value.hint == f"keys allowed here: {', '.join(schema.keys(table))}"
