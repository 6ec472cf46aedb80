"""Drafting a board folder: `new-board` (`new_board`: from a pack, an SVD and the
command line; `from_board`: a copy of another board), the drafted facts and where each
came from (`facts`), its files through the kit's Jinja environment and writer
(`render`), CMSIS packs (`cmsis_pack`), SVD files (`svd`).

cmsis_pack_manager, cmsis_svd and lxml are optional (the `pack` extra): they are
imported inside the functions that need them.

May import: the rest of `board`, `npu`, `core`.
"""
