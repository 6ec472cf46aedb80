"""Stage 3b: plan + layout -> the generated project's files (path -> bytes).

Owns: `project` (`render_project`: which files, from which templates), `context` (the
template context: buffer views, the NPU target, the header), `upstream` (upstream's
defaults for the "differs from upstream" notes), `filters` (the Jinja environment and
its filters) and the Jinja templates beside them (`templates/`; the linker templates
live in the kit's `linker/` folder). Writes nothing: `core.writer` does.

May import: `layout`, `plan`, `selftest.vectors`, `board`, `pte`, `npu`, `core`.
Never `inputs` (a sibling).
"""
