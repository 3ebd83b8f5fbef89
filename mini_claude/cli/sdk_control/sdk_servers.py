"""The SDK's in-process MCP servers (`"type": "sdk"` entries of an inline `--mcp-config`) joined to the session.

`split_sdk_servers` takes them out of the `--mcp-config` values before the session reads them (the config loader
knows stdio, http and sse only); `attach_sdk_servers` connects each through `mcp_message` control requests
(mcp_peer.py) and hands it to the session's MCP manager as a ready server, beside the configured ones.

Interim: once mcp/transports/inprocess.py and an in-process server type land, the manager can start these like any
other server (and `mcp_reconnect` can restart them); this module then shrinks to building the peers.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from mini_claude.cli.sdk_control.channel import ControlChannel
from mini_claude.cli.sdk_control.mcp_peer import PeerTransport, SdkMcpPeer, sdk_server_names
from mini_claude.errors import McpError
from mini_claude.mcp.config import ServerConfig
from mini_claude.mcp.server_state import ServerState, ServerStatus

if TYPE_CHECKING:
    from mini_claude.mcp.manager import McpManager

__all__ = ["attach_sdk_servers", "reconnect_sdk_server", "split_sdk_servers"]

SDK_CONNECT_TIMEOUT_S = 30.0


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


async def attach_sdk_servers(manager: McpManager, channel: ControlChannel, names: list[str]) -> None:
    """Connect each SDK server and add it to `manager` (ready, or failed with the reason)."""
    from mini_claude.mcp.client import McpClient

    for name in names:
        if name in manager.states:
            continue  # a configured server of that name wins
        cfg = ServerConfig(name=name, type="sdk", scope="cli", source="--mcp-config", raw={"type": "sdk",
                                                                                          "name": name})
        state = ServerState(cfg)
        manager.states[name] = state
        client = McpClient(PeerTransport(SdkMcpPeer(channel, name)), name=name)
        try:
            await client.connect(timeout_s=SDK_CONNECT_TIMEOUT_S)
            tools = await client.list_tools()
        except McpError as exc:
            await client.close()
            manager.set_down(state, ServerStatus.FAILED, str(exc))
            continue
        manager.bring_up(state, client, tools)


async def reconnect_sdk_server(manager: McpManager, channel: ControlChannel, name: str) -> None:
    """`mcp_reconnect` (or switching on again) of an SDK server: its connection closed, a new one opened."""
    state = manager.states.pop(name)
    if state.client is not None:
        await state.client.close()
    await attach_sdk_servers(manager, channel, [name])
