"""Command line: `ethosu-kit <command>` and `gen-firmware` (= `ethosu-kit gen`).

Each command lives in `ethosu_kit.cli.commands.<name>` with `HELP`, `add_arguments(parser)`
and `run(args) -> int`: argument parsing and printing over one call into the library.
Nothing here imports torch or executorch (only `lower-example` does, inside `ethosu_kit.aot`'s
functions), so every other command starts without them.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import signal
import sys
from collections.abc import Iterator, Sequence
from types import ModuleType
from typing import NoReturn

from ethosu_kit import __version__
from ethosu_kit.core.errors import KitError

# command name -> module under ethosu_kit.cli.commands
COMMANDS: dict[str, str] = {
    "inspect": "inspect_pte",
    "gen": "gen",
    "boards": "boards",
    "check-elf": "check_elf",
    "build": "build",
    "run": "run",
    "simulate": "simulate",
    "compare": "compare",
    "lower-example": "lower_example",
    "new-board": "new_board",
    "import-pack": "import_pack",
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
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="ethosu-kit",
        description="Turn an ExecuTorch .pte lowered for Ethos-U into placed, checked firmware.",
    )
    parser.add_argument("--version", action="version", version=f"ethosu-kit {__version__}")
    parser.add_argument("--debug", action="store_true", help="show a traceback for internal errors")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, module_name in COMMANDS.items():
        module = _load(module_name)
        if module is None:
            continue
        p = sub.add_parser(name, help=module.HELP, description=module.HELP)
        module.add_arguments(p)
        p.set_defaults(_run=module.run)
    return parser


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
    parser = build_parser()
    args = parser.parse_args(argv)
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
