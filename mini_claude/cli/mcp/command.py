"""`mini-claude mcp …`: inspect, edit and exercise the configured MCP servers.

    mcp list [--json]                      status of every server (connects to all in parallel)
    mcp get NAME [--json]                  merged config (secrets masked), source, status, tools
    mcp tools NAME [--json]                the server's tools
    mcp call NAME TOOL [JSON_ARGS] [--json]   call one tool; exit 0 ok, 1 tool error, 2 unreachable, 3 usage/config
    mcp add [-s SCOPE] [-t TYPE] [-e K=V] [-H "K: V"] NAME -- CMD [ARGS…]   (http/sse: NAME URL)
    mcp add-json [-s SCOPE] NAME JSON
    mcp remove [-s SCOPE] NAME             (these three write the config files: cli/mcp/edit.py)
    mcp login NAME [--no-browser]          OAuth login for an http/sse server (browser + loopback redirect); a
                                           project server must be approved first (asked here in a terminal)
    mcp logout NAME                        forget the server's stored OAuth tokens
    mcp accept NAME [--yes]                show a server's changed tool definitions (withheld) and pin them
    mcp resources NAME [--json]            the server's resources and resource templates
    mcp read NAME URI [--json]             one resource's contents
    mcp enable NAME | mcp disable NAME     switch a server on / off for this project (Claude Code's list); enable
                                           says what still holds a server back (exit 1) rather than "Enabled"
    mcp enable|disable NAME -s SCOPE      switch a server in that settings file (cli/mcp/toggles.py)
    mcp enable|disable SERVER/TOOL [-s SCOPE]   switch one tool (SERVER/*: all its tools) on / off in the
                                           settings file's `disabledMcpTools` (cli/mcp/toggles.py; default local)
    mcp reset-project-choices              forget approvals and rejections of project servers made here
    mcp doctor [NAME] [--json]             per server: what is wrong and how to fix it (cli/mcp/doctor.py)
    mcp serve [--permission-mode MODE]     the built-in tools as an MCP server on stdio, behind this folder's
              [--port N [--host H]]        permission gate (cli/mcp/serve.py); --port: Streamable HTTP instead
Every connecting command takes --mcp-trace FILE: each JSON-RPC message both ways, one JSON line, secrets redacted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any

import mini_claude.mcp.protocol as protocol
from mini_claude.cli.mcp.show import (
    WithheldTools,
    pins_for,
    print_get,
    print_list,
    print_tools,
    with_pin_changes,
)
from mini_claude.cli.terminal.arg_types import seconds
from mini_claude.cli.terminal.render import clean, json_text, setup_logging
from mini_claude.errors import ConfigError, JsonRpcError, McpError, MiniClaudeError, ProtocolError

if TYPE_CHECKING:
    from mini_claude.mcp.manager import McpManager, ServerState

__all__ = ["EXIT_CONFIG", "EXIT_TOOL_ERROR", "EXIT_UNREACHABLE", "build_parser", "main"]

EXIT_OK = 0
EXIT_TOOL_ERROR = 1
EXIT_UNREACHABLE = 2
EXIT_CONFIG = 3
EXIT_MISSING_CONFIG = 2  # a --mcp-config file that does not exist, as in Claude Code


class _UsageError(Exception):
    pass


def _warn(text: str) -> None:
    """One line to stderr, through `clean` (errors and warnings quote server and config text)."""
    sys.stderr.write(clean(text) + "\n")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # exit 3 (bad usage), not argparse's 2
        raise _UsageError(f"{self.prog}: {message}")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="mini-claude mcp", description="Manage and exercise MCP servers.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    def common(p: argparse.ArgumentParser, *, json_flag: bool = True) -> None:
        if json_flag:
            p.add_argument("--json", action="store_true", help="machine-readable output")
        p.add_argument("--mcp-config", action="append", default=[], metavar="FILE_OR_JSON")
        p.add_argument("--strict-mcp-config", action="store_true")
        p.add_argument("--trust-project-mcp", action="store_true",
                       help="start project-level servers (.mcp.json) without approval")
        p.add_argument("--mcp-trace", metavar="FILE",
                       help="append every JSON-RPC message, both ways, to FILE (one JSON line each, secrets redacted)")

    common(sub.add_parser("list", help="status of every server"))
    p = sub.add_parser("get", help="one server's config, status and tools")
    p.add_argument("name")
    common(p)
    p = sub.add_parser("tools", help="list a server's tools")
    p.add_argument("name")
    common(p)
    p = sub.add_parser("call", help="call one tool and print its result")
    p.add_argument("name")
    p.add_argument("tool")
    p.add_argument("arguments", nargs="?", default="{}", help="JSON object of arguments")
    common(p)
    p = sub.add_parser("add", help="add a server: NAME -- CMD ARGS… (stdio) or NAME URL (http/sse)")
    _add_arguments(p)
    p = sub.add_parser("add-json", help="add a server from a JSON entry")
    p.add_argument("-s", "--scope", choices=["local", "project", "user"], default="local")
    p.add_argument("name")
    p.add_argument("json")
    p = sub.add_parser("remove", help="remove a server")
    p.add_argument("-s", "--scope", choices=["local", "project", "user"])
    p.add_argument("name")
    p = sub.add_parser("login", help="log in to an http/sse server that uses OAuth")
    p.add_argument("name")
    p.add_argument("--no-browser", action="store_true", help="only print the login URL")
    common(p, json_flag=False)
    p = sub.add_parser("accept", help="show a server's changed tool definitions and accept them")
    p.add_argument("name")
    p.add_argument("--yes", action="store_true", help="accept without asking (needed without a terminal)")
    common(p, json_flag=False)
    p = sub.add_parser("resources", help="list a server's resources and resource templates")
    p.add_argument("name")
    common(p)
    p = sub.add_parser("read", help="print one resource of a server")
    p.add_argument("name")
    p.add_argument("uri")
    common(p)
    for command, what in (("enable", "switch a server on for this project"),
                          ("disable", "switch a server off for this project")):
        p = sub.add_parser(command, help=what + "; SERVER/TOOL switches one tool (SERVER/*: all of them)")
        p.add_argument("name")
        p.add_argument("-s", "--scope", choices=["local", "project", "user"],
                       help="the settings file written (a tool's default: local; a server without -s: "
                            "~/.claude.json's list for this project)")
    sub.add_parser("reset-project-choices",
                   help="forget your approvals and rejections of project servers (.mcp.json) in this folder")
    p = sub.add_parser("doctor", help="per server: what is wrong and how to fix it")
    p.add_argument("name", nargs="?", help="one server (default: every configured server)")
    p.add_argument("--call", nargs="+", metavar=("TOOL", "JSON_ARGS"),
                   help="also call TOOL (with JSON_ARGS) and diagnose how that goes (it runs the tool!)")
    p.add_argument("--timeout", type=seconds, default=10.0, metavar="SECONDS",
                   help="how long each probe may take (default 10)")
    common(p)
    p = sub.add_parser("serve", help="serve the built-in tools as an MCP server (behind the gate): over stdio, or "
                                      "Streamable HTTP with --port")
    p.add_argument("--permission-mode", dest="permission_mode", default=None,
                   help="default, acceptEdits or plan (bypassPermissions is not honoured here)")
    p.add_argument("--port", type=int, default=None,
                   help="serve Streamable HTTP on this port (0: any free port; the URL is printed on stderr)")
    p.add_argument("--host", default=None,
                   help="the address to bind with --port (default 127.0.0.1; anything else is reachable from other "
                        "machines)")
    p = sub.add_parser("logout", help="forget a server's stored OAuth tokens")
    p.add_argument("name")
    common(p, json_flag=False)
    return parser


def _add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("-s", "--scope", choices=["local", "project", "user"], default="local")
    p.add_argument("-t", "--transport", choices=["stdio", "http", "sse"], default=None,
                   help="default: http when the target is one http(s):// URL, else stdio")
    p.add_argument("-e", "--env", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("-H", "--header", action="append", default=[], metavar="'Key: Value'")
    p.add_argument("name")
    p.add_argument("target", nargs="*", help="CMD [ARGS…] (after --) or URL")


def _parse_add(argv: list[str]) -> argparse.Namespace:
    """`add`'s flags may come before or after NAME (`mcp add NAME -e K=V -- CMD ARGS…`, as Claude Code
    accepts); everything after the first `--` is the server's command line, verbatim."""
    parser = _Parser(prog="mini-claude mcp add")
    _add_arguments(parser)
    head, tail = argv, []
    if "--" in argv:
        cut = argv.index("--")
        head, tail = argv[:cut], argv[cut + 1:]
    try:
        args = parser.parse_intermixed_args(head)
    except _UsageError as exc:
        if tail or "--" in argv:
            raise
        raise _UsageError(f"{exc} (a server command with options goes after --: "
                          f"mcp add NAME [FLAGS] -- CMD ARGS…)") from None
    args.command = "add"
    args.target = [*args.target, *tail]
    return args


def main(argv: list[str]) -> int:
    debug = "--debug" in argv[:argv.index("--") if "--" in argv else None]
    if debug:  # accepted anywhere before `--`, as in the rest of mini-claude
        cut = argv.index("--") if "--" in argv else len(argv)
        argv = [a for a in argv[:cut] if a != "--debug"] + argv[cut:]
    setup_logging(debug=debug)
    try:
        if argv and argv[0] == "add" and not any(a in ("-h", "--help") for a in argv[1:argv.index("--")
                                                                                  if "--" in argv else None]):
            args = _parse_add(argv[1:])
        else:
            args = build_parser().parse_args(argv)
    except _UsageError as exc:
        _warn(f"{exc}")
        return EXIT_CONFIG
    except SystemExit as exc:  # --help
        return int(exc.code or 0)
    missing = _missing_config_files(args)
    if missing:
        _warn(f"mini-claude mcp: --mcp-config {missing}: no such file")
        return EXIT_MISSING_CONFIG
    try:
        code = _dispatch(args)
        sys.stdout.flush()  # here, where a reader that went away can be told from a real error
        return code
    except BrokenPipeError:  # `mcp get fs | head -1`: the reader is gone, which is not our error
        _quiet_stdout()
        return EXIT_OK


def _dispatch(args: argparse.Namespace) -> int:
    try:
        if args.command in ("add", "add-json", "remove"):
            from mini_claude.cli.mcp.edit import edit_command

            return edit_command(args)
        if args.command in ("login", "logout"):
            from mini_claude.cli.mcp.login import auth_command

            return auth_command(args)
        if args.command in ("enable", "disable") and "/" in args.name and not _a_server(args.name):
            from mini_claude.cli.mcp.toggles import switch_tool
            from mini_claude.paths import user_home

            return switch_tool(args.name, enabled=args.command == "enable", scope=args.scope, cwd=Path.cwd(),
                               home=user_home())
        if args.command in ("enable", "disable") and args.scope:
            from mini_claude.cli.mcp.toggles import switch_server
            from mini_claude.paths import user_home

            return switch_server(args.name, enabled=args.command == "enable", scope=args.scope, cwd=Path.cwd(),
                                 home=user_home(), env=dict(os.environ))
        if args.command in ("enable", "disable"):
            from mini_claude.cli.mcp.resources import switch

            return asyncio.run(switch(args.name, enabled=args.command == "enable"))
        if args.command == "reset-project-choices":
            from mini_claude.cli.mcp.resources import reset_project_choices

            return reset_project_choices()
        if args.command == "serve":
            from mini_claude.cli.mcp.serve import serve_command

            return serve_command(args.permission_mode, port=args.port, host=args.host)
        if args.command == "doctor":
            from mini_claude.cli.mcp.doctor import doctor_command

            return _traced(args, lambda: doctor_command(args))
        return _traced(args, lambda: _inspect(args))
    except ConfigError as exc:
        _warn(f"mini-claude mcp: {exc}")
        return EXIT_CONFIG
    except McpError as exc:
        _warn(f"mini-claude mcp: {exc}")
        return EXIT_UNREACHABLE
    except MiniClaudeError as exc:
        _warn(f"mini-claude mcp: {exc}")
        return EXIT_CONFIG


def _missing_config_files(args: argparse.Namespace) -> str | None:
    """The first --mcp-config value that names a file that does not exist (inline JSON is not a file)."""
    for value in getattr(args, "mcp_config", None) or ():
        if value.lstrip().startswith("{"):
            continue
        if not Path(value).expanduser().exists():
            return str(value)
    return None


def _quiet_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's last flush at exit cannot raise BrokenPipeError again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


def _traced(args: argparse.Namespace, run: Callable[[], Coroutine[Any, Any, int]]) -> int:
    """Run the command's coroutine, every JSON-RPC message written to `--mcp-trace FILE` when given."""
    from mini_claude.mcp.trace import tracing

    path = getattr(args, "mcp_trace", None)
    if path is None:
        return asyncio.run(run())
    with tracing(Path(path)):
        return asyncio.run(run())


# ---- connecting --------------------------------------------------------------------------------------------------

async def _inspect(args: argparse.Namespace) -> int:
    from mini_claude.cli.mcp.world import open_world
    from mini_claude.mcp.manager import ServerStatus

    world = await open_world(args, only=None if args.command == "list" else args.name,
                             pins=pins_for(args.command, os.environ, Path.cwd()))
    manager = world.manager
    withheld = WithheldTools()
    logging.getLogger(protocol.__name__).addFilter(withheld)
    manager.start()
    try:
        await manager.wait_started()
        if args.command == "list":
            print_list(manager, args.json, withheld.found)
            return EXIT_OK
        state = manager.states[args.name]
        if args.command == "get":
            print_get(state, args.json, with_pin_changes(withheld.found, manager).get(state.name, {}), manager)
            return EXIT_OK
        if state.status is not ServerStatus.READY:
            _warn(f"mini-claude mcp: {args.name}: {state.status.value}: {state.error}")
            return EXIT_UNREACHABLE
        if args.command == "accept":
            from mini_claude.cli.questions.pin_review import accept_command

            return accept_command(manager, args.name, yes=args.yes, stdin=sys.stdin, out=sys.stdout, err=sys.stderr)
        if args.command == "tools":
            print_tools(manager, state, args.json, with_pin_changes(withheld.found, manager).get(state.name, {}))
            return EXIT_OK
        if args.command in ("resources", "read"):
            from mini_claude.cli.mcp.resources import print_resource, print_resources

            if args.command == "resources":
                return await print_resources(manager, state.name, args.json)
            return await print_resource(manager, state.name, args.uri, args.json)
        return await _call(manager, state, args)
    finally:
        await manager.aclose()
        logging.getLogger(protocol.__name__).removeFilter(withheld)


async def _call(manager: McpManager, state: ServerState, args: argparse.Namespace) -> int:
    from mini_claude.mcp.content import convert_result
    from mini_claude.paths import state_dir
    from mini_claude.spill import session_spill_dir

    try:
        arguments = json.loads(args.arguments)
    except json.JSONDecodeError as exc:
        _warn(f"mini-claude mcp: JSON_ARGS is not valid JSON: {exc.msg} at column {exc.colno}")
        return EXIT_CONFIG
    if not isinstance(arguments, dict):
        _warn("mini-claude mcp: JSON_ARGS must be a JSON object")
        return EXIT_CONFIG
    if args.tool not in {t.name for t in state.tools}:
        withheld = {change.name for change in state.withheld}
        why = (f"its definition changed since accepted: withheld (mini-claude mcp accept {state.name})"
               if args.tool in withheld else f"see `mini-claude mcp tools {state.name}`")
        _warn(f"mini-claude mcp: {state.name} has no tool {args.tool!r} ({why})")
        return EXIT_CONFIG
    try:
        result = await manager.call_tool(state.name, args.tool, arguments)
    except (JsonRpcError, ProtocolError) as exc:  # the server answered (an error, or a reply we refused)
        _warn(f"mini-claude mcp: {exc}")
        return EXIT_TOOL_ERROR
    if args.json:
        print(json_text(result.raw, indent=2))
    else:
        converted = convert_result(result, spill_dir=session_spill_dir(state_dir(), "cli"), stem=args.tool)
        for block in converted.blocks:
            if block.get("type") == "text":
                print(clean(block["text"]))
            else:
                print(clean(f"[{block.get('type')} block]"))
        for warning in converted.warnings:
            _warn(f"warning: {warning}")
    return EXIT_TOOL_ERROR if result.is_error else EXIT_OK


def _a_server(name: str) -> bool:
    """Whether `name` is a configured server's (a server's name may hold a `/`: `evil/x` is then that server, not
    tool `x` of a server `evil`)."""
    from mini_claude.mcp.config import load_mcp_config
    from mini_claude.paths import user_home

    try:
        return name in load_mcp_config(cwd=Path.cwd(), home=user_home(), env=dict(os.environ)).servers
    except ConfigError:
        return False
