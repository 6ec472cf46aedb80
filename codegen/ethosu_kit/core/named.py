"""Lookup by name in the kit's small tuples of named records (a plan's buffers and
programs, a delegate's blocks): the tuples keep their order, which the generated files
follow, so they are searched rather than kept as dicts."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol, TypeVar


class _Named(Protocol):
    @property
    def name(self) -> str: ...


N = TypeVar("N", bound=_Named)


def by_name(items: Iterable[N], name: str) -> N:
    """The first of `items` called `name`; KeyError(name) when none is."""
    for item in items:
        if item.name == name:
            return item
    raise KeyError(name)
