"""`completion/complete` for the host's completers (prompt arguments, resource-template variables): one bounded
request, and nothing (never an error) when the server does not complete or fails — completion is a convenience."""

from __future__ import annotations

from typing import Any

from mini_claude.errors import McpError
from mini_claude.mcp.manager import McpManager

__all__ = ["COMPLETION_TIMEOUT_S", "MAX_VALUES", "complete"]

COMPLETION_TIMEOUT_S = 2.0
MAX_VALUES = 100


async def complete(manager: McpManager | None, server: str, ref: dict[str, Any], name: str, value: str,
                   context: dict[str, str] | None = None) -> list[str]:
    """The values `server` offers for argument `name` of `ref` given what is typed (`value`)."""
    state = manager.states.get(server) if manager is not None else None
    client = state.client if state is not None else None
    if client is None or "completions" not in client.server_capabilities:
        return []
    params: dict[str, Any] = {"ref": ref, "argument": {"name": name, "value": value}}
    if context:
        params["context"] = {"arguments": context}
    try:
        result = await client.request("completion/complete", params, timeout_s=COMPLETION_TIMEOUT_S)
    except McpError:
        return []
    completion = result.get("completion") if isinstance(result, dict) else None
    values = completion.get("values") if isinstance(completion, dict) else None
    return [v for v in values if isinstance(v, str)][:MAX_VALUES] if isinstance(values, list) else []
