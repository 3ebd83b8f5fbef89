"""`mini-claude` entry point: parses flags, dispatches subcommands, and owns exit codes.

    mini-claude                      interactive REPL
    mini-claude -p "prompt"          one-shot: the final answer on stdout, everything else on stderr
    mini-claude demo                 offline scripted demo (bundled mock model + demo MCP server)
    mini-claude mock-model ...       serve the offline mock model over HTTP
    mini-claude mcp ...              list / get / add / remove / tools / call MCP servers
    mini-claude trust [PATH]         trust a folder (its git root): its project settings and .env endpoints apply
    mini-claude doctor [--json]      check the install, keys, settings, memory and MCP files, servers (exit 1: a problem)

List options take words as Claude Code's parser (commander) does: `--allowedTools Edit Read`, `--disallowedTools`,
`--mcp-config a.json b.json` and `--add-dir A B` take every following word up to the next option (they may also
repeat), so a prompt after them goes after `--`, as there; but where Claude Code would read a last word that cannot
be the option's value (`"fix the bug"` after `--mcp-config a.json`) as one and fail, it is the prompt
(`_take_prompt_back`). A missing `--mcp-config` file or an unusable `--settings` is bad usage (exit 2) before
anything starts.

Heavy modules are imported only on the paths that need them, so `--version` is instant.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import signal
import sys
from collections.abc import Sequence
from typing import Any

from mini_claude import __version__
from mini_claude.cli.sdk_control.flags import add_sdk_flags, check_sdk_flags
from mini_claude.cli.terminal.arg_types import positive_int
from mini_claude.cli.terminal.exit_codes import EXIT_ERROR, EXIT_INTERRUPTED
from mini_claude.models.catalog import ALIASES, DEFAULT_MODEL, EFFORT_LEVELS, OPUSPLAN
from mini_claude.secrets import protect_own_memory, scrub_own_environ

__all__ = ["build_parser", "main"]



def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="mini-claude",
        description="A terminal coding agent with a first-class MCP client.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Subcommands: `mini-claude demo`, `mini-claude mock-model --help`, `mini-claude mcp --help`, "
               "`mini-claude trust [PATH]`, `mini-claude doctor --help`.\n\n"
               "Exit codes of -p (as Claude Code's): 0 answered, a denied tool call included; 1 an error (the model "
               "API, a config\nproblem), stopped at --max-turns, or the answer cut at the output token limit; 2 bad "
               "usage; 130 interrupted.\nWith --detailed-exit-codes: 3 stopped at --max-turns; 4 the answer was cut "
               "at the output token limit;\n5 answered, but a tool call was denied on the way.",
    )
    parser.add_argument("prompt", nargs="?", help="a prompt to start with (with -p: answer it and exit)")
    parser.add_argument("-p", "--print", dest="print_mode", action="store_true",
                        help="non-interactive: answer PROMPT (or stdin), print only the final answer, exit")
    parser.add_argument("--model", help=f"model name or alias: {', '.join(f'`{a}` ({i})' for a, i in ALIASES.items())}"
                                        f", `{OPUSPLAN}` (opus in plan mode, sonnet otherwise) or a full id "
                                        "(ANTHROPIC_DEFAULT_OPUS_MODEL etc. override an alias; an id this version "
                                        "does not know is sent with a warning); `anthropic:NAME` or `openai:NAME` "
                                        "also picks the backend (default: $ANTHROPIC_MODEL, the settings' model, "
                                        f"$MINI_CLAUDE_MODEL, {DEFAULT_MODEL}). OPENAI_BASE_URL alone selects a "
                                        "keyless OpenAI-compatible server")
    parser.add_argument("--effort", choices=EFFORT_LEVELS, default=None,
                        help="how hard the model thinks, for models that take an effort level (default: "
                             "$CLAUDE_CODE_EFFORT_LEVEL, the settings' effortLevel, the model's own)")
    parser.add_argument("--settings", metavar="FILE_OR_JSON",
                        help="more settings: a settings file or a JSON string, over the settings files (as in Claude "
                             "Code; e.g. env, model, permissions, apiKeyHelper)")
    parser.add_argument("--yolo", "--dangerously-skip-permissions", dest="yolo", action="store_true",
                        help="allow every tool call without asking (deny rules still apply)")
    parser.add_argument("--plan", action="store_true", help="plan mode: read-only tools only")
    parser.add_argument("--permission-mode", choices=["default", "acceptEdits", "plan", "bypassPermissions"],
                        help="permission mode")
    parser.add_argument("--allowedTools", "--allowed-tools", dest="allowed_tools", nargs="+", action="extend",
                        default=[], metavar="RULE", help='allow rules, e.g. --allowedTools Edit "Bash(git status:*)" '
                                                         '(space- or comma-separated; a prompt after them needs --)')
    parser.add_argument("--disallowedTools", "--disallowed-tools", dest="disallowed_tools", nargs="+",
                        action="extend", default=[], metavar="RULE", help="deny rules (as --allowedTools)")
    parser.add_argument("--max-turns", type=positive_int, default=50, help="model turns per prompt (default 50)")
    parser.add_argument("--mcp-config", nargs="+", action="extend", default=[], metavar="FILE_OR_JSON",
                        help="extra MCP servers: files or inline JSON strings (a prompt after them needs --)")
    parser.add_argument("--strict-mcp-config", action="store_true", help="use only the --mcp-config servers")
    parser.add_argument("--mcp-trace", metavar="FILE",
                        help="append every MCP JSON-RPC message, both ways, to FILE (one JSON line each, timestamped, "
                             "secrets redacted)")
    parser.add_argument("--trust-project-mcp", action="store_true",
                        help="start project-level MCP servers (.mcp.json) without asking")
    parser.add_argument("--add-dir", dest="add_dir", nargs="+", action="extend", default=[], metavar="DIR",
                        help="more folders to work in (offered to MCP servers as roots; a prompt after them needs --)")
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
    parser.add_argument("--detailed-exit-codes", action="store_true",
                        help="-p: tell the endings apart by exit code: 3 stopped at --max-turns, 4 the answer was cut "
                             "at the output token limit, 5 answered but a tool call was denied (default: Claude "
                             "Code's 0 answered / 1 error)")
    parser.add_argument("--max-budget-usd", type=float, metavar="DOLLARS",
                        help="-p: stop before a model request once the run's estimated cost reaches this")
    parser.add_argument("--input-format", choices=["text", "stream-json"], default="text",
                        help="-p input: the prompt (text), or user messages as JSON lines on stdin, each a turn "
                             "(stream-json; needs --output-format stream-json)")
    parser.add_argument("--system-prompt", metavar="TEXT", help="replace the built-in system prompt")
    parser.add_argument("--append-system-prompt", metavar="TEXT", help="add TEXT to the end of the system prompt")
    parser.add_argument("--system-prompt-file", metavar="FILE", help="replace the built-in system prompt with FILE's text")
    add_sdk_flags(parser)
    parser.add_argument("--verbose", action="store_true", help="accepted for Claude Code compatibility")
    parser.add_argument("--debug", action="store_true", help="show tracebacks and debug logs on stderr")
    parser.add_argument("--version", action="version", version=f"mini-claude {__version__}")
    return parser


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
    scrub_own_environ()  # /proc/<this pid>/environ no longer shows the model key to the commands it runs
    protect_own_memory()  # nor /proc/<this pid>/mem, to a process of the same user
    args_list = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args_list or "--debug-to-stderr" in args_list
    try:
        return _dispatch(args_list)
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        return EXIT_INTERRUPTED
    except asyncio.CancelledError:
        from mini_claude.cli.terminate import terminated_by

        sig = terminated_by()
        if sig is None:
            raise
        sys.stderr.write(f"mini-claude: stopped by {signal.Signals(sig).name}\n")
        return 128 + sig
    except Exception as exc:
        from mini_claude.cli.terminal.render import clean
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
        from mini_claude.models.mock_cli import main as mock_main

        return mock_main(argv[1:])
    argv = _subcommand_first(argv)
    if argv and argv[0] == "mcp":
        from mini_claude.cli.mcp.command import main as mcp_main

        return mcp_main(argv[1:])
    if argv and argv[0] == "demo":
        from mini_claude.cli.demo import main as demo_main

        return demo_main(argv[1:])
    if argv and argv[0] == "trust":
        return _trust_main(argv[1:])
    if argv and argv[0] == "doctor":
        from mini_claude.cli.doctor.report import main as doctor_main

        return doctor_main(argv[1:])
    args = build_parser().parse_args(argv)
    _setup_logging(args.debug or args.debug_to_stderr)
    if args.input_format == "stream-json":  # as Claude Code: stream-json input is print mode (the SDK omits -p)
        args.print_mode = True
    problem = _check_flags(args, argv)
    if problem is not None:
        from mini_claude.cli.terminal.exit_codes import EXIT_USAGE
        from mini_claude.cli.terminal.render import clean

        sys.stderr.write(f"mini-claude: {clean(problem)}\n")
        return EXIT_USAGE
    from mini_claude.net.tls import skip_httpx_cli

    skip_httpx_cli()
    # The session's imports allocate some 100k objects and free almost none, so a collection meanwhile finds
    # nothing; afterwards they live as long as the process, so none needs walking again (frozen). Both were
    # pauses on the way to the first request: ~10 ms during the imports, a 15 ms gen-2 pass as a fleet came up.
    collecting = gc.isenabled()
    gc.disable()
    try:
        from mini_claude.cli.run import run_interactive, run_print
    finally:
        gc.freeze()
        if collecting:
            gc.enable()

    if args.mcp_trace is not None:
        from pathlib import Path

        from mini_claude.mcp.trace import tracing

        with tracing(Path(args.mcp_trace)):
            return run_print(args) if args.print_mode else run_interactive(args)
    if args.print_mode:
        return run_print(args)
    return run_interactive(args)


_LIST_OPTIONS = {"mcp_config": "--mcp-config", "allowed_tools": "--allowedTools",
                 "disallowed_tools": "--disallowedTools", "add_dir": "--add-dir"}
_PROMPT_HINT = ("a list option takes the words after it up to the next option: put `--` before the prompt, or the "
                "prompt first")
# Claude Code's tool names (and ours) a rule may start with; an MCP rule starts with `mcp__`
_RULE_TOOLS = frozenset({"Bash", "Read", "Edit", "Write", "MultiEdit", "Glob", "Grep", "LS", "NotebookEdit",
                         "NotebookRead", "WebFetch", "WebSearch", "Task", "Agent", "TodoWrite", "Skill", "BashOutput",
                         "KillShell", "KillBash", "SlashCommand", "ExitPlanMode", "ReadMcpResourceTool",
                         "ListMcpResourcesTool", "ToolSearch", "TaskOutput", "TaskStop",
                         "read_file", "write_file", "edit_file", "glob", "grep", "bash", "read_mcp_resource",
                         "list_mcp_resources", "tool_search"})


def _take_prompt_back(args: argparse.Namespace, argv: list[str]) -> None:
    """Where the prompt starts. Like Claude Code, a list option takes every word up to the next option; unlike it,
    when no prompt was given and the last word cannot be a value of that option (not a rule, not an MCP config or
    a `.json` name, not a folder), that word is the prompt: `-p --mcp-config a.json b.json "fix the bug"` works
    (Claude Code reads the prompt as a config file and fails)."""
    from pathlib import Path

    if args.prompt is not None or not argv or "--" in argv or argv[-1].startswith("-"):
        return
    last = argv[-1]
    for dest in _LIST_OPTIONS:
        values: list[str] = getattr(args, dest)
        if not values or values[-1] != last:
            continue
        if dest == "mcp_config":
            value = last.lstrip().startswith("{") or last.endswith(".json") or Path(last).expanduser().is_file()
        elif dest == "add_dir":
            value = Path(last).expanduser().is_dir()
        else:
            value = all(_looks_like_rule(piece) for piece in _split_rules(last))
        if not value:
            values.pop()
            args.prompt = last
        return


def _split_rules(text: str) -> list[str]:
    from mini_claude.permissions.rules import split_rule_list

    return split_rule_list([text])


def _looks_like_rule(piece: str) -> bool:
    tool = piece.split("(", 1)[0]
    return tool in _RULE_TOOLS or tool.startswith("mcp__") or "*" in tool


def _check_flags(args: argparse.Namespace, argv: list[str]) -> str | None:
    """Bad usage found before anything starts: a missing --mcp-config file (with a hint when it may have been
    meant as the prompt), an unusable --settings. First the prompt is taken back from a list option's last word
    when that cannot be the option's value."""
    from pathlib import Path

    _take_prompt_back(args, argv)
    last = argv[-1] if argv and "--" not in argv else None
    swallowed = next((flag for dest, flag in _LIST_OPTIONS.items() if last is not None and not last.startswith("-")
                      and args.prompt is None and getattr(args, dest) and getattr(args, dest)[-1] == last), None)
    for value in args.mcp_config:
        if not value.lstrip().startswith("{") and not Path(value).expanduser().exists():
            hint = f" ({_PROMPT_HINT})" if swallowed == "--mcp-config" and value == last else ""
            return f"--mcp-config {value}: no such file{hint}"
    problem = check_sdk_flags(args)
    if problem is not None:
        return problem
    if args.settings is not None:
        from mini_claude.errors import ConfigError
        from mini_claude.settings import read_flag_settings

        try:
            read_flag_settings(args.settings, Path.cwd())
        except ConfigError as exc:
            return str(exc)
    return None


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

    from mini_claude.cli.terminal.exit_codes import EXIT_OK, EXIT_USAGE
    from mini_claude.cli.terminal.render import clean
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
    from mini_claude.cli.terminal.render import setup_logging

    setup_logging(debug=debug)  # URL secrets redacted and server text cleaned in every record
