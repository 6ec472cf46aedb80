"""Stage 0: a board description (`board.toml`) -> `Board`.

Owns: the board model and the HAL hook table (`model`), the loader (`loader`),
plausibility checks (`checks`), Cortex-M core facts (`cores`), the toolchains
(`toolchain`), and `draft/`, which drafts a new board folder (`new-board`,
`import-pack`, SVD files).

May import: `npu`, `core`.
"""
