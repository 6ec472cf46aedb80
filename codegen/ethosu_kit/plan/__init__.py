"""Stage 2: model + board + options -> `MemoryPlan`.

Owns: the plan's types and their JSON form (`types`), the placement (`planner`) and
the text/JSON reports (`report`).

May import: `selftest.vectors`, `board`, `pte`, `npu`, `core`.
"""
