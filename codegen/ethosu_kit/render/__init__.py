"""Stage 3b: plan + layout -> the generated project's files (path -> bytes).

Owns: rendering (`generate`) and the Jinja templates beside it (`templates/`; the
linker templates live in the kit's `linker/` folder). Writes nothing: `core.writer`
does.

May import: `layout`, `plan`, `selftest.vectors`, `board`, `pte`, `npu`, `core`.
Never `inputs` (a sibling).
"""
