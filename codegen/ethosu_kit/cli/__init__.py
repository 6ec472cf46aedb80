"""The command line: `ethosu-kit <command>` and `gen-firmware`.

`app` parses the command line and maps errors to one `error:` line and an exit code;
`commands/` holds one module per command: its arguments, one call into the library,
and printing. No business rules live here.

May import: anything in the kit. Nothing in the kit imports `cli`.
"""

from ethosu_kit.cli.app import gen_firmware_main, main

__all__ = ["gen_firmware_main", "main"]
