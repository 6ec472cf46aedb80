"""Model inputs from the user's files: hardened .npy/.npz reading (`arrays`), inputs
compiled into the firmware (`compiled`, `gen --inputs`), and comparing outputs
(`compare`).

May import: `vnpu`, `layout`, `plan`, `selftest.vectors`, `board`, `pte`, `npu`,
`core`. Never `render` (a sibling).
"""
