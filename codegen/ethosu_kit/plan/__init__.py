"""Stage 2: model + board + options -> `MemoryPlan`.

Owns: the plan's types and their JSON form (`types`); the per-app policy (`apps`);
regions by attribute (`regions`); what each region holds so far (`fill`); placing a
buffer or refusing with what fills the region (`placer`); what the model's own buffers
need (`wants`); the model/board/mode checks (`validate`); the placement order
(`planner`: `plan_memory`); the cold boot's code copy and note (`boot`); the
executor_runner's CPU pools (`runner_pools`); several programs (`multi`); named external
data (`external`); the text/JSON reports (`report`).

May import: `selftest.vectors`, `board`, `pte`, `npu`, `core`.
"""
