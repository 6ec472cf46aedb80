"""Drafting a board folder: `new-board` (`new_board`), CMSIS packs (`cmsis_pack`),
SVD files (`svd`).

cmsis_pack_manager, cmsis_svd and lxml are optional (the `pack` extra): they are
imported inside the functions that need them.

May import: the rest of `board`, `npu`, `core`.
"""
