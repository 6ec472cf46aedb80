"""`ethosu-kit import-pack DEVICE.pdsc --device NAME -o board.toml`: draft a board file."""

from __future__ import annotations

import argparse
from pathlib import Path

HELP = "draft a board.toml from a CMSIS-Pack device description (.pdsc)"


def _number(text: str) -> int:
    try:
        return int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("pdsc", type=Path, help="the pack's .pdsc file")
    parser.add_argument("--device", required=True, help="device name (Dname) in the pack")
    parser.add_argument("-o", "--output", type=Path, required=True, help="board.toml to write")
    parser.add_argument("--name", help="board name (default: from the device name)")
    parser.add_argument(
        "--npu", choices=("ethos-u55", "ethos-u65", "ethos-u85"), help="the SoC's Ethos-U"
    )
    parser.add_argument(
        "--macs", type=int, action="append", help="MAC configuration (repeat for several)"
    )
    parser.add_argument("--npu-base", type=_number, help="NPU register base address")
    parser.add_argument("--npu-irq", type=_number, help="NPU interrupt number")
    parser.add_argument("--uart-base", type=_number, help="console UART (CMSDK APB) base")
    parser.add_argument(
        "--security",
        choices=("auto", "s", "ns", "all"),
        default="auto",
        help="which aliases to import when the pack lists secure and non-secure ones "
        "(auto: secure)",
    )
    parser.add_argument("--force", action="store_true", help="overwrite an existing file")


def run(args: argparse.Namespace) -> int:
    from ethosu_kit.board_loader import parse_board
    from ethosu_kit.cmsis_pack import ImportOptions, load_device, render_board_toml
    from ethosu_kit.errors import BoardError, KitError
    from ethosu_kit.output import write_file_atomic

    out: Path = args.output
    if out.exists() and not args.force:
        raise KitError(f"{out}: exists; not overwriting it", hint="pass --force to replace it")
    device = load_device(args.pdsc, args.device)
    options = ImportOptions(
        name=args.name,
        npu_kind=args.npu,
        macs=tuple(args.macs or ()),
        npu_base=args.npu_base,
        npu_irq=args.npu_irq,
        uart_base=args.uart_base,
        security=args.security,
    )
    text = render_board_toml(device, options, args.pdsc)
    try:
        board = parse_board(text, str(out))  # what we write must load
    except BoardError as exc:
        raise BoardError(
            f"{args.pdsc}: device {args.device}: the drafted board is not valid: {exc.message}",
            hint=exc.hint or "check the options given for what the pack does not say",
        ) from None
    out.parent.mkdir(parents=True, exist_ok=True)
    write_file_atomic(out, text.encode("utf-8"))
    todos = text.count("TODO")
    print(
        f"{out}: board {board.name}, {len(board.regions)} regions"
        + (f", {todos} TODO line(s) to check" if todos else "")
    )
    return 0
