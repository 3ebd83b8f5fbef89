"""`mini-claude` entry point: parses flags, dispatches subcommands, and owns exit codes.

    mini-claude                      interactive REPL
    mini-claude -p "prompt"          one-shot: the final answer on stdout, everything else on stderr
    mini-claude demo                 offline scripted demo (bundled mock model + demo MCP server)
    mini-claude mock-model ...       serve the offline mock model over HTTP
    mini-claude mcp ...              list / get / add / remove / tools / call MCP servers
    mini-claude trust [PATH]         trust a folder (its git root): its project settings and .env endpoints apply

Heavy modules are imported only on the paths that need them, so `--version` is instant.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from mini_claude import __version__
from mini_claude.cli.exit_codes import EXIT_ERROR, EXIT_INTERRUPTED

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="mini-claude",
        description="A terminal coding agent with a first-class MCP client.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Subcommands: `mini-claude demo`, `mini-claude mock-model --help`, `mini-claude mcp --help`, "
               "`mini-claude trust [PATH]`.\n\n"
               "Exit codes of -p: 0 answered; 1 an error (the model API, a config problem); 2 bad usage; "
               "3 stopped at --max-turns;\n4 the answer was cut at the output token limit; 5 answered, but a tool "
               "call was denied on the way; 130 interrupted.",
    )
    parser.add_argument("prompt", nargs="?", help="a prompt to start with (with -p: answer it and exit)")
    parser.add_argument("-p", "--print", dest="print_mode", action="store_true",
                        help="non-interactive: answer PROMPT (or stdin), print only the final answer, exit")
    parser.add_argument("--model", help="model name; `anthropic:NAME` or `openai:NAME` also picks the backend "
                                        "(default: $MINI_CLAUDE_MODEL or the backend's default). OPENAI_BASE_URL "
                                        "alone selects a keyless OpenAI-compatible server")
    parser.add_argument("--yolo", "--dangerously-skip-permissions", dest="yolo", action="store_true",
                        help="allow every tool call without asking (deny rules still apply)")
    parser.add_argument("--plan", action="store_true", help="plan mode: read-only tools only")
    parser.add_argument("--permission-mode", choices=["default", "acceptEdits", "plan", "bypassPermissions"],
                        help="permission mode")
    parser.add_argument("--allowedTools", "--allowed-tools", dest="allowed_tools", action="append", default=[],
                        metavar="RULE", help='allow rule, e.g. "Bash(git status:*)" (repeatable)')
    parser.add_argument("--disallowedTools", "--disallowed-tools", dest="disallowed_tools", action="append",
                        default=[], metavar="RULE", help="deny rule (repeatable)")
    parser.add_argument("--max-turns", type=_positive_int, default=50, help="model turns per prompt (default 50)")
    parser.add_argument("--mcp-config", action="append", default=[], metavar="FILE_OR_JSON",
                        help="extra MCP servers: a file or an inline JSON string (repeatable)")
    parser.add_argument("--strict-mcp-config", action="store_true", help="use only the --mcp-config servers")
    parser.add_argument("--mcp-trace", metavar="FILE",
                        help="append every MCP JSON-RPC message, both ways, to FILE (one JSON line each, timestamped, "
                             "secrets redacted)")
    parser.add_argument("--trust-project-mcp", action="store_true",
                        help="start project-level MCP servers (.mcp.json) without asking")
    parser.add_argument("--add-dir", dest="add_dir", action="append", default=[], metavar="DIR",
                        help="another folder to work in (offered to MCP servers as a root; repeatable)")
    parser.add_argument("--trust", action="store_true",
                        help="trust this folder (its git root) and remember it: its .claude/settings*.json may widen "
                             "permissions and its .env may choose the model endpoint")
    parser.add_argument("-c", "--continue", dest="continue_", action="store_true",
                        help="continue the newest saved conversation of this folder")
    parser.add_argument("-r", "--resume", nargs="?", const="", default=None, metavar="ID",
                        help="resume a saved conversation (without ID: choose one; the REPL only)")
    parser.add_argument("--output-format", choices=["text", "json", "stream-json"], default="text",
                        help="-p output: the answer (text), one result object (json), or every message as it "
                             "comes, one JSON object a line (stream-json); Claude Code's shapes")
    parser.add_argument("--max-budget-usd", type=float, metavar="DOLLARS",
                        help="-p: stop before a model request once the run's estimated cost reaches this")
    parser.add_argument("--input-format", choices=["text", "stream-json"], default="text",
                        help="-p input: the prompt (text), or user messages as JSON lines on stdin, each a turn "
                             "(stream-json; needs --output-format stream-json)")
    parser.add_argument("--system-prompt", metavar="TEXT", help="replace the built-in system prompt")
    parser.add_argument("--append-system-prompt", metavar="TEXT", help="add TEXT to the end of the system prompt")
    parser.add_argument("--verbose", action="store_true", help="accepted for Claude Code compatibility")
    parser.add_argument("--debug", action="store_true", help="show tracebacks and debug logs on stderr")
    parser.add_argument("--version", action="version", version=f"mini-claude {__version__}")
    return parser


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


class _Parser(argparse.ArgumentParser):
    """argparse, but an unknown flag gets one line naming the closest known one."""

    def error(self, message: str) -> Any:
        if message.startswith("unrecognized arguments:"):
            import difflib

            known = [o for action in self._actions for o in action.option_strings if o.startswith("--")]
            for word in message.split(":", 1)[1].split():
                flag = word.split("=", 1)[0]
                close = difflib.get_close_matches(flag, known, n=1, cutoff=0.6) if flag.startswith("-") else []
                hint = f" (did you mean {close[0]}?)" if close else " (mini-claude --help lists the flags)"
                self.exit(2, f"{self.prog}: unknown option {flag}{hint}\n")
        return super().error(message)


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args_list
    try:
        return _dispatch(args_list)
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        return EXIT_INTERRUPTED
    except Exception as exc:
        from mini_claude.cli.render import clean
        from mini_claude.errors import MiniClaudeError

        if debug:
            raise
        # an error's text may quote a server or a repository file: it reaches the terminal cleaned, like all of them
        if isinstance(exc, MiniClaudeError):
            sys.stderr.write(f"mini-claude: {clean(str(exc))}\n")
        else:
            sys.stderr.write(f"mini-claude: unexpected error: {clean(repr(exc))} (run with --debug for a traceback)\n")
        return EXIT_ERROR


def _dispatch(argv: list[str]) -> int:
    if argv and argv[0] == "mock-model":
        from mini_claude.models.mock_server import main as mock_main

        return mock_main(argv[1:])
    argv = _subcommand_first(argv)
    if argv and argv[0] == "mcp":
        from mini_claude.cli.mcp_cmd import main as mcp_main

        return mcp_main(argv[1:])
    if argv and argv[0] == "demo":
        from mini_claude.cli.demo import main as demo_main

        return demo_main(argv[1:])
    if argv and argv[0] == "trust":
        return _trust_main(argv[1:])
    args = build_parser().parse_args(argv)
    _setup_logging(args.debug)
    from mini_claude.cli.run import run_interactive, run_print

    if args.mcp_trace is not None:
        from pathlib import Path

        from mini_claude.mcp.trace import tracing

        with tracing(Path(args.mcp_trace)):
            return run_print(args) if args.print_mode else run_interactive(args)
    if args.print_mode:
        return run_print(args)
    return run_interactive(args)


# option -> how many values follow
_SHARED_OPTIONS = {"--mcp-config": 1, "--strict-mcp-config": 0, "--mcp-trace": 1, "--debug": 0}


def _subcommand_first(argv: list[str]) -> list[str]:
    """`--mcp-config F --debug mcp list` → `mcp list --mcp-config F --debug`: options that mean the same to the
    agent and to `mcp` may come before the subcommand too."""
    i = 0
    moved: list[str] = []
    while i < len(argv):
        word = argv[i]
        name = word.split("=", 1)[0]
        if name not in _SHARED_OPTIONS:
            break
        takes = 0 if "=" in word else _SHARED_OPTIONS[name]
        moved.extend(argv[i:i + 1 + takes])
        i += 1 + takes
    if moved and i < len(argv) and argv[i] == "mcp":
        rest = argv[i:]
        cut = rest.index("--") if "--" in rest else len(rest)
        return [*rest[:cut], *moved, *rest[cut:]]
    return argv


def _trust_main(argv: list[str]) -> int:
    """`mini-claude trust [PATH]`: remember PATH's folder (its git root, else PATH) as trusted."""
    from pathlib import Path

    from mini_claude.cli.exit_codes import EXIT_OK, EXIT_USAGE
    from mini_claude.cli.render import clean
    from mini_claude.paths import state_dir, user_home
    from mini_claude.trust import TrustStore, workspace_folder

    parser = argparse.ArgumentParser(
        prog="mini-claude trust",
        description="Trust a folder: its git root (else the folder itself) and every folder inside it. Then its "
                    ".claude/settings.json and settings.local.json may widen permissions (allow rules, modes, "
                    "added directories, project MCP approvals) and its .env may choose the model endpoint.")
    parser.add_argument("path", nargs="?", default=".", help="the folder (default: the current one)")
    args = parser.parse_args(argv)
    target = Path(args.path).expanduser()
    if not target.is_dir():
        sys.stderr.write(f"mini-claude trust: {clean(str(target))}: not a directory\n")
        return EXIT_USAGE
    folder = workspace_folder(target.absolute())
    store = TrustStore.in_state_dir(state_dir())
    store.record(folder)
    print(f"Trusted {clean(str(folder))} (remembered in {store.path}).")
    if folder.resolve() == user_home().resolve():
        print("Trusting your home directory covers the home directory itself, not the folders inside it.")
    return EXIT_OK


def _setup_logging(debug: bool) -> None:
    from mini_claude.cli.render import setup_logging

    setup_logging(debug=debug)  # URL secrets redacted and server text cleaned in every record
