"""`mini-claude mcp add | add-json | remove`: a server entry written to, or removed from, a config file.

The entry comes from `add`'s flags (`-t`, `-e K=V`, `-H "K: V"`, the command line after `--` or a URL) or from
`add-json`'s JSON; it is validated (config_entry.py) before `config_edit.py` writes it. The flags are parsed in
command.py, which dispatches here.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from mini_claude.cli.terminal.render import clean
from mini_claude.errors import ConfigError

__all__ = ["edit_command"]

EXIT_OK = 0
EXIT_CONFIG = 3  # command.py's: bad usage or config


def _warn(text: str) -> None:
    """One line to stderr, through `clean` (errors quote config text)."""
    sys.stderr.write(clean(text) + "\n")


def edit_command(args: argparse.Namespace) -> int:
    """`mcp add`, `mcp add-json`, `mcp remove`: the exit code (printing what changed, or what is wrong)."""
    from mini_claude.mcp.config_edit import add_server, remove_server
    from mini_claude.mcp.config_entry import validate_entry
    from mini_claude.paths import user_home

    cwd, home = Path.cwd(), user_home()
    if args.command == "remove":
        paths = remove_server(args.name, scope=args.scope, cwd=cwd, home=home)
        for path in paths:
            print(f"Removed MCP server {args.name!r} from {path}")
        return EXIT_OK
    if args.command == "add-json":
        try:
            entry = json.loads(args.json)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"invalid JSON: {exc.msg} at column {exc.colno}", file="add-json") from exc
        if not isinstance(entry, dict):
            raise ConfigError("the server entry must be a JSON object", file="add-json")
    else:
        entry = _entry_from_flags(args)
    errors = validate_entry(args.name, entry)
    if errors:
        for err in errors:
            _warn(f"mini-claude mcp: {err}")
        return EXIT_CONFIG
    path = add_server(args.name, entry, scope=args.scope, cwd=cwd, home=home)
    print(f"Added {entry.get('type', 'stdio')} MCP server {args.name!r} to {args.scope} config ({path})")
    return EXIT_OK


def _entry_from_flags(args: argparse.Namespace) -> dict[str, Any]:
    target = list(args.target)
    if not target:
        raise ConfigError("missing the server's command (stdio: NAME -- CMD ARGS…) or URL (http/sse: NAME URL)",
                          file="mcp add")
    entry: dict[str, Any] = {}
    if args.transport is None:
        args.transport = "http" if len(target) == 1 and _is_url(target[0]) else "stdio"
        if args.transport == "http":
            print("The target is a URL: adding it as an http (Streamable HTTP) server; -t sse for a legacy SSE one")
    if args.transport == "stdio":
        entry = {"type": "stdio", "command": target[0], "args": target[1:]}
    else:
        if len(target) != 1:
            raise ConfigError(f"{args.transport} servers take one URL", file="mcp add")
        entry = {"type": args.transport, "url": target[0]}
    if args.env:
        env = {}
        for item in args.env:
            key, sep, value = item.partition("=")
            if not sep or not key:
                raise ConfigError(f"-e expects KEY=VALUE, got {item.split('=')[0]!r}", file="mcp add")
            env[key] = value
        entry["env"] = env
    if args.header:
        headers = {}
        for item in args.header:
            key, sep, value = item.partition(":")
            if not sep or not key.strip():
                raise ConfigError("-H expects 'Key: Value'", file="mcp add")
            headers[key.strip()] = value.strip()
        entry["headers"] = headers
    return entry


def _is_url(text: str) -> bool:
    return text.lower().startswith(("http://", "https://"))
