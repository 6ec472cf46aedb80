"""The memory picture (`ethosu-kit report`): every region of a plan and of a linked image
to scale, coloured by what is in it, with what the NPU reaches and how.

`picture.build_picture(plan, elf)` makes the one typed `MemoryPicture` (its NPU part,
the port registers and what they reach, from `picture_npu`); the views are pure
functions of it: `views.svg`, `views.terminal`, `page.html` (the self-contained page),
`picture.to_json`. `diff` compares two pictures (`--diff`) and checks a budget
(`--budget`). Every number is the plan's (plan.fill's accounting) or the ELF's
(firmware.elf), never worked out another way.

`advise` (`ethosu-kit advise`) plans each candidate on the boards and picks;
`advise_candidates` chooses the candidates, `advise_compile` compiles them with Vela;
`advise_view` prints the table.

Layer: above firmware (it reads ELFs with firmware.elf), below cli.
"""
