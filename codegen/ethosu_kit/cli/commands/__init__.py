"""One module per CLI command: add_arguments(parser), run(args) -> int (help: cli.app.COMMANDS)."""
