"""Command line: `ethosu-kit <command>` and `gen-firmware` (= `ethosu-kit gen`).

Each command lives in `ethosu_kit.cli.commands.<name>` with `add_arguments(parser)` and
`run(args) -> int`: argument parsing and printing over one call into the library; its
help line is in `COMMANDS`. Only the module of the command that runs is imported.
Nothing here imports torch or executorch (only `lower-example` and `advise --module` do,
inside `ethosu_kit.aot`'s functions), so every other command starts without them.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import signal
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import NoReturn

from ethosu_kit import __version__
from ethosu_kit.core.errors import KitError


@dataclass(frozen=True)
class Command:
    module: str  # under ethosu_kit.cli.commands: add_arguments(parser), run(args) -> int
    help: str  # one line, for `ethosu-kit --help` and the command's own --help


# The commands, with their help here so `ethosu-kit --help` imports none of them.
COMMANDS: dict[str, Command] = {
    "inspect": Command(
        "inspect_pte",
        "show what a .pte holds: methods, IO, planned buffers, CPU operators, Ethos-U delegates",
    ),
    "gen": Command(
        "gen",
        "generate a firmware project from a .pte (same as gen-firmware)",
    ),
    "boards": Command(
        "boards",
        "list the built-in boards (and check a custom board file)",
    ),
    "check-elf": Command(
        "check_elf",
        "prove a linked ELF places every buffer where its memory plan requires",
    ),
    "build": Command(
        "build",
        "configure and build a generated project (plain CMake presets); prints the ELF path",
    ),
    "run": Command(
        "run",
        "run a firmware image in QEMU or an Arm FVP (from its board's data); "
        "exit code = the firmware's",
    ),
    "simulate": Command(
        "simulate",
        "run each Ethos-U delegate of a .pte on the virtual NPU (given or random inputs)",
    ),
    "compare": Command(
        "compare",
        "compare two result files (run -o, simulate -o, a reference) within N LSB",
    ),
    "lower-example": Command(
        "lower_example",
        "lower the built-in example CNN to a .pte for an Ethos-U (needs torch + executorch)",
    ),
    "new-board": Command(
        "new_board",
        "draft a board folder from an existing board (--from) or a CMSIS pack (--pack .pdsc), "
        "with an SVD's peripherals (--svd)",
    ),
    "report": Command(
        "report",
        "the memory picture of a plan and/or a linked ELF (terminal, --html, --svg, --json); "
        "--diff, --budget for CI",
    ),
    "advise": Command(
        "advise",
        "which NPU configuration and memory mode to lower a model (TOSA or PyTorch) for: "
        "each candidate compiled with Vela, planned on the boards, the fastest that fits",
    ),
    "import-pack": Command(
        "import_pack",
        "draft a board.toml from a CMSIS-Pack device (.pdsc); new-board drafts a whole folder",
    ),
}


def one_line(text: str) -> str:
    """A message as one line: a name from a file may hold a newline or a terminal
    escape; each control character is shown as its \\x escape."""
    return "".join(
        f"\\x{ord(c):02x}" if ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 else c for c in text
    )


def _load(module: str) -> ModuleType | None:
    try:
        return importlib.import_module(f"ethosu_kit.cli.commands.{module}")
    except ModuleNotFoundError as exc:
        if exc.name == f"ethosu_kit.cli.commands.{module}":
            return None  # command not built yet in this tree
        raise


class _Parser(argparse.ArgumentParser):
    """argparse with the kit's error contract: one `error:` line and one `hint:` line
    (argparse's own prints the usage block first)."""

    def error(self, message: str) -> NoReturn:
        print(f"error: {self.prog}: {one_line(' '.join(message.split()))}", file=sys.stderr)
        print(f"hint: see '{self.prog} --help'", file=sys.stderr)
        # 2, as argparse; a command with an exit-code space of its own (run) sets it
        raise SystemExit(getattr(self, "usage_exit", 2))


def build_parser(selected: str | None = None) -> argparse.ArgumentParser:
    """The parser, with the arguments of the `selected` command only: a command's module
    (and the library it imports: numpy, jinja2, pyelftools, ...) is loaded when it runs,
    so `ethosu-kit inspect` and `--help` start in a fraction of the time."""
    parser = _Parser(
        prog="ethosu-kit",
        description="Turn an ExecuTorch .pte lowered for Ethos-U into placed, checked firmware.",
    )
    parser.add_argument("--version", action="version", version=f"ethosu-kit {__version__}")
    parser.add_argument("--debug", action="store_true", help="show a traceback for internal errors")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, command in COMMANDS.items():
        module = _load(command.module) if name == selected else None
        if name == selected and module is None:
            continue
        p = sub.add_parser(name, help=command.help, description=command.help)
        if module is not None:
            module.add_arguments(p)
            p.set_defaults(_run=module.run)
    return parser


def _selected(argv: Sequence[str]) -> str | None:
    """The command `argv` runs: its first word that is not an option (the top-level
    options take no value)."""
    return next((word for word in argv if not word.startswith("-")), None)


class Terminated(BaseException):
    """SIGTERM or SIGHUP, raised where the process is so `finally`/cleanup code runs
    (a generation's temporary folder is removed) as it does for SIGINT."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _raise_terminated(signum: int, _frame: object) -> None:
    raise Terminated(signum)


@contextlib.contextmanager
def _terminate_as_exception() -> Iterator[None]:
    """SIGTERM/SIGHUP raise `Terminated` while a command runs (where their action is
    the default); the previous handlers come back afterwards (main() may be called
    in-process, by tests or a host program)."""
    previous = {}
    for sig in (signal.SIGTERM, signal.SIGHUP):
        try:
            if signal.getsignal(sig) == signal.SIG_DFL:
                previous[sig] = signal.signal(sig, _raise_terminated)
        except (ValueError, OSError):  # not the main thread: leave the host's handling
            pass
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(_selected(words))
    args = parser.parse_args(words)
    with _terminate_as_exception():
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    try:
        code: int = args._run(args)
        return code
    except KitError as exc:
        print(f"error: {one_line(exc.message)}", file=sys.stderr)
        if exc.hint:
            print(f"hint: {one_line(exc.hint)}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    except Terminated as exc:
        print(f"error: terminated by {signal.Signals(exc.signum).name}", file=sys.stderr)
        return 128 + exc.signum
    except BrokenPipeError:
        # the reader of stdout left (`ethosu-kit simulate m.pte | head`): stop quietly, as
        # a Unix filter does; stdout goes to /dev/null so the interpreter's own flush at
        # exit does not fail again
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 128 + 13  # SIGPIPE
    except Exception as exc:  # a bug of ours, not the user's input
        if args.debug or os.environ.get("ETHOSU_KIT_DEBUG"):
            raise
        if isinstance(exc, OSError) and exc.filename is not None:
            # the user's file system said no (a folder on the path is a file, no
            # permission, disk full) where a command did not expect it: one line
            where = str(exc.filename) + (f" -> {exc.filename2}" if exc.filename2 else "")
            print(f"error: {one_line(where)}: {exc.strerror or exc}", file=sys.stderr)
            return 2
        if isinstance(exc, RuntimeError) and str(exc).startswith("Symlink loop from "):
            # pathlib's resolve() on a link loop (Python 3.11), wherever a path is resolved
            where = str(exc).removeprefix("Symlink loop from ").strip("'\"")
            print(f"error: {one_line(where)}: a loop of symbolic links", file=sys.stderr)
            return 2
        print(
            f"internal error: {type(exc).__name__}: {exc} (rerun with --debug for a traceback)",
            file=sys.stderr,
        )
        return 70


def gen_firmware_main(argv: Sequence[str] | None = None) -> int:
    """`gen-firmware ...` is `ethosu-kit gen ...`."""
    return main(["gen", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    raise SystemExit(main())
