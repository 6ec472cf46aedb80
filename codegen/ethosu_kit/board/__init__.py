"""Stage 0: a board description (`board.toml`) -> `Board`.

Owns: the board model and its enums (ConsoleKind, TimerKind, RegionKind) (`model`); the
HAL hook table and each hook's default (`hooks`); the schema, every key written once
with its type, default and meaning (`schema`, its defaults in `defaults`); the one typed
reader of board.toml's tables (`reader`) and the table readers (`tables`: cpu, npu,
console, glue; `memory_map`: regions, boot, external_data; `runners`: qemu, fvp;
`ports`: port, whose files are checked after parsing; `stand_in`: the [qemu.layout]
overlay); schema 1 compatibility (`schema1`); the TODO sentinel of drafted boards
(`todo`); the loader that runs them (`loader`); plausibility checks (`checks`); Cortex-M
core facts (`cores`); the toolchains (`toolchain`); and `draft/`, which drafts a new
board folder (`new-board`, `import-pack`, SVD files).

May import: `npu`, `core`.
"""
