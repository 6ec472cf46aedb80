"""Stage 3a: `MemoryPlan` -> `LinkLayout`, the linker facts every linker template
and header prints.

May import: `plan`, `board`, `pte`, `npu`, `core`.
"""
