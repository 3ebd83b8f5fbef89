"""AutoHttpTransport (`type: "http"`): Streamable HTTP, falling back to legacy SSE when the first POST is answered
400/404/405 without a JSON-RPC body — against server-everything in both modes and scripted stdlib servers."""

from __future__ import annotations

import json
import queue
import time
from typing import Any

import pytest
from test_http_transport import (
    CONNECT_TIMEOUT_S,
    FAST_S,
    ScriptedHandler,
    connected,
    init_result,
    is_notification,
    running_peer,
    scripted,
)

from mini_claude.errors import HttpStatusError
from mini_claude.mcp.client import McpClient
from mini_claude.mcp.config import ServerConfig
from mini_claude.mcp.connect import build_transport
from mini_claude.mcp.transports.auto import AutoHttpTransport

pytestmark = pytest.mark.timeout(60)


def _reply_to(body: dict[str, Any], version: str) -> dict[str, Any]:
    if body["method"] == "initialize":
        return init_result(body, version)
    if body["method"] == "tools/list":
        return {"jsonrpc": "2.0", "id": body["id"], "result": {"tools": [
            {"name": "ping_tool", "inputSchema": {"type": "object"}}]}}
    if body["method"] == "tools/call":
        return {"jsonrpc": "2.0", "id": body["id"], "result": {"content": [{"type": "text", "text": "pong"}]}}
    return {"jsonrpc": "2.0", "id": body["id"], "error": {"code": -32601, "message": "Method not found"}}


def legacy_only(post_status: int = 405):
    """A 2024-11-05 server on /mcp: GET is its SSE stream (endpoint /messages), a POST to /mcp is refused."""
    replies: queue.Queue[str | None] = queue.Queue()

    def behaviour(handler: ScriptedHandler, verb: str, body: Any) -> None:
        if verb == "GET":
            handler.start_sse()
            handler.sse("event: endpoint\ndata: /messages?session=7\n\n")
            while (item := replies.get()) is not None:
                handler.sse(f"event: message\ndata: {item}\n\n")
        elif verb == "POST" and handler.path == "/mcp":
            handler.reply(post_status, b"<html>Cannot POST /mcp</html>", "text/html")
        elif verb == "POST":
            handler.reply(202, b"Accepted")
            if isinstance(body, dict) and "method" in body and "id" in body:
                replies.put(json.dumps(_reply_to(body, "2024-11-05")))
        else:
            handler.reply(405)

    return behaviour, replies


@pytest.mark.parametrize("status", [400, 404, 405])
@pytest.mark.parametrize("pinned", [None, "2025-06-18"])
async def test_first_post_refused_falls_back_to_sse(status: int, pinned: str | None) -> None:
    behaviour, replies = legacy_only(status)
    with scripted(behaviour) as server:
        transport = AutoHttpTransport(server.url, server="old")
        assert transport.kind == "streamable-http"
        client = McpClient(transport, name="old", protocol_version=pinned, request_timeout_s=20)
        try:
            await client.connect(timeout_s=CONNECT_TIMEOUT_S)
            assert transport.kind == "sse"
            assert transport.session_id is None
            assert [t.name for t in await client.list_tools()] == ["ping_tool"]
            result = await client.call_tool("ping_tool", {})
            assert result.content == [{"type": "text", "text": "pong"}]
        finally:
            await client.close()
            replies.put(None)
        posts = [(server_path, body) for verb, _, body, server_path in _with_paths(server) if verb == "POST"]
        assert [path for path, _ in posts].count("/mcp") == 1  # only the first message went the modern way
        first = posts[0][1]
        assert posts[1][1] == first  # ... and was sent again on the legacy endpoint
        assert all(path.startswith("/messages") for path, _ in posts[1:])


def _with_paths(server: Any) -> list[tuple[str, dict[str, str], Any, str]]:
    return [(verb, headers, body, path) for (verb, headers, body), path in zip(server.log, server.paths, strict=True)]


async def test_json_rpc_error_body_decides_for_streamable_http() -> None:
    """A 400 whose body is a JSON-RPC error (the TS SDK before a session exists) is an answer, not "legacy"."""
    def behaviour(handler: ScriptedHandler, verb: str, body: Any) -> None:
        if verb != "POST":
            handler.reply(405)
        elif body.get("method") == "server/discover":
            handler.reply(400, b'{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: Server not '
                          b'initialized"},"id":null}', "application/json")
        elif is_notification(body):
            handler.reply(202)
        else:
            handler.reply_json(_reply_to(body, "2025-06-18"), {"Mcp-Session-Id": "s1"})

    with scripted(behaviour) as server:
        transport = AutoHttpTransport(server.url, server="modern")
        async with connected(transport, "modern") as client:
            assert transport.kind == "streamable-http"
            assert transport.session_id == "s1"
            assert [t.name for t in await client.list_tools()] == ["ping_tool"]
        assert all(verb != "GET" or headers.get("Mcp-Session-Id") == "s1" for verb, headers, _ in server.log)


async def test_both_failing_names_both_attempts() -> None:
    def behaviour(handler: ScriptedHandler, verb: str, body: Any) -> None:
        handler.reply(404, b"no such thing here")

    with scripted(behaviour) as server:
        transport = AutoHttpTransport(server.url, server="gone")
        client = McpClient(transport, name="gone")
        started = time.monotonic()
        with pytest.raises(HttpStatusError) as info:
            await client.connect(timeout_s=CONNECT_TIMEOUT_S)
        assert time.monotonic() - started < FAST_S
        text = str(info.value)
        assert "\n" not in text
        assert "Streamable HTTP: POST" in text and "HTTP 404" in text
        assert "legacy SSE at the same URL: GET SSE stream: HTTP 404" in text
        assert info.value.status == 404
        assert transport.kind == "streamable-http"


async def test_sse_stream_without_endpoint_is_not_legacy() -> None:
    """A GET that opens an event stream but never announces `endpoint` fails the fallback in bounded time."""
    def behaviour(handler: ScriptedHandler, verb: str, body: Any) -> None:
        if verb == "GET":
            handler.start_sse()
            handler.sse(": keep-alive\n\n")
            time.sleep(8)
        else:
            handler.reply(405, b"Method Not Allowed")

    with scripted(behaviour) as server:
        client = McpClient(AutoHttpTransport(server.url, server="odd"), name="odd", protocol_version="2025-06-18")
        started = time.monotonic()
        with pytest.raises(HttpStatusError, match="no `endpoint` event within 5s"):
            await client.connect(timeout_s=CONNECT_TIMEOUT_S)
        assert time.monotonic() - started < 7


async def test_everything_sse_through_type_http() -> None:
    with running_peer("PEER_EVERYTHING_SSE") as (port, _proc):
        cfg = ServerConfig(name="everything", type="http", url=f"http://127.0.0.1:{port}/sse")
        transport = build_transport(cfg, {})
        assert isinstance(transport, AutoHttpTransport)
        async with connected(transport, "everything") as client:
            assert transport.kind == "sse"
            result = await client.call_tool("echo", {"message": "auto"})
            assert result.content == [{"type": "text", "text": "Echo: auto"}]


async def test_everything_streamable_http_through_type_http() -> None:
    with running_peer("PEER_EVERYTHING_HTTP") as (port, _proc):
        cfg = ServerConfig(name="everything", type="http", url=f"http://127.0.0.1:{port}/mcp")
        transport = build_transport(cfg, {})
        async with connected(transport, "everything") as client:
            assert transport.kind == "streamable-http"
            assert transport.session_id is not None
            result = await client.call_tool("echo", {"message": "auto"})
            assert result.content == [{"type": "text", "text": "Echo: auto"}]


async def test_fallback_reuses_the_headers_helpers_result(tmp_path: Any) -> None:
    """Review finding 22: the legacy SSE fallback must not run the headersHelper again (inside its short endpoint
    timeout); it sends the headers the first run gave."""
    import os

    from mini_claude.mcp.transports.headers_helper import HeadersHelper

    counter = tmp_path / "runs"
    command = (f"n=$(cat {counter} 2>/dev/null || echo 0); n=$((n+1)); echo $n > {counter}; "
               "echo \"{\\\"X-Token\\\": \\\"t$n\\\"}\"")
    behaviour, replies = legacy_only(405)
    with scripted(behaviour) as server:
        helper = HeadersHelper(command, server="old", url=server.url, env=dict(os.environ))
        transport = AutoHttpTransport(server.url, server="old", headers_helper=helper)
        client = McpClient(transport, name="old", protocol_version="2025-06-18", request_timeout_s=20)
        try:
            await client.connect(timeout_s=CONNECT_TIMEOUT_S)
            assert transport.kind == "sse"
            assert [t.name for t in await client.list_tools()] == ["ping_tool"]
        finally:
            await client.close()
            replies.put(None)
    assert counter.read_text().strip() == "1"
    assert {headers.get("X-Token") for _, headers, _ in server.log} == {"t1"}
