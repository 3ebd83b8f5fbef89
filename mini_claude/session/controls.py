"""What a front end may do to a running session, as plain functions over its parts: interrupt the turn, change the
permission mode or the model, report the MCP servers and the context window, reconnect or switch off a server.

The SDK control protocol (cli/sdk_control) and the Python API's `Client` call these same functions; the shapes
returned are Claude Code's control-protocol answers (`mcp_status` → `{"mcpServers": [...]}`, `get_context_usage`
→ `{"categories", "totalTokens", "maxTokens", ...}`), filled with what this session knows.
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any

from mini_claude.errors import ConfigError
from mini_claude.mcp.server_state import ServerStatus

if TYPE_CHECKING:
    from mini_claude.session.parts import SessionParts

__all__ = ["context_usage", "interrupt", "mcp_status", "reconnect_server", "set_model", "set_permission_mode",
           "toggle_server"]

_STATUS = {ServerStatus.READY: "connected", ServerStatus.STARTING: "pending", ServerStatus.FAILED: "failed",
           ServerStatus.NEEDS_AUTH: "needs-auth", ServerStatus.DISABLED: "disabled",
           ServerStatus.NEEDS_APPROVAL: "disabled"}
_CHARS_PER_TOKEN = 4
_CATEGORIES = {"system_prompt": ("System prompt", "promptBorder"), "system_tools": ("System tools", "inactive"),
               "mcp_tools": ("MCP tools", "cyan_FOR_SUBAGENTS_ONLY"),
               "messages": ("Messages", "purple_FOR_SUBAGENTS_ONLY")}


def interrupt(turn: asyncio.Task[Any] | None) -> bool:
    """Cancel the running turn (the agent answers every tool call of it, then the front end writes its result);
    False when no turn runs."""
    if turn is None or turn.done():
        return False
    turn.cancel()
    return True


def set_permission_mode(parts: SessionParts, mode: str, *, bypass_refused: str | None = None) -> str:
    """Switch the gate's mode (Claude Code's names); ConfigError naming the valid ones for another.
    `bypass_refused`: why bypassPermissions may not be switched to (ConfigError with it; None: it may)."""
    from mini_claude.permissions import PermissionMode

    try:
        wanted = PermissionMode.parse(mode)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    if wanted is PermissionMode.BYPASS and parts.gate.mode is not PermissionMode.BYPASS and bypass_refused:
        raise ConfigError(f"cannot set permission mode to bypassPermissions: {bypass_refused}")
    parts.gate.mode = wanted
    return parts.gate.mode.value


def set_model(parts: SessionParts, name: str | None) -> str:
    """Switch the session's model (None: the default one); the context window follows. Returns the model id."""
    from mini_claude.agent.compaction import context_tokens
    from mini_claude.models.base import Switchable
    from mini_claude.models.catalog import DEFAULT_MODEL

    wanted = (name or "").strip() or parts.env.get("ANTHROPIC_MODEL") or DEFAULT_MODEL
    model = parts.agent.model
    if isinstance(model, Switchable):
        model.switch(wanted, parts.env)
    else:
        model.name = wanted
    parts.agent.context.tokens = context_tokens(parts.env, model.name)
    return model.name


def mcp_status(parts: SessionParts) -> dict[str, Any]:
    """Every configured server: name, status, the server's own info once connected, its error, config and scope,
    its tools."""
    servers = []
    for state in parts.manager.states.values():
        cfg = state.config
        entry: dict[str, Any] = {"name": state.name, "status": _STATUS.get(state.status, state.status.value)}
        client = state.client
        if client is not None and client.server_info:
            entry["serverInfo"] = {"name": client.server_info.get("name", ""),
                                   "version": client.server_info.get("version", "")}
        if state.error:
            entry["error"] = state.error
        entry["config"] = {"type": cfg.type, **({"url": cfg.url} if cfg.url else {}),
                           **({"command": cfg.command} if cfg.command else {})}
        entry["scope"] = cfg.scope
        entry["tools"] = [{"name": tool.name, **({"description": tool.description} if tool.description else {}),
                           **({"annotations": tool.annotations} if tool.annotations else {})}
                          for tool in state.tools]
        servers.append(entry)
    return {"mcpServers": servers}


def context_usage(parts: SessionParts) -> dict[str, Any]:
    """The next request's size by category (system prompt, tools, MCP tools, messages), estimated as the agent's
    context window estimates it, against the model's window."""
    agent = parts.agent
    window = agent.context.tokens
    system = agent.system_prompt()
    tools = agent.tools()
    builtin = [t for t in tools if not t.name.startswith("mcp__")]
    mcp = [t for t in tools if t.name.startswith("mcp__")]

    def definitions(group: list[Any]) -> int:
        return sum(len(t.name) + len(t.description or "") + len(json.dumps(t.input_schema)) for t in group) \
            // _CHARS_PER_TOKEN

    raw = {"system_prompt": len(system) // _CHARS_PER_TOKEN, "system_tools": definitions(builtin),
           "mcp_tools": definitions(mcp),
           "messages": len(json.dumps(agent.history, ensure_ascii=False)) // _CHARS_PER_TOKEN}
    total = agent.context.estimate(system, agent.history, [(t.name, t.description, t.input_schema) for t in tools])
    factor = total / max(1, sum(raw.values())) if total else 1.0
    categories: list[dict[str, Any]] = [{"id": key, "name": _CATEGORIES[key][0], "tokens": round(tokens * factor),
                                         "color": _CATEGORIES[key][1], "kind": "used"}
                                        for key, tokens in raw.items()]
    used = sum(c["tokens"] for c in categories)
    categories.append({"id": "free_space", "name": "Free space", "tokens": max(0, window - used),
                       "color": "promptBorder", "kind": "free"})
    memory = parts.memory
    files = [{"path": str(f.path), "type": f.kind, "tokens": len(f.text) // _CHARS_PER_TOKEN}
             for f in (memory.files if memory is not None else [])]
    return {"categories": categories, "totalTokens": used, "maxTokens": window, "rawMaxTokens": window,
            "percentage": round(100 * used / window, 2) if window else 0.0, "model": agent.model.name,
            "isAutoCompactEnabled": True, "memoryFiles": files}


async def reconnect_server(parts: SessionParts, name: str) -> str:
    """Restart one server and wait for it (bounded by the startup timeout); its status afterwards. ConfigError for
    an unknown name or a server that may not start."""
    state = await parts.manager.restart(name)
    return _STATUS.get(state.status, state.status.value)


async def toggle_server(parts: SessionParts, name: str, enabled: bool) -> str:
    """Switch one server off, or on again; its status afterwards."""
    state = await parts.manager.set_enabled(name, enabled)
    return _STATUS.get(state.status, state.status.value)
