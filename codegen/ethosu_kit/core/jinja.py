"""The one way the kit sets up Jinja: templates render exactly what they say (no
autoescape, trailing newlines kept, block tags take their line with them) and an
undefined name is an error, never an empty string.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import jinja2


def environment(
    folders: Sequence[str | Path], filters: Mapping[str, Callable[..., str]]
) -> jinja2.Environment:
    """An environment loading templates from `folders` (first match wins), with `filters`."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader([str(f) for f in folders]),
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
        autoescape=False,
    )
    env.filters.update(filters)
    return env
