"""After render: the project folder and everything that builds, measures, checks,
identifies or runs its firmware.

Owns: the pipeline (`pipeline`: `generate_project(GenRequest)`, `build_firmware`), the
stages over a project folder (`stages`: `plan_and_render`, `regenerate`), building
(`build`), measuring stack/heap/pools (`measure`, `fingerprint`), the `run
--inputs/-o` protocol (`host_io`), identifying a kit image (`image`), the ELF placement
check (`elf_check`, with `elf_placement` and `elf_boot`), the emulators (`qemu`,
`fvp`) and a board through its debug probe (`probe`: the run loop; `probe_kind`,
`probe_session`, `probe_qemu`, `gdb_mi`).
Inside: pipeline > measure > build > stages (import-linter checks it).

May import: every library stage below it; never `cli`.
"""
