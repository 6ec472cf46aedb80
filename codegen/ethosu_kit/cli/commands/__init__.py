"""One module per CLI command: HELP, add_arguments(parser), run(args) -> int."""
