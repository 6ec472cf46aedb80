"""Frozen dataclasses to JSON and back, typed, with errors that name the key.

The stages pass typed objects (`MemoryPlan`, `Board`); when one is written to disk and
read back (memory_plan.json for check-elf and run), it comes back as the same typed
object, checked against the dataclass field types. A wrong shape names the key path,
e.g. `buffers[3].size: expected an integer, got a list`.

Supported field types: bool, int, float, str, None, `X | None`, enums, nested
dataclasses, `tuple[X, ...]`, `tuple[X, Y]`, `dict[str, X]`, `dict[tuple[str, str], X]`
(keys joined with "/") and `Any` (taken as it is).
"""

from __future__ import annotations

import dataclasses
import enum
import types
import typing
from functools import cache
from typing import Any, TypeVar, Union, get_args, get_origin

T = TypeVar("T")
KEY_SEPARATOR = "/"


class ShapeError(ValueError):
    """A value of the wrong shape: `key` is the path of the offending value."""

    def __init__(self, key: str, problem: str) -> None:
        super().__init__(f"{key}: {problem}" if key else problem)
        self.key = key
        self.problem = problem


def encode(value: Any) -> Any:
    """A dataclass (or anything made of the supported types) as plain JSON values. A field
    whose metadata says `omit_default` is left out while it has its default (decode gives
    it back): a field added later then leaves what older data encodes to unchanged."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: encode(getattr(value, f.name))
            for f in dataclasses.fields(value)
            if not (f.metadata.get("omit_default") and getattr(value, f.name) == f.default)
        }
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (tuple, list)):
        return [encode(v) for v in value]
    if isinstance(value, dict):
        return {
            (KEY_SEPARATOR.join(k) if isinstance(k, tuple) else str(k)): encode(v)
            for k, v in value.items()
        }
    return value


def decode(cls: type[T], data: Any, key: str = "") -> T:
    """`data` (parsed JSON) as an instance of dataclass `cls`; ShapeError on a bad shape."""
    result: T = _decode(cls, data, key)
    return result


_NAMES = {bool: "a boolean", int: "an integer", float: "a number", str: "a string",
          list: "a list", dict: "an object", type(None): "null"}  # fmt: skip


def _what(value: Any) -> str:
    return _NAMES.get(type(value), type(value).__name__)


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _join(key: str, part: str) -> str:
    return f"{key}.{part}" if key else part


def _decode(tp: Any, value: Any, key: str) -> Any:
    origin = get_origin(tp)
    if tp is Any:
        return value
    if origin in (Union, types.UnionType):
        options = get_args(tp)
        if value is None and type(None) in options:
            return None
        real = [o for o in options if o is not type(None)]
        if len(real) == 1:
            return _decode(real[0], value, key)
        raise ShapeError(key, f"unsupported type {tp}")
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        if not isinstance(value, dict):
            raise ShapeError(key, f"expected an object, got {_what(value)}")
        hints = _hints(tp)
        kwargs = {}
        for f in dataclasses.fields(tp):
            if not f.init:
                continue
            if f.name not in value:
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                    raise ShapeError(_join(key, f.name), "missing")
                continue
            kwargs[f.name] = _decode(hints[f.name], value[f.name], _join(key, f.name))
        return tp(**kwargs)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        try:
            return tp(value)
        except ValueError:
            allowed = ", ".join(repr(m.value) for m in tp)
            raise ShapeError(key, f"expected one of {allowed}, got {value!r}") from None
    if origin is tuple:
        args = get_args(tp)
        if not isinstance(value, list):
            raise ShapeError(key, f"expected a list, got {_what(value)}")
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_decode(args[0], v, f"{key}[{i}]") for i, v in enumerate(value))
        if len(value) != len(args):
            raise ShapeError(key, f"expected {len(args)} values, got {len(value)}")
        pairs = enumerate(zip(args, value, strict=True))
        return tuple(_decode(a, v, f"{key}[{i}]") for i, (a, v) in pairs)
    if origin is dict:
        key_type, value_type = get_args(tp)
        if not isinstance(value, dict):
            raise ShapeError(key, f"expected an object, got {_what(value)}")
        out = {}
        for k, v in value.items():
            if get_origin(key_type) is tuple:
                parts = tuple(str(k).split(KEY_SEPARATOR))
                if len(parts) != len(get_args(key_type)):
                    raise ShapeError(_join(key, str(k)), "key must be 'a/b'")
                dkey: Any = parts
            else:
                dkey = k
            out[dkey] = _decode(value_type, v, _join(key, str(k)))
        return out
    if tp is bool:
        if not isinstance(value, bool):
            raise ShapeError(key, f"expected a boolean, got {_what(value)}")
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ShapeError(key, f"expected an integer, got {_what(value)}")
        return value
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ShapeError(key, f"expected a number, got {_what(value)}")
        return float(value)
    if tp is str:
        if not isinstance(value, str):
            raise ShapeError(key, f"expected a string, got {_what(value)}")
        return value
    raise ShapeError(key, f"unsupported type {tp}")
