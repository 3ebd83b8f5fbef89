"""`mini-claude mcp login NAME` / `mcp logout NAME`: the OAuth login of an http/sse server, and forgetting it.

A project server (from the repository's `.mcp.json` or `.claude/settings*.json`) is the repository's choice of
address: `login` sends it nothing — not `initialize`, not OAuth discovery, not a client registration — until the
user has approved it, exactly as a session would require. In a terminal the session's approval question is asked
here (the answer is remembered); without one the login is refused with the way to approve it. `logout` only
forgets stored tokens and contacts nobody.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mini_claude.cli.terminal.render import clean
from mini_claude.errors import ConfigError
from mini_claude.mcp.config import LoadedConfig, ServerConfig

__all__ = ["auth_command"]

EXIT_OK = 0


def warn(text: str) -> None:
    """One line to stderr, through `clean` (it quotes config text)."""
    sys.stderr.write(clean(text) + "\n")


def auth_command(args: argparse.Namespace) -> int:
    """`mcp login` / `mcp logout` (exit 0); raises ConfigError (exit 3) / AuthError like the other subcommands."""
    from mini_claude.session.start import SessionOptions, build_env, load_servers

    cwd = Path.cwd()
    env = build_env(cwd)
    opts = SessionOptions(cwd=cwd, mcp_config=args.mcp_config, strict_mcp_config=args.strict_mcp_config,
                          trust_project_mcp=args.trust_project_mcp)
    config = load_servers(opts, env)
    cfg = config.servers.get(args.name)
    if cfg is None:
        for err in config.errors:
            warn(f"MCP config: {err}")
        known = ", ".join(sorted(config.servers)) or "none"
        raise ConfigError(f"no MCP server named {args.name!r} (configured: {known})")
    if cfg.type not in ("http", "sse"):
        raise ConfigError(f"{args.name!r} is a {cfg.type} server; OAuth login is for http and sse servers")
    from mini_claude.mcp.auth import BrowserAuthorizer, OAuthSettings, TokenStore, login, logout

    store = TokenStore.default(env)
    if args.command == "logout":
        if logout(cfg, env, store=store):
            print(f"Logged out of MCP server {args.name!r} (its stored tokens are gone).")
        else:
            print(f"No stored login for MCP server {args.name!r}.")
        return EXIT_OK
    # a project server is the repository's choice of address: nothing is sent to it (initialize, discovery,
    # registration) before the user has approved it, as a session would require
    asyncio.run(_approve_for_login(config, cfg, cwd=cwd, env=env, trust_all=args.trust_project_mcp))
    settings = OAuthSettings.from_config(cfg)
    import webbrowser

    authorizer = BrowserAuthorizer(settings.callback_port, open_browser=None if args.no_browser else webbrowser.open,
                                   out=sys.stdout)
    asyncio.run(login(cfg, env, authorizer, store=store))
    print(f"Logged in to MCP server {args.name!r}.")
    return EXIT_OK


async def _approve_for_login(config: LoadedConfig, cfg: ServerConfig, *, cwd: Path, env: Mapping[str, str],
                             trust_all: bool) -> None:
    """Raise ConfigError unless `cfg` may be contacted: a user's server may; a project server only once approved
    (settings, `--trust-project-mcp`, an earlier "yes"), or — in a terminal — after the session's approval question
    is asked here and answered yes (the answer is remembered, as the REPL's is)."""
    from mini_claude.paths import state_dir, user_home
    from mini_claude.session.start import resolve_approvals
    from mini_claude.settings import load_settings
    from mini_claude.trust import check_trust

    if not cfg.needs_project_approval():
        return
    home = user_home(env)
    settings = load_settings(cwd=cwd, home=home)
    trusted = check_trust(cwd, home=home, state=state_dir(env)).trusted
    ask = _ask_approval if _isatty(sys.stdin) and _isatty(sys.stderr) else None
    held = await resolve_approvals(LoadedConfig(servers={cfg.name: cfg}), settings, cwd=cwd, env=env,
                                   trust_all=trust_all, ask=ask, trusted=trusted)
    if cfg.name in held:
        raise ConfigError(f"not logging in to MCP server {cfg.name!r}, nothing was sent to it: {held[cfg.name][1]}")


async def _ask_approval(cfg: ServerConfig) -> str:
    """The session's question about a project server, on stderr, answered on stdin: "approve" or "deny"."""
    from mini_claude.cli.questions.approval import server_approval_prompt

    sys.stderr.write("\n".join(server_approval_prompt(cfg, Path.cwd())) + "\n")
    while True:
        sys.stderr.write("Approve it? Logging in connects to it now, and sessions may start it [y/n] ")
        sys.stderr.flush()
        line = await asyncio.to_thread(sys.stdin.readline)
        if not line:  # end of input: no answer is a no
            sys.stderr.write("\n")
            return "deny"
        answer = line.strip().lower()[:1]
        if answer in ("y", "n"):
            return "approve" if answer == "y" else "deny"


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False
