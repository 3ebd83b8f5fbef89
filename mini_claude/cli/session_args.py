"""From the command line's flags to a session: `options_from_args` reads the parsed flags into the session layer's
`SessionOptions`, and `start_session` starts the session the CLI's front ends (`-p` in run.py, the REPL in repl.py)
run, in the process's working folder and environment (session/start.py does the rest)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from mini_claude.session.parts import SessionOptions, SessionParts
from mini_claude.session.start import start_session as start_session_from_options

__all__ = ["options_from_args", "start_session"]


def options_from_args(args: argparse.Namespace, cwd: Path) -> SessionOptions:
    mode = args.permission_mode
    if args.yolo:
        mode = "bypassPermissions"
    elif args.plan:
        mode = "plan"
    return SessionOptions(
        cwd=cwd, model=args.model, mode=mode, max_turns=args.max_turns, mcp_config=list(args.mcp_config),
        strict_mcp_config=args.strict_mcp_config, trust_project_mcp=args.trust_project_mcp,
        allowed_tools=list(args.allowed_tools), disallowed_tools=list(args.disallowed_tools),
        trust=bool(getattr(args, "trust", False)), add_dirs=[Path(d) for d in getattr(args, "add_dir", None) or ()],
        system_prompt=getattr(args, "system_prompt", None), append_system_prompt=getattr(args, "append_system_prompt", None),
        settings=getattr(args, "settings", None), effort=getattr(args, "effort", None),
        setting_sources=getattr(args, "setting_sources", None), tools=getattr(args, "tools", None),
        output_schema=getattr(args, "json_schema", None),
    )


async def start_session(args: argparse.Namespace, ui: Any, *, in_process: dict[str, Any] | None = None,
                        apps: bool = False, **kwargs: Any) -> SessionParts:
    """The session of this command line (session.start.start_session's keyword arguments pass through);
    `in_process`: MCP servers living elsewhere in reach of this process (the driving SDK's), by name; `apps`: the
    front end can show MCP Apps views (the REPL; never -p, whose process ends with its turn)."""
    opts = options_from_args(args, Path.cwd())
    opts.apps = apps
    opts.in_process = dict(in_process or {})
    opts.hooks_from_code = in_process is not None  # the driving SDK registers its hook callbacks at `initialize`
    return await start_session_from_options(opts, ui, **kwargs)
