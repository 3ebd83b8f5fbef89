"""The SDK's in-process MCP servers (`"type": "sdk"` entries of an inline `--mcp-config`): `split_sdk_servers` takes
them out of the `--mcp-config` values before the session reads them (a file's "sdk" entry has no server object);
the driver hands each to the session as an in-process server whose peer is reached through `mcp_message` control
requests (mcp_peer.py), so the manager starts, restarts and reconnects it like any other server."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from mini_claude.cli.sdk_control.mcp_peer import sdk_server_names

if TYPE_CHECKING:
    pass

__all__ = ["split_sdk_servers"]


def split_sdk_servers(values: list[str]) -> tuple[list[str], list[str]]:
    """`--mcp-config` values without their `"type": "sdk"` entries, and those entries' names. Files and values that
    are not JSON objects pass unchanged (the config loader reports them)."""
    kept: list[str] = []
    names: list[str] = []
    for value in values:
        if not value.lstrip().startswith("{"):
            kept.append(value)
            continue
        try:
            data = json.loads(value)
        except ValueError:
            kept.append(value)
            continue
        servers = data.get("mcpServers") if isinstance(data, dict) else None
        found = sdk_server_names(servers) if isinstance(servers, dict) else []
        if not found:
            kept.append(value)
            continue
        names += found
        rest = {name: entry for name, entry in servers.items() if name not in found}
        if rest:
            kept.append(json.dumps({**data, "mcpServers": rest}))
    return kept, names
