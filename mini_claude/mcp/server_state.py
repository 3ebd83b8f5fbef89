"""What the manager knows of each server, as plain data: its status, its state, the tool entries it offers.

`mini-claude mcp list`, the REPL's `/mcp` and the session read these; only `McpManager` writes them. Nothing
here talks to a server. `filter_tools` applies a server's `includeTools` / `excludeTools`.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from mini_claude.mcp.client import McpClient
from mini_claude.mcp.config import ServerConfig
from mini_claude.mcp.pinning import ToolChange
from mini_claude.mcp.protocol import McpTool

__all__ = [
    "DEFAULT_STARTUP_TIMEOUT_S",
    "MAX_RESTARTS_IN_A_ROW",
    "NEEDS_LOGIN_TEXT",
    "REMOTE_TYPES",
    "McpToolEntry",
    "ServerState",
    "ServerStatus",
    "filter_tools",
    "restart_backoff_s",
    "startup_timeout_s",
]

DEFAULT_STARTUP_TIMEOUT_S = 30.0
MAX_RESTARTS_IN_A_ROW = 5
MAX_RESTART_BACKOFF_S = 30
REMOTE_TYPES = frozenset({"http", "sse"})  # server types that reconnect by themselves after a lost connection
NEEDS_LOGIN_TEXT = "needs a login: run `mini-claude mcp login {name}` (or `/mcp login {name}` in the REPL)"


class ServerStatus(StrEnum):
    STARTING = "starting"
    READY = "ready"
    FAILED = "failed"
    DISABLED = "disabled"
    NEEDS_APPROVAL = "needs-approval"
    NEEDS_AUTH = "needs-auth"

    @property
    def label(self) -> str:
        """How a person reads it (`needs auth`); `value` is the stable machine form (`--json`)."""
        return self.value.replace("-", " ")


@dataclass
class ServerState:
    """What the manager knows of one server; `mcp list` and `/mcp` show it."""

    config: ServerConfig
    status: ServerStatus = ServerStatus.STARTING
    error: str | None = None
    client: McpClient | None = None
    tools: list[McpTool] = field(default_factory=list)
    # seconds from spawning/connecting to the tools being listed, for the last successful start (None before one)
    startup_s: float | None = None
    # a remote server whose connection was lost: why (the next call reconnects first; `error` then says why the
    # last reconnect failed, if one did); a stdio server that exited: why (it restarts in the background, its tools
    # still offered: healing.py); None when connected
    lost: str | None = None
    # tools whose definition changed since the user accepted it (see pinning.py): listed by the server, never
    # offered to the model nor callable until accepted; `tools` holds only what is offered
    withheld: list[ToolChange] = field(default_factory=list)
    # self-healing (a stdio server that exited after it was ready): restarts so far, restarts in a row without a
    # successful call since, and when the next one happens (monotonic seconds; None: no restart pending)
    restarts: int = 0
    crashes_in_a_row: int = 0
    restart_after: float | None = None

    @property
    def name(self) -> str:
        return self.config.name

    def withheld_reason(self, tool: str) -> str | None:
        """Why `tool` (its raw name) may not be called, when it is withheld; None otherwise."""
        for change in self.withheld:
            if change.name == tool:
                how = (f"review and accept it with `mini-claude mcp accept {self.name}` (or `/mcp accept "
                       f"{self.name}` in the REPL)" if change.pinnable else "it is too deeply nested to pin")
                return f"tool {tool!r} is withheld: its definition changed since it was accepted; {how}"
        return None

    @property
    def is_remote(self) -> bool:
        return self.config.type in REMOTE_TYPES

    def summary(self) -> str:
        """The detail column of a status line: tool count or the reason."""
        if self.status is ServerStatus.READY:
            n = len(self.tools)
            text = f"{n} tool{'s' if n != 1 else ''}"
            if self.lost and not self.is_remote:
                text += f"; {self.lost}, restarting"
            elif self.lost:
                text += f"; connection lost ({self.lost}), reconnects on the next call"
                if self.error:
                    text += f" ({self.error})"
            if self.withheld:
                text += (f"; {len(self.withheld)} withheld (changed since accepted: "
                         f"`mini-claude mcp accept {self.name}`)")
            return text
        return self.error or ""


@dataclass(frozen=True)
class McpToolEntry:
    """One tool of a ready server, under the name the model calls it by (`mcp__server__tool`, see naming.py).

    Plain data: the session wraps each entry in a Tool adapter (mini_claude.tools.mcp_tool), which routes a call
    back through `McpManager.call_tool(server, tool.name, …)`."""

    server: str
    tool: McpTool
    qualified_name: str

    @property
    def name(self) -> str:
        """The qualified name (what a Tool is known by)."""
        return self.qualified_name


def restart_backoff_s(crashes_in_a_row: int) -> float:
    """How long after its last exit or failed restart a crashed stdio server is started again: 1 s, 2 s, 4 s, …
    up to `MAX_RESTART_BACKOFF_S`."""
    return float(min(MAX_RESTART_BACKOFF_S, 2 ** max(0, crashes_in_a_row)))


def startup_timeout_s(env: Mapping[str, str]) -> float:
    """`MCP_TIMEOUT` (milliseconds, as in Claude Code), default 30 s."""
    raw = env.get("MCP_TIMEOUT", "")
    try:
        value = float(raw) / 1000.0
    except ValueError:
        return DEFAULT_STARTUP_TIMEOUT_S
    return value if value > 0 else DEFAULT_STARTUP_TIMEOUT_S


def filter_tools(tools: list[McpTool], cfg: ServerConfig) -> list[McpTool]:
    """The tools a server's `includeTools` / `excludeTools` (glob patterns) let through, in order."""
    kept = tools
    if cfg.include_tools is not None:
        kept = [t for t in kept if any(fnmatch.fnmatchcase(t.name, p) for p in cfg.include_tools)]
    if cfg.exclude_tools:
        kept = [t for t in kept if not any(fnmatch.fnmatchcase(t.name, p) for p in cfg.exclude_tools)]
    return kept
