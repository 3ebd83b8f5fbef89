"""Redirects of MCP requests (review finding 2): followed by hand, same origin only, with every header kept; a
redirect to another origin fails with a TransportError naming it, and nothing at all is sent there (no static
header, no headersHelper header, no session id). Scripted stdlib servers on loopback: 127.0.0.1 and `localhost`
are different origins."""

from __future__ import annotations

import os
from typing import Any

import pytest
from test_http_transport import ScriptedHandler, init_result, is_notification, scripted

from mini_claude.errors import TransportError
from mini_claude.mcp.client import McpClient
from mini_claude.mcp.transports.headers_helper import HeadersHelper
from mini_claude.mcp.transports.http import StreamableHttpTransport
from mini_claude.mcp.transports.http_sender import MAX_REDIRECTS
from mini_claude.mcp.transports.sse import SseTransport

pytestmark = pytest.mark.timeout(60)

STATIC_SECRET = "static-s3cret"
HELPER_SECRET = "helper-s3cret"


def recorder(seen: list[dict[str, str]]):
    """The other origin: records every request's headers and answers like a server would."""
    def behaviour(handler: ScriptedHandler, verb: str, body: Any) -> None:
        seen.append(dict(handler.headers))
        if verb == "POST" and isinstance(body, dict) and "id" in body:
            handler.reply_json(init_result(body))
        else:
            handler.reply(202)

    return behaviour


def redirecting(location: str, status: int = 307):
    def behaviour(handler: ScriptedHandler, verb: str, body: Any) -> None:
        handler.reply(status, headers={"Location": location})

    return behaviour


def secret_transport(url: str) -> StreamableHttpTransport:
    helper = HeadersHelper(f"echo '{{\"X-Helper-Token\": \"{HELPER_SECRET}\"}}'", server="s", url=url,
                           env=dict(os.environ))
    return StreamableHttpTransport(url, server="s", headers={"X-Api-Key": STATIC_SECRET}, headers_helper=helper)


@pytest.mark.parametrize("status", [307, 308])
async def test_redirect_to_another_origin_is_refused_and_sends_nothing_there(status: int) -> None:
    seen: list[dict[str, str]] = []
    with scripted(recorder(seen)) as other:
        other_url = f"http://localhost:{other.server_address[1]}/evil?token=leak"
        with scripted(redirecting(other_url, status)) as server:
            client = McpClient(secret_transport(server.url), name="s", protocol_version="2025-06-18")
            with pytest.raises(TransportError) as info:
                await client.connect(timeout_s=10)
    text = str(info.value)
    assert f"HTTP {status} redirect to another origin (http://localhost:{other.server_address[1]}/evil?…)" in text
    assert "leak" not in text and "\n" not in text
    assert seen == []


async def test_legacy_sse_stream_redirect_to_another_origin_is_refused() -> None:
    seen: list[dict[str, str]] = []
    with scripted(recorder(seen)) as other:
        location = f"http://localhost:{other.server_address[1]}/sse"
        with scripted(redirecting(location, 302)) as server:
            transport = SseTransport(server.url, server="s", headers={"X-Api-Key": STATIC_SECRET},
                                     endpoint_timeout_s=5)
            with pytest.raises(TransportError, match="redirect to another origin"):
                await transport.start()
            await transport.close()
    assert seen == []


async def test_same_origin_redirect_is_followed_with_every_header() -> None:
    """As FastMCP does for /mcp -> /mcp/ (a 307 on the same origin)."""
    def behaviour(handler: ScriptedHandler, verb: str, body: Any) -> None:
        if handler.path == "/mcp":
            handler.reply(307, headers={"Location": "/mcp/"})
        elif verb != "POST":
            handler.reply(405)
        elif is_notification(body):
            handler.reply(202)
        elif body["method"] == "initialize":
            handler.reply_json(init_result(body), {"Mcp-Session-Id": "sid"})
        else:
            handler.reply_json({"jsonrpc": "2.0", "id": body["id"], "result": {"tools": []}})

    with scripted(behaviour) as server:
        client = McpClient(secret_transport(server.url), name="s", protocol_version="2025-06-18")
        await client.connect(timeout_s=10)
        try:
            assert await client.list_tools() == []
        finally:
            await client.close()
    followed = [(headers, body) for (verb, headers, body), path in zip(server.log, server.paths, strict=True)
                if verb == "POST" and path == "/mcp/"]
    assert [body["method"] for _, body in followed][:3] == ["initialize", "notifications/initialized", "tools/list"]
    assert all(h["X-Api-Key"] == STATIC_SECRET and h["X-Helper-Token"] == HELPER_SECRET for h, _ in followed)
    assert followed[2][0]["Mcp-Session-Id"] == "sid"
    assert followed[0][1] == next(body for verb, _, body in server.log if verb == "POST")  # same body resent


async def test_redirect_loop_is_bounded() -> None:
    with scripted(redirecting("/mcp")) as server:
        client = McpClient(StreamableHttpTransport(server.url, server="s"), name="s", protocol_version="2025-06-18")
        with pytest.raises(TransportError, match=f"more than {MAX_REDIRECTS} redirects"):
            await client.connect(timeout_s=10)
    assert len(server.log) == MAX_REDIRECTS + 1


async def test_a_post_redirected_with_302_is_not_turned_into_a_get() -> None:
    with scripted(redirecting("/other", 302)) as server:
        client = McpClient(StreamableHttpTransport(server.url, server="s"), name="s", protocol_version="2025-06-18")
        with pytest.raises(TransportError, match="only redirected with 307/308"):
            await client.connect(timeout_s=10)
    assert [verb for verb, _, _ in server.log] == ["POST"]
