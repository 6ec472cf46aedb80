"""After render: the project folder and everything that builds, measures, checks,
identifies or runs its firmware.

Owns: building (`build`), measuring stack/heap/pools (`measure`, `fingerprint`), the
`run --inputs/-o` protocol (`host_io`), identifying a kit image (`image`), the ELF
placement check (`elf_check`) and the emulators (`qemu`, `fvp`).

May import: every library stage below it; never `cli`.
"""
