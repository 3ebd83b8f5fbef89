"""The exit codes of `mini-claude` itself (the `mcp` subcommand documents its own, in cli/mcp/command.py).

`-p` exits as Claude Code's `-p` does: 0 when the model answered (a tool call the permission gate refused on the way
included), 1 on an error or when `--max-turns` stopped the run; an answer cut at the output token limit is 1 too
(Claude Code: 1, after its own attempts to continue). With `--detailed-exit-codes` the endings are told apart:
3 `--max-turns`, 4 cut at the output token limit, 5 answered but a call was denied.
"""

from __future__ import annotations

__all__ = ["EXIT_DENIED", "EXIT_ERROR", "EXIT_INTERRUPTED", "EXIT_MAX_TURNS", "EXIT_OK", "EXIT_TRUNCATED", "EXIT_USAGE"]

EXIT_OK = 0
EXIT_ERROR = 1  # an error: the model API, a config problem, an MCP prompt that could not be rendered; `-p` also
#                 exits 1 at --max-turns and when the answer was cut (without --detailed-exit-codes)
EXIT_USAGE = 2  # bad invocation: -p without a prompt, the REPL without a terminal (argparse also exits 2)
# with --detailed-exit-codes only:
EXIT_MAX_TURNS = 3  # `-p` stopped at --max-turns before the model finished
EXIT_TRUNCATED = 4  # `-p`: the final answer was cut at the model's output token limit (stop reason max_tokens)
EXIT_DENIED = 5  # `-p` answered, but the permission gate refused at least one tool call on the way
EXIT_INTERRUPTED = 130  # Ctrl+C (128 + SIGINT, as shells report it)
