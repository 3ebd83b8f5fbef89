"""SseTransport (legacy 2024-11-05 HTTP+SSE) under McpClient: server-everything in `sse` mode, and scripted
stdlib servers for the endpoint handshake and its failures (no endpoint, foreign origin, dropped stream, 500)."""

from __future__ import annotations

import json
import queue
import re
import time
from collections.abc import Callable
from typing import Any

import pytest
from test_http_transport import (
    FAST_S,
    ScriptedHandler,
    connected,
    init_result,
    kill_group,
    running_peer,
    scripted,
)

from mini_claude.errors import HttpStatusError, TransportError
from mini_claude.mcp.client import McpClient
from mini_claude.mcp.transports.sse import SseTransport
from tests.helpers import refused_port

pytestmark = pytest.mark.timeout(60)


async def test_everything_sse() -> None:
    with running_peer("PEER_EVERYTHING_SSE") as (port, proc):
        transport = SseTransport(f"http://127.0.0.1:{port}/sse", server="everything")
        async with connected(transport, "everything") as client:
            assert transport.endpoint is not None
            assert transport.endpoint.startswith(f"http://127.0.0.1:{port}/")
            names = {tool.name for tool in await client.list_tools()}
            assert {"echo", "get-sum"} <= names
            result = await client.call_tool("echo", {"message": "over sse"})
            assert result.content == [{"type": "text", "text": "Echo: over sse"}]

            kill_group(proc)
            started = time.monotonic()
            with pytest.raises(TransportError):
                await client.call_tool("echo", {"message": "anyone?"}, timeout_s=30)
            assert time.monotonic() - started < FAST_S


def _legacy(endpoint: str, *, post_status: int = 202, drop_after_endpoint: bool = False
            ) -> tuple[Callable[[ScriptedHandler, str, Any], None], queue.Queue[str | None]]:
    """A legacy server: GET announces `endpoint`, replies to POSTs come back on that stream (None ends it)."""
    replies: queue.Queue[str | None] = queue.Queue()

    def behaviour(handler: ScriptedHandler, verb: str, body: Any) -> None:
        if verb == "GET":
            handler.start_sse()
            handler.sse(f"event: endpoint\ndata: {endpoint}\n\n")
            if drop_after_endpoint:
                return
            while True:
                item = replies.get()
                if item is None:
                    return
                handler.sse(f"event: message\ndata: {item}\n\n")
        elif post_status >= 400:
            handler.reply(post_status, b"nope: broken backend")
        else:
            handler.reply(post_status, b"Accepted")
            if isinstance(body, dict) and body.get("method") == "initialize":
                replies.put(json.dumps(init_result(body, "2024-11-05")))
            elif isinstance(body, dict) and "id" in body and "method" in body:
                replies.put(json.dumps({"jsonrpc": "2.0", "id": body["id"], "result": {"tools": []}}))

    return behaviour, replies


async def test_relative_endpoint_and_round_trip() -> None:
    behaviour, replies = _legacy("/messages?session=1")
    with scripted(behaviour) as server:
        base = server.url.replace("/mcp", "/sse")
        transport = SseTransport(base, server="s", headers={"X-Test": "1"})
        try:
            async with connected(transport, "s") as client:
                assert transport.endpoint == base.replace("/sse", "/messages?session=1")
                assert await client.list_tools() == []
        finally:
            replies.put(None)
        assert all(headers.get("X-Test") == "1" for _verb, headers, _ in server.log)


async def test_foreign_origin_endpoint_is_refused() -> None:
    behaviour, replies = _legacy("http://evil.example:1234/messages")
    with scripted(behaviour) as server:
        client = McpClient(SseTransport(server.url, server="s", timeout_s=5), name="s")
        started = time.monotonic()
        try:
            with pytest.raises(TransportError, match="another origin"):
                await client.connect(timeout_s=10)
        finally:
            replies.put(None)
        assert time.monotonic() - started < FAST_S


async def test_no_endpoint_event_times_out_bounded() -> None:
    def behaviour(handler: ScriptedHandler, verb: str, body: Any) -> None:
        handler.start_sse()
        handler.sse(": nothing here\n\n")
        time.sleep(1.5)

    with scripted(behaviour) as server:
        client = McpClient(SseTransport(server.url, server="s", timeout_s=0.5), name="s")
        started = time.monotonic()
        with pytest.raises(TransportError, match="endpoint"):
            await client.connect(timeout_s=10)
        assert time.monotonic() - started < FAST_S


async def test_stream_dropped_fails_fast() -> None:
    behaviour, _replies = _legacy("/messages", drop_after_endpoint=True)
    with scripted(behaviour) as server:
        client = McpClient(SseTransport(server.url, server="s"), name="s")
        started = time.monotonic()
        with pytest.raises(TransportError, match="closed the SSE stream"):
            await client.connect(timeout_s=10)
        assert time.monotonic() - started < FAST_S


async def test_post_500_fails_fast() -> None:
    behaviour, replies = _legacy("/messages", post_status=500)
    with scripted(behaviour) as server:
        client = McpClient(SseTransport(server.url, server="s"), name="s")
        started = time.monotonic()
        try:
            with pytest.raises(HttpStatusError) as info:
                await client.connect(timeout_s=10)
        finally:
            replies.put(None)
        assert time.monotonic() - started < FAST_S
        assert info.value.status == 500 and "broken backend" in str(info.value)


async def test_connection_refused_fails_fast() -> None:
    port = refused_port()
    client = McpClient(SseTransport(f"http://127.0.0.1:{port}/sse", server="gone"), name="gone")
    started = time.monotonic()
    with pytest.raises(TransportError, match=re.escape(f"cannot connect to 127.0.0.1:{port} (connection refused)")):
        await client.connect(timeout_s=10)
    assert time.monotonic() - started < FAST_S


async def test_foreign_origin_endpoint_error_shows_no_query_or_userinfo() -> None:
    """Review finding 13: errors show a server URL without userinfo or query (which may carry tokens)."""
    behaviour, replies = _legacy("http://user:pw-s3cret@evil.example:1234/messages?session=s3cret")
    with scripted(behaviour) as server:
        client = McpClient(SseTransport(server.url, server="s", timeout_s=5), name="s")
        try:
            with pytest.raises(TransportError) as info:
                await client.connect(timeout_s=10)
        finally:
            replies.put(None)
    assert "another origin (http://evil.example:1234/messages?…)" in str(info.value)
    assert "s3cret" not in str(info.value)


async def test_post_4xx_is_marked_not_processed_and_5xx_is_not() -> None:
    for status, refused in ((400, True), (500, False)):
        behaviour, replies = _legacy("/messages", post_status=status)
        with scripted(behaviour) as server:
            transport = SseTransport(server.url, server="s", timeout_s=5)
            await transport.start()
            try:
                with pytest.raises(HttpStatusError) as info:
                    await transport.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call"})
            finally:
                replies.put(None)
                await transport.close()
        assert info.value.status == status and info.value.not_processed is refused
