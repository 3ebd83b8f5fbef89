"""The command line: argument parsing, the REPL, rendering, `mcp` subcommands, the demo."""
