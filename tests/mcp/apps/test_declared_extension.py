"""The MCP Apps extension as a client declares it (`McpClient.declare_extension`): in `initialize`'s capabilities
(the legacy era) and in every modern request's `_meta` client capabilities; and a tool's view URI as `McpTool`
reads it (nested `_meta.ui.resourceUri` first, then the deprecated flat key; only `ui://`)."""

from __future__ import annotations

from typing import Any

from mini_claude.mcp.apps.channel import EXTENSION_ID, MIME_TYPE
from mini_claude.mcp.client import McpClient
from mini_claude.mcp.protocol import LATEST_MODERN_VERSION, McpTool
from tests.mcp.memory_transport import memory_pair

META_CAPS = "io.modelcontextprotocol/clientCapabilities"

SETTINGS = {"mimeTypes": [MIME_TYPE]}


async def test_initialize_carries_the_extension() -> None:
    transport, server = memory_pair()
    client = McpClient(transport, name="mem")
    client.declare_extension(EXTENSION_ID, SETTINGS)
    try:
        await client.connect(timeout_s=5)
        params = server.messages("initialize")[0]["params"]
        assert params["capabilities"]["extensions"] == {EXTENSION_ID: SETTINGS}
        client.declare_extension("late/one", {})  # after connect: not sent, not raised
        assert "late/one" not in client.declared_capabilities["extensions"]
    finally:
        await client.close()
        await server.stop()


async def test_every_modern_request_carries_the_extension() -> None:
    transport, server = memory_pair()
    del server.handlers["initialize"]  # a modern-only server
    server.on("server/discover", lambda p: {"resultType": "complete", "supportedVersions": [LATEST_MODERN_VERSION],
                                             "capabilities": {"tools": {}},
                                             "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "m"}}})
    server.on("tools/list", lambda p: {"tools": []})
    client = McpClient(transport, name="mem")
    client.declare_extension(EXTENSION_ID, SETTINGS)
    try:
        await client.connect(timeout_s=5)
        assert client.era == "modern"
        await client.list_tools()
        sent: list[dict[str, Any]] = [m for m in server.received if m.get("method") in ("server/discover",
                                                                                          "tools/list")]
        assert len(sent) == 2
        for message in sent:
            assert message["params"]["_meta"][META_CAPS]["extensions"] == {EXTENSION_ID: SETTINGS}
    finally:
        await client.close()
        await server.stop()


def tool(meta: dict[str, Any]) -> McpTool:
    built = McpTool.from_wire({"name": "t", "inputSchema": {"type": "object"}, "_meta": meta})
    assert built is not None
    return built


def test_the_view_uri_nested_first_then_flat_and_only_ui() -> None:
    assert tool({"ui": {"resourceUri": "ui://a/x.html"}, "ui/resourceUri": "ui://b/y.html"}).ui_resource_uri == \
        "ui://a/x.html"
    assert tool({"ui/resourceUri": "ui://b/y.html"}).ui_resource_uri == "ui://b/y.html"
    assert tool({"ui": {"resourceUri": "https://x.example/v.html"}}).ui_resource_uri is None
    assert tool({"ui": {"resourceUri": "https://x"}, "ui/resourceUri": "ui://b/y.html"}).ui_resource_uri == \
        "ui://b/y.html"
    assert tool({"ui": {"visibility": ["app"]}}).ui_resource_uri is None
    assert tool({"ui": {"resourceUri": 7}}).ui_resource_uri is None
