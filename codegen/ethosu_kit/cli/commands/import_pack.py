"""`ethosu-kit import-pack DEVICE.pdsc --device NAME -o board.toml`: one board file from a pack.

Kept for scripts written before `new-board`: it drafts the same board.toml as
`ethosu-kit new-board NAME --pack DEVICE.pdsc --device NAME`, without an SVD and without
a folder (a board.toml alone is a board folder with no code of its own).
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from ethosu_kit.board.draft.cmsis_pack import load_device
from ethosu_kit.board.draft.new_board import (
    Choices,
    apply_choices,
    draft_from_pack,
    finish,
    render_board_toml,
    set_npu_macs,
    validate,
)
from ethosu_kit.cli.commands.boards import checked_defaults
from ethosu_kit.cli.commands.new_board import number
from ethosu_kit.core.errors import BoardError, KitError
from ethosu_kit.core.writer import write_file_atomic
from ethosu_kit.npu.facts import NPU_MACS, NpuKind


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("pdsc", type=Path, help="the pack's .pdsc file")
    parser.add_argument("--device", required=True, help="device name (Dname) in the pack")
    parser.add_argument("--processor", help="Pname of the core, on a multi-core device")
    parser.add_argument("-o", "--output", type=Path, required=True, help="board.toml to write")
    parser.add_argument("--name", help="board name (default: from the device name)")
    parser.add_argument("--npu", choices=[k.value for k in NpuKind], help="the SoC's Ethos-U")
    parser.add_argument(
        "--macs", type=int, action="append", help="MAC configuration (repeat for several)"
    )
    parser.add_argument("--npu-base", type=number, help="NPU register base address")
    parser.add_argument("--npu-irq", type=number, help="NPU interrupt number")
    parser.add_argument("--uart-base", type=number, help="console UART (CMSDK APB) base")
    parser.add_argument(
        "--security",
        choices=("auto", "s", "ns", "all"),
        default="auto",
        help="which aliases to import when the pack lists secure and non-secure ones "
        "(auto: secure)",
    )
    parser.add_argument("--force", action="store_true", help="overwrite an existing file")


def run(args: argparse.Namespace) -> int:
    out: Path = args.output
    if out.exists() and not args.force:
        raise KitError(f"{out}: exists; not overwriting it", hint="pass --force to replace it")
    if args.macs and not args.npu:
        raise KitError("--macs needs --npu KIND (the MAC configurations of which Ethos-U?)")
    device = load_device(args.pdsc, args.device, args.processor)
    name = args.name or re.sub(r"[^a-z0-9]+", "-", device.name.lower()).strip("-") or "board"
    draft = draft_from_pack(device, args.pdsc, name, args.security)
    apply_choices(
        draft,
        Choices(
            npu=args.npu,
            npu_base=args.npu_base,
            npu_irq=args.npu_irq,
            console="cmsdk-apb" if args.uart_base is not None else None,
            console_base=args.uart_base,
        ),
    )
    if args.npu and args.macs:
        for macs in args.macs:
            if macs not in NPU_MACS[args.npu]:
                raise BoardError(
                    f"--macs {macs}: {args.npu} has no {macs}-MAC configuration",
                    hint=f"it exists as {', '.join(str(m) for m in NPU_MACS[args.npu])}",
                )
        set_npu_macs(draft, args.npu, args.macs)
    finish(draft)
    text = render_board_toml(draft)
    try:
        board = validate({"board.toml": text.encode("utf-8")}, str(out))
    except BoardError as exc:
        raise BoardError(
            f"{args.pdsc}: device {args.device}: the drafted board is not valid: {exc.message}",
            hint=exc.hint or "check the options given for what the pack does not say",
        ) from None
    out.parent.mkdir(parents=True, exist_ok=True)
    write_file_atomic(out, text.encode("utf-8"))

    todos = len(board.todo) + len(checked_defaults(text))
    print(
        f"{out}: board {board.name}, {len(board.regions)} regions"
        + (f", {todos} TODO(s) to check (`ethosu-kit boards {out}` lists them)" if todos else "")
    )
    return 0
