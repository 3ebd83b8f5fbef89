"""The exit codes of `mini-claude` itself (the `mcp` subcommand documents its own, in mcp_cmd.py)."""

from __future__ import annotations

__all__ = ["EXIT_ERROR", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_USAGE"]

EXIT_OK = 0
EXIT_ERROR = 1  # an error, or `-p` stopped by --max-turns before the model finished
EXIT_USAGE = 2  # bad invocation: -p without a prompt, the REPL without a terminal (argparse also exits 2)
EXIT_INTERRUPTED = 130  # Ctrl+C (128 + SIGINT, as shells report it)
