"""The MCP world of the `mini-claude mcp …` commands: the same servers, trust, approvals, pins and host
capabilities a session started in this folder would have, so the commands show and call what the agent would.

`open_world` assembles it the way `session.start_session` does, without asking anyone: config discovery
(`load_servers`, the project's `.mcp.json` found from a subfolder too), the folder's trust (`check_trust`: a
trusted folder's approval keys count, as in a session), project-server approvals (`resolve_approvals`, never
asking), the pin store of this project, and an `McpHost` that declares roots, sampling and elicitation (served by
the non-interactive `PrintHostUI`: a question is declined with a line on stderr).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

from mini_claude.cli.questions.host_ui import PrintHostUI
from mini_claude.cli.terminal.render import TerminalUI, clean
from mini_claude.mcp.config import LoadedConfig
from mini_claude.mcp.host import McpHost
from mini_claude.mcp.manager import McpManager, ServerStatus
from mini_claude.mcp.negotiation import ERAS_FILE_NAME, EraMemory
from mini_claude.mcp.pinning import PinStore
from mini_claude.paths import state_dir, user_home
from mini_claude.session.start import (
    SessionOptions,
    additional_dirs,
    build_env,
    load_servers,
    resolve_approvals,
)
from mini_claude.settings import Settings, load_settings, session_env
from mini_claude.settings_trust import without_project_widening
from mini_claude.trust import check_trust

__all__ = ["McpWorld", "ProjectView", "host_for", "open_world", "project_view"]


@dataclass
class McpWorld:
    manager: McpManager
    host: McpHost
    config: LoadedConfig
    settings: Settings
    trusted: bool


def _warn(text: str) -> None:
    sys.stderr.write(clean(text) + "\n")


@dataclass
class ProjectView:
    """What a session in this folder would start from: its environment, settings (as trust filters them), trust,
    servers, and which of them are held back (not approved, denied, switched off) with why."""

    cwd: Path
    env: dict[str, str]
    settings: Settings
    trusted: bool
    config: LoadedConfig
    held: dict[str, tuple[ServerStatus, str]]


async def project_view(*, mcp_config: list[str], strict: bool, trust_project_mcp: bool,
                       warn: bool = True) -> ProjectView:
    """The project as a session here would see it, asking nobody; config problems warned about on stderr."""
    cwd = Path.cwd()
    env = build_env(cwd)
    home, state = user_home(env), state_dir(env)
    opts = SessionOptions(cwd=cwd, mcp_config=mcp_config, strict_mcp_config=strict,
                          trust_project_mcp=trust_project_mcp)
    settings = load_settings(cwd=cwd, home=home)
    trusted = check_trust(cwd, home=home, state=state).trusted
    if not trusted:
        settings, _ignored = without_project_widening(settings)
    env = session_env(env, settings)  # servers get the settings' env, as in a session
    config = load_servers(opts, env)
    if warn:
        for err in config.errors:
            _warn(f"MCP config: {err}")
        for warning in config.warnings:
            _warn(f"MCP config: {warning}")
    held = await resolve_approvals(config, settings, cwd=cwd, env=env, trust_all=trust_project_mcp, ask=None,
                                   trusted=trusted)
    return ProjectView(cwd=cwd, env=env, settings=settings, trusted=trusted, config=config, held=held)


def host_for(view: ProjectView) -> McpHost:
    """The host a session here would have: the same roots, and sampling, elicitation and logging served as in
    `-p` (nobody to ask: declined with a line on stderr)."""
    roots = [view.cwd, *additional_dirs(view.settings, view.cwd, user_home(view.env))]
    return McpHost(PrintHostUI(TerminalUI(print_mode=True)), roots=roots, model=lambda: None,
                   log_dir=state_dir(view.env) / "mcp-logs")


async def open_world(args: argparse.Namespace, *, only: str | None, pins: PinStore | None) -> McpWorld:
    """The manager (not started) with the servers a session here would have; `only` keeps one server (a
    ConfigError names the configured ones when it is unknown). Config problems are warned about on stderr."""
    from mini_claude.errors import ConfigError

    view = await project_view(mcp_config=list(args.mcp_config), strict=args.strict_mcp_config,
                              trust_project_mcp=args.trust_project_mcp)
    servers = view.config.servers
    if only is not None:
        if only not in servers:
            known = ", ".join(sorted(servers)) or "none"
            raise ConfigError(f"no MCP server named {only!r} (configured: {known})")
        servers = {only: servers[only]}
    env, state = view.env, state_dir(view.env)
    host = host_for(view)
    manager = McpManager(servers.values(), env=env, held={k: v for k, v in view.held.items() if k in servers},
                         era_memory=EraMemory(state / ERAS_FILE_NAME), pins=pins,
                         client_setup=host.setup, client_ready=host.ready)
    host.bind(manager)
    return McpWorld(manager=manager, host=host, config=view.config, settings=view.settings, trusted=view.trusted)
