"""The MCP half of a session: the host (roots, sampling, elicitation, logs), the server manager and the skill
registry (MCP servers serve skills too).

`start_session` (session/start.py) builds it once everything that can refuse the session is settled, starts its servers, and builds
the agent over it while they boot (session/start.py; bench/README.md, "A fleet of servers"). The host asks for the
session's model only when a server samples, through `McpParts.agent_model`: bound before the servers start (the
session's model, built on first use) and rebound to the agent's once it exists. `listeners` hear every server
change (the tool adapters prepare a server's schemas as it comes up).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from mini_claude.mcp.apps.settings import AppsSettings
from mini_claude.mcp.client import McpClient
from mini_claude.mcp.config import LoadedConfig, ServerConfig
from mini_claude.mcp.host import HostUI, McpHost, NoQuestionsUI
from mini_claude.mcp.manager import McpManager, ServerState, ServerStatus
from mini_claude.mcp.negotiation import ERAS_FILE_NAME, EraMemory
from mini_claude.mcp.pinning import PinStore
from mini_claude.models.base import Model
from mini_claude.paths import state_dir, user_home
from mini_claude.settings import Settings
from mini_claude.skills.local import discover_local_skills
from mini_claude.skills.registry import SkillRegistry

if TYPE_CHECKING:
    from mini_claude.mcp.apps.service import AppsService

__all__ = ["McpParts", "additional_dirs", "build_mcp"]


@dataclass
class McpParts:
    manager: McpManager
    host: McpHost
    skills: SkillRegistry  # local and MCP-served skills
    dirs: list[Path]  # the added working folders (settings, --add-dir): roots for servers, writable for the gate
    agent_model: Callable[[], Model | None] = field(default=lambda: None)  # bound once the agent exists
    listeners: list[Callable[[ServerState], None]] = field(default_factory=list)  # more of the session's, later
    apps: AppsService | None = None  # MCP Apps views (only in a session that can show them, with Apps on)


def additional_dirs(settings: Settings, cwd: Path, home: Path) -> list[Path]:
    """`permissions.additionalDirectories` as absolute paths (`~` is the home directory, relative means under
    `cwd`). Pass settings already filtered for trust: a project's list counts only in a trusted folder."""
    dirs: list[Path] = []
    for item in settings.additional_directories:
        text = item.text.strip()
        if text == "~" or text.startswith("~/"):
            path = home / text[2:]
        else:
            path = Path(text) if Path(text).is_absolute() else cwd / text
        dirs.append(path)
    return dirs


def build_mcp(cwd: Path, *, env: dict[str, str], settings: Settings, config: LoadedConfig,
              held: dict[str, tuple[ServerStatus, str]], add_dirs: list[Path],
              on_server_change: Callable[[ServerState], None] | None = None,
              host_ui: HostUI | None = None, sources: tuple[str, ...] | None = None,
              apps: bool = False) -> McpParts:
    """The host, manager and skill registry of a session in `cwd` (servers not started: `manager.start()`).
    `apps`: the front end can show MCP Apps views (the REPL, the Python API's Client; never -p): unless the
    `mcpApps` setting switches them off, every server is told so and views are shown (mcp/apps/service.py)."""
    # loading a lost remote server's skill reconnects it (`manager` is bound below, before anything can load)
    skills = SkillRegistry(discover_local_skills(cwd, user_home(env), sources),
                           client_for=lambda server: manager.connected_client(server))

    def server_changed(state: ServerState) -> None:
        if state.status is ServerStatus.READY and state.lost is not None:
            skills.server_lost(state.name)  # still ready, client gone until the next use: keep its skills
        else:
            skills.server_changed(state.name, state.client if state.status is ServerStatus.READY else None)
        for listener in parts.listeners:
            listener(state)
        if on_server_change is not None:
            on_server_change(state)

    dirs = [*additional_dirs(settings, cwd, user_home(env)), *(cwd / d for d in add_dirs)]
    host = McpHost(host_ui or NoQuestionsUI(), roots=[cwd, *dirs], model=lambda: parts.agent_model(),
                   log_dir=state_dir(env) / "mcp-logs")
    apps_settings = AppsSettings.from_settings(settings) if apps else AppsSettings(enabled=False)

    def client_setup(cfg: ServerConfig, client: McpClient) -> None:
        host.setup(cfg, client)
        if parts.apps is not None:
            parts.apps.setup(cfg, client)

    manager = McpManager(config.servers.values(), env=env, held=held, on_change=server_changed,
                         era_memory=EraMemory(state_dir(env) / ERAS_FILE_NAME),
                         pins=PinStore.default(env, project=cwd), client_setup=client_setup, client_ready=host.ready)
    host.bind(manager)
    parts = McpParts(manager=manager, host=host, skills=skills, dirs=dirs)
    if apps_settings.enabled:
        from mini_claude.mcp.apps.service import AppsService

        parts.apps = AppsService(apps_settings, servers=manager, logs=host.logs, env=env, sampling=host.sampling)
    return parts
