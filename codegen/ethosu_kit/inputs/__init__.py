"""Model inputs from the user's files: hardened .npy/.npz reading (`arrays`), checked
against the program's inputs (`prepare`), compiled into the firmware (`compiled`, `gen
--inputs`), run through the delegates on the virtual NPU (`simulate`), and outputs
compared (`compare`).

May import: `vnpu`, `layout`, `plan`, `selftest.vectors`, `board`, `pte`, `npu`,
`core`. Never `render` (a sibling).
"""
