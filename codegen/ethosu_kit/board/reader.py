"""The one typed reader of board.toml's tables: each key as its schema entry says.

A `Table` is one TOML table being read; it knows its file and key path, so every
problem is one `BoardError` naming both, e.g. `my.toml: region[2] 'SRAM'.size: must
be > 0, got -4`. `Table.value(name)` reads a key of the table's schema (schema.py):
its type, its default when absent, its allowed values. The typed getters below are
the decoder of each value type, shared by the keys schema.py cannot describe alone
(names chosen by the board: `[npu.macs]` kinds, `[glue]`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeVar

from ethosu_kit.board import schema
from ethosu_kit.board.schema import Derived, ValueType
from ethosu_kit.core.errors import BoardError
from ethosu_kit.core.sizes import parse_size

T = TypeVar("T")
_NO_DEFAULT: Any = object()


def type_name(value: Any) -> str:
    return {bool: "a boolean", int: "an integer", str: "a string", list: "a list",
            dict: "a table", float: "a float"}.get(type(value), type(value).__name__)  # fmt: skip


@dataclass
class Table:
    """One TOML table being read: knows its file and key path for error messages."""

    data: dict[str, Any]
    path: str  # e.g. "npu" or "region[2] 'SRAM'"
    file: str
    schema: str | None = None  # its table in schema.SCHEMA, when it has one

    def fail(self, key: str | None, problem: str, hint: str | None = None) -> BoardError:
        where = f"{self.path}.{key}" if self.path and key else (key or self.path)
        return BoardError(f"{self.file}: {where}: {problem}", hint)

    # -- by the schema ----------------------------------------------------------------

    def only_schema(self) -> None:
        """Refuse a key the schema does not list for this table."""
        assert self.schema is not None
        self.only(*schema.keys(self.schema))

    def value(self, name: str, default: Any = _NO_DEFAULT) -> Any:
        """Key `name` as its schema entry says; `default` supplies a Derived default."""
        assert self.schema is not None
        k = schema.key(self.schema, name)
        if default is _NO_DEFAULT:
            assert not isinstance(k.default, Derived), f"{self.schema}.{name} needs its default"
            default = None if k.required else k.default
        if k.type is ValueType.NUMBER:
            if default is None and not k.required and name not in self.data:
                return None
            return self.number(name, default, positive=k.positive)
        if k.type is ValueType.STRING:
            if default is None and not k.required:
                return self.opt_str(name)
            text = self.str_(name, default)
            return one_of(self, name, text, k.choices) if k.choices else text
        if k.type is ValueType.BOOL:
            return self.bool_(name, default)
        if k.type is ValueType.STRINGS:
            return self.str_list(name, None if default is None else list(default))
        raise TypeError(f"{self.schema}.{name}: a {k.type.value} is read by its own code")

    # -- by type -----------------------------------------------------------------------

    def _get(self, key: str, kind: type[T], required: bool, default: T | None) -> T | None:
        if key not in self.data:
            if required:
                raise self.fail(key, "missing (required key)")
            return default
        value = self.data[key]
        if isinstance(value, kind) and not (kind is int and isinstance(value, bool)):
            return value
        raise self.fail(key, f"must be {type_name(kind())}, got {type_name(value)} {value!r}")

    def str_(self, key: str, default: str | None = None) -> str:
        value = self._get(key, str, default is None, default)
        assert value is not None
        return value

    def opt_str(self, key: str) -> str | None:
        return self._get(key, str, False, None)

    def bool_(self, key: str, default: bool | None = None) -> bool:
        value = self._get(key, bool, default is None, default)
        assert value is not None
        return value

    def number(self, key: str, default: int | None = None, *, positive: bool = False) -> int:
        """An integer, or a string like "0x8000" / "512 KiB"."""
        if key not in self.data:
            if default is None:
                raise self.fail(key, "missing (required key)")
            return default
        value = self.data[key]
        if isinstance(value, bool) or not isinstance(value, int | str):
            raise self.fail(
                key, f'must be an integer or a size string like "512 KiB", got {value!r}'
            )
        if isinstance(value, str):
            try:
                value = parse_size(value)
            except ValueError:
                raise self.fail(
                    key, f'cannot read {value!r} as a number (use 0x..., 1234, "512 KiB", "2 MiB")'
                ) from None
        if value < 0 or (positive and value == 0):
            raise self.fail(
                key, f"must be > 0, got {value}" if positive else f"must be >= 0, got {value}"
            )
        return value

    def opt_number(self, key: str) -> int | None:
        return self.number(key) if key in self.data else None

    def str_list(self, key: str, default: list[str] | None = None) -> list[str]:
        value = self._get(key, list, default is None, default)
        assert value is not None
        for i, item in enumerate(value):
            if not isinstance(item, str):
                raise self.fail(f"{key}[{i}]", f"must be a string, got {item!r}")
        return value

    def int_list(self, key: str, value: Any) -> list[int]:
        if not isinstance(value, list) or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in value
        ):
            raise self.fail(key, f"must be a list of integers, got {value!r}")
        return value

    def table(self, key: str, required: bool = True, schema_table: str | None = None) -> Table:
        value = self._get(key, dict, required, {})
        assert value is not None
        path = f"{self.path}.{key}" if self.path else key
        return Table(value, path, self.file, schema_table)

    def only(self, *allowed: str) -> None:
        for key in self.data:
            if key not in allowed:
                raise self.fail(key, "unknown key", hint=f"keys allowed here: {', '.join(allowed)}")


def one_of(t: Table, key: str, value: str, allowed: tuple[str, ...] | list[str]) -> str:
    if value not in allowed:
        raise t.fail(key, f"unknown value {value!r}; expected one of: {', '.join(allowed)}")
    return value
