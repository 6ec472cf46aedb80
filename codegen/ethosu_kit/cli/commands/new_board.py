"""`ethosu-kit new-board NAME -o DIR`: draft a board folder (board.toml + C stubs)."""

from __future__ import annotations

import argparse
from dataclasses import fields
from pathlib import Path

from ethosu_kit.board.checks import BOARD_NAME_RE
from ethosu_kit.board.draft import new_board as drafting
from ethosu_kit.board.draft.cmsis_pack import load_device, pack_svd
from ethosu_kit.board.draft.svd import load_svd
from ethosu_kit.board.loader import load_board
from ethosu_kit.cli.commands.boards import todo_summary
from ethosu_kit.core.errors import BoardError, KitError


def number(text: str) -> int:
    try:
        value = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r} (use 0x... or decimal)") from None
    if not 0 <= value < 1 << 32:
        raise argparse.ArgumentTypeError(f"{text!r} is not a 32-bit address or number")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", help="board name: lower case letters, digits and '-'")
    parser.add_argument("-o", "--output", type=Path, required=True, help="board folder to write")
    source = parser.add_argument_group("where the facts come from")
    source.add_argument("--from", dest="from_board", metavar="BOARD",
                        help="start from a board: built-in name, folder or board.toml")  # fmt: skip
    source.add_argument("--pack", type=Path, metavar="FILE.pdsc", help="CMSIS-Pack description")
    source.add_argument("--device", help="device name (Dname) in the pack")
    source.add_argument("--processor", help="Pname of the core, on a multi-core device")
    source.add_argument(
        "--svd",
        type=Path,
        metavar="FILE.svd",
        help="device SVD: NPU and console addresses and IRQs (default: the one the pack names, "
        "when it is next to the .pdsc)",
    )
    source.add_argument(
        "--security",
        choices=("auto", "s", "ns", "all"),
        default="auto",
        help="which aliases to use when the pack lists secure and non-secure ones (auto: secure)",
    )
    npu = parser.add_argument_group("the NPU (instead of, or over, the SVD)")
    npu.add_argument("--npu", metavar="KIND[-MACS]", help="e.g. ethos-u55-128 or ethos-u65")
    npu.add_argument("--npu-base", type=number, metavar="ADDR", help="register base address")
    npu.add_argument("--npu-irq", type=number, metavar="N", help="interrupt number (IRQn)")
    npu.add_argument("--npu-peripheral", metavar="NAME", help="the SVD peripheral that is the NPU")
    console = parser.add_argument_group("the console (instead of, or over, the SVD)")
    console.add_argument(
        "--console",
        metavar="KIND",
        help="cmsdk-apb, pl011 (both need --console-base), semihosting, custom "
        "(a stub console.c to fill in) or none",
    )
    console.add_argument("--console-base", type=number, metavar="ADDR", help="UART base address")
    console.add_argument(
        "--console-peripheral", metavar="NAME", help="the SVD's console UART, e.g. UART0"
    )
    parser.add_argument(
        "--qemu-machine",
        metavar="MACHINE",
        help="the QEMU machine that runs this board's images (a name `qemu-system-arm -M help` "
        "lists), for `ethosu-kit run`",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="write into a non-empty folder (replaces board.toml and the stubs; other files stay)",
    )


def run(args: argparse.Namespace) -> int:
    if not BOARD_NAME_RE.fullmatch(args.name):
        raise KitError(f"board name {args.name!r}: use lower case letters, digits and '-'")
    if args.from_board and args.pack:
        raise KitError("--from and --pack both given: start from one of them")
    if not args.from_board and not args.pack:
        raise KitError(
            "new-board needs a CPU and memory map to start from",
            hint="give --from BOARD (`ethosu-kit boards` lists them) or --pack FILE.pdsc "
            "--device NAME; an "
            "--svd adds peripherals, not the memory map (docs/porting.md: without a pack)",
        )
    if args.pack and not args.device:
        raise KitError("--pack needs --device NAME (the Dname of the device in the pack)")
    if args.device and not args.pack:
        raise KitError("--device names a device of a pack: give --pack FILE.pdsc too")
    choices = drafting.Choices(**{f.name: getattr(args, f.name) for f in fields(drafting.Choices)})
    notes: list[str] = []
    svd_path: Path | None = args.svd
    if args.from_board:
        draft = drafting.draft_from_board(load_board(args.from_board), args.name)
    else:
        device = load_device(args.pack, args.device, args.processor)
        draft = drafting.draft_from_pack(device, args.pack, args.name, args.security)
        if svd_path is None and device.svd:
            svd_path, note = pack_svd(args.pack, device.svd)  # only inside the pack's folder
            notes.append(note)
    if svd_path is not None:
        drafting.apply_svd(draft, load_svd(svd_path), choices)
    elif args.npu_peripheral or args.console_peripheral:
        # a pack whose device names no SVD (Alif's E1C): say where the facts come from then
        named = "; the pack names no SVD for this device" if not args.from_board else ""
        raise KitError(
            f"--npu-peripheral / --console-peripheral name SVD peripherals: give --svd{named}",
            hint="give --svd FILE.svd (the vendor's SVD for this device), or the facts "
            "themselves: --npu KIND-MACS --npu-base ADDR --npu-irq N, "
            "--console cmsdk-apb|pl011 --console-base ADDR or --console custom",
        )
    drafting.apply_choices(draft, choices)
    if args.qemu_machine:
        # a copied stand-in (its text and how it lays the map out) was for the other machine
        drafting.set_qemu_machine(draft, args.qemu_machine)
        for table in [t for t in draft.passthrough if t.split(".")[:2] == ["qemu", "layout"]]:
            del draft.passthrough[table]
    drafting.finish(draft)
    files = drafting.render_folder(draft)
    target = args.output / "board.toml"
    try:
        board = drafting.validate(files, str(target))
    except BoardError as exc:
        raise BoardError(
            f"the drafted board is not valid: {exc.message}",
            hint=exc.hint or "check the options given for what the sources do not say",
        ) from None
    written = drafting.write_folder(files, args.output, args.force)
    for note in notes:
        print(f"note: {note}")
    print(f"{args.output}: board {board.name}, {len(board.regions)} regions, "
          f"files: {', '.join(written)}")  # fmt: skip

    print(todo_summary(board, files["board.toml"].decode("utf-8")))
    print(f"next: edit the TODOs, then `ethosu-kit boards {args.output}`")
    return 0
