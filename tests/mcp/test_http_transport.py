"""StreamableHttpTransport under McpClient: real servers on loopback (server-everything streamableHttp, the
FastMCP v1 / MCPServer v2 demo peer) and a tiny stdlib HTTP server scripted to fail in the ways that make clients
hang (500, dropped streams, expired sessions, 401), plus the SSE parser.

Every failure must surface as a TransportError (or, for a lost response stream, a JSON-RPC error) within a second
or so, never at the request's deadline.

Why this module is long: each test is one way a real HTTP server fails a client, and they share the scripted
server, its fixtures and the client helpers; split, each half would need all of them.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import socket
import subprocess
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from mini_claude.errors import HttpSessionExpiredError, HttpStatusError, StreamLostError, TransportError
from mini_claude.mcp.client import McpClient
from mini_claude.mcp.transports.base import RequestFailed
from mini_claude.mcp.transports.http import StreamableHttpTransport
from mini_claude.mcp.transports.sse_events import SseParser
from tests.helpers import free_port, refused_port
from tests.peers import peer_command

pytestmark = pytest.mark.timeout(60)

CONNECT_TIMEOUT_S = 15.0
PORT_WAIT_S = 15.0
FAST_S = 2.0  # "fails fast": well under any request deadline used here


# ---- helpers (also used by test_sse_transport.py) --------------------------------------------------------------


def with_port(argv: list[str], port: int) -> list[str]:
    """A peer argv with its fixed port (`PORT=3001` or `--port 8000`) replaced by `port`."""
    out = []
    for index, arg in enumerate(argv):
        if arg.startswith("PORT="):
            arg = f"PORT={port}"
        elif index > 0 and argv[index - 1] == "--port":
            arg = str(port)
        out.append(arg)
    return out


@contextmanager
def running_peer(variable: str) -> Iterator[tuple[int, subprocess.Popen[bytes]]]:
    """Start the peer on a free port in its own process group; wait for the port; kill the group at the end."""
    port = free_port()
    proc = subprocess.Popen(with_port(peer_command(variable), port), stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + PORT_WAIT_S
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"{variable} did not listen on port {port} (exit code {proc.poll()})")
                time.sleep(0.05)
        yield port, proc
    finally:
        kill_group(proc)


def kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait(timeout=5)


@asynccontextmanager
async def connected(transport: Any, name: str = "peer",
                    setup: Callable[[McpClient], None] | None = None) -> AsyncIterator[McpClient]:
    client = McpClient(transport, name=name, request_timeout_s=20)
    if setup is not None:
        setup(client)
    await client.connect(timeout_s=CONNECT_TIMEOUT_S)
    try:
        yield client
    finally:
        started = time.monotonic()
        await client.close()
        assert time.monotonic() - started < 5


Behaviour = Callable[["ScriptedHandler", str, Any], None]


class ScriptedHandler(BaseHTTPRequestHandler):
    """HTTP/1.0 (one request per connection; a stream ends by closing it) driven by `server.behaviour`."""

    server: ScriptedServer

    def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
        pass

    def _handle(self, verb: str) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        body = json.loads(raw) if raw else None
        self.server.log.append((verb, dict(self.headers), body))
        self.server.paths.append(self.path)
        self.server.behaviour(self, verb, body)

    def do_POST(self) -> None:
        self._handle("POST")

    def do_GET(self) -> None:
        self._handle("GET")

    def do_DELETE(self) -> None:
        self._handle("DELETE")

    # small response helpers for behaviours
    def reply(self, status: int, body: bytes = b"", content_type: str = "text/plain",
              headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def reply_json(self, message: Any, headers: dict[str, str] | None = None) -> None:
        self.reply(200, json.dumps(message).encode(), "application/json", headers)

    def start_sse(self, headers: dict[str, str] | None = None) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()

    def sse(self, text: str) -> None:
        self.wfile.write(text.encode())
        self.wfile.flush()


class ScriptedServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, behaviour: Behaviour) -> None:
        super().__init__(("127.0.0.1", 0), ScriptedHandler)
        self.behaviour = behaviour
        self.log: list[tuple[str, dict[str, str], Any]] = []
        self.paths: list[str] = []  # the request path of each `log` entry

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/mcp"


@contextmanager
def scripted(behaviour: Behaviour) -> Iterator[ScriptedServer]:
    server = ScriptedServer(behaviour)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def init_result(request: Any, version: str = "2025-06-18") -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request["id"], "result": {
        "protocolVersion": version, "capabilities": {"tools": {}}, "serverInfo": {"name": "scripted", "version": "0"}}}


def is_notification(body: Any) -> bool:
    return isinstance(body, dict) and "id" not in body


# ---- real servers ----------------------------------------------------------------------------------------------


async def test_everything_streamable_http() -> None:
    with running_peer("PEER_EVERYTHING_HTTP") as (port, proc):
        transport = StreamableHttpTransport(f"http://127.0.0.1:{port}/mcp", server="everything")
        changes: list[str] = []

        async def roots(_params: Any) -> dict[str, Any]:
            return {"roots": [{"uri": "file:///tmp", "name": "tmp"}]}

        def setup(client: McpClient) -> None:
            # declaring `roots` makes server-everything add get-roots-list after `initialized` (list_changed)
            client.set_request_handler("roots/list", roots)
            client.on_notification("notifications/tools/list_changed", lambda method, _p: changes.append(method))

        async with connected(transport, "everything", setup) as client:
            assert transport.session_id
            assert transport.protocol_version == client.protocol_version
            names: set[str] = set()
            deadline = time.monotonic() + 5
            while "get-roots-list" not in names and time.monotonic() < deadline:
                names = {tool.name for tool in await client.list_tools()}
                await asyncio.sleep(0.05)
            assert {"echo", "get-sum", "trigger-long-running-operation", "get-roots-list"} <= names
            assert changes  # the list_changed came on the GET stream

            result = await client.call_tool("echo", {"message": "over http"})
            assert result.content == [{"type": "text", "text": "Echo: over http"}]

            progress: list[tuple[float, float | None]] = []
            result = await client.call_tool("trigger-long-running-operation", {"duration": 0.3, "steps": 3},
                                            on_progress=lambda p, t, _m: progress.append((p, t)))
            assert not result.is_error
            assert progress == [(1.0, 3.0), (2.0, 3.0), (3.0, 3.0)]

            # the server dies mid-session: the next call fails at once with a TransportError
            kill_group(proc)
            started = time.monotonic()
            with pytest.raises(TransportError):
                await client.call_tool("echo", {"message": "anyone?"}, timeout_s=30)
            assert time.monotonic() - started < FAST_S


@pytest.mark.parametrize("variable", ["PEER_FASTMCP_V1_HTTP", "PEER_MCPSERVER_V2_HTTP"])
async def test_python_sdk_demo_server_over_http(variable: str) -> None:
    with running_peer(variable) as (port, _proc):
        transport = StreamableHttpTransport(f"http://127.0.0.1:{port}/mcp", server="demo")
        async with connected(transport, "demo") as client:
            names = {tool.name for tool in await client.list_tools()}
            assert {"echo", "add", "slow"} <= names
            result = await client.call_tool("add", {"a": 40, "b": 2})
            assert not result.is_error
            assert "42" in json.dumps(result.content)
            progress: list[float] = []
            result = await client.call_tool("slow", {"steps": 2, "delay": 0.05},
                                            on_progress=lambda p, _t, _m: progress.append(p))
            assert not result.is_error
            assert progress == [1.0, 2.0]


# ---- scripted failures -----------------------------------------------------------------------------------------


async def test_500_with_text_body_fails_the_request_at_once() -> None:
    def behaviour(handler: ScriptedHandler, verb: str, body: Any) -> None:
        handler.reply(500, b"Internal Server Error: database on fire\n" + b"x" * 1000)

    with scripted(behaviour) as server:
        client = McpClient(StreamableHttpTransport(server.url, server="s"), name="s")
        started = time.monotonic()
        with pytest.raises(HttpStatusError) as info:
            await client.connect(timeout_s=30)
        assert time.monotonic() - started < FAST_S
        assert info.value.status == 500
        assert "HTTP 500" in str(info.value)
        assert "database on fire" in info.value.body_excerpt
        assert len(info.value.body_excerpt) <= 200
        assert info.value.server == "s"


async def test_500_after_connect_fails_that_call_and_keeps_the_session() -> None:
    def behaviour(handler: ScriptedHandler, verb: str, body: Any) -> None:
        if verb != "POST":
            handler.reply(405)
        elif body.get("method") == "initialize":
            handler.reply_json(init_result(body), {"Mcp-Session-Id": "abc"})
        elif is_notification(body):
            handler.reply(202)
        elif body.get("method") == "tools/call":
            handler.reply(500, b"boom")
        else:
            handler.reply_json({"jsonrpc": "2.0", "id": body["id"], "result": {"tools": []}})

    with scripted(behaviour) as server:
        transport = StreamableHttpTransport(server.url, server="s")
        async with connected(transport, "s") as client:
            started = time.monotonic()
            with pytest.raises(HttpStatusError) as info:
                await client.call_tool("x", {}, timeout_s=30)
            assert time.monotonic() - started < FAST_S
            assert info.value.status == 500 and info.value.body_excerpt == "boom"
            assert await client.list_tools() == []  # still usable
        posts = [(headers, body) for verb, headers, body in server.log if verb == "POST"]
        # the client may probe the 2026 era first (`server/discover`); the legacy session starts at initialize
        first = next(i for i, (_, body) in enumerate(posts) if body.get("method") == "initialize")
        assert "Mcp-Session-Id" not in posts[first][0] and "MCP-Protocol-Version" not in posts[first][0]
        for headers, _body in posts[first + 1:]:
            assert headers["Mcp-Session-Id"] == "abc"
            assert headers["MCP-Protocol-Version"] == "2025-06-18"
            assert headers["Accept"] == "application/json, text/event-stream"
        assert any(verb == "DELETE" and headers.get("Mcp-Session-Id") == "abc" for verb, headers, _ in server.log)


async def test_connection_refused_fails_fast() -> None:
    port = refused_port()
    url = f"http://127.0.0.1:{port}/mcp"
    client = McpClient(StreamableHttpTransport(url, server="gone"), name="gone")
    started = time.monotonic()
    # the reason is kept (not just "ConnectError"), with the host it concerns
    with pytest.raises(TransportError, match=re.escape(f"cannot connect to 127.0.0.1:{port} (connection refused)")):
        await client.connect(timeout_s=30)
    assert time.monotonic() - started < FAST_S


async def test_server_closing_mid_sse_fails_fast() -> None:
    def behaviour(handler: ScriptedHandler, verb: str, body: Any) -> None:
        if verb == "POST" and body.get("method") == "initialize":
            handler.reply_json(init_result(body), {"Mcp-Session-Id": "s1"})
        elif verb == "POST" and is_notification(body):
            handler.reply(202)
        elif verb == "POST":
            handler.start_sse()
            handler.sse('event: message\ndata: {"jsonrpc": "2.0", "met')  # and the connection closes
        else:
            handler.reply(405)

    with scripted(behaviour) as server:
        async with connected(StreamableHttpTransport(server.url, server="s"), "s") as client:
            started = time.monotonic()
            with pytest.raises(StreamLostError) as info:
                await client.call_tool("x", {}, timeout_s=30)
            assert time.monotonic() - started < FAST_S
            assert "closed the response stream" in str(info.value)


async def test_dropped_stream_is_resumed_with_last_event_id() -> None:
    def behaviour(handler: ScriptedHandler, verb: str, body: Any) -> None:
        if verb == "POST" and body.get("method") == "initialize":
            handler.reply_json(init_result(body, "2025-11-25"), {"Mcp-Session-Id": "s1"})
        elif verb == "POST" and is_notification(body):
            handler.reply(202)
        elif verb == "POST":
            handler.start_sse()
            handler.sse("id: ev-1\nretry: 50\ndata:\n\n")  # priming event, then the server hangs up (SEP-1699)
        elif verb == "GET" and handler.headers.get("Last-Event-ID") == "ev-1":
            handler.start_sse()
            reply = {"jsonrpc": "2.0", "id": server.last_id, "result": {"content": [{"type": "text", "text": "ok"}]}}
            handler.sse(f"id: ev-2\ndata: {json.dumps(reply)}\n\n")
        else:
            handler.reply(405)

    with scripted(behaviour) as server:
        server.last_id = 0  # type: ignore[attr-defined]
        original = server.behaviour

        def tracking(handler: ScriptedHandler, verb: str, body: Any) -> None:
            if verb == "POST" and isinstance(body, dict) and "id" in body:
                server.last_id = body["id"]  # type: ignore[attr-defined]
            original(handler, verb, body)

        server.behaviour = tracking
        async with connected(StreamableHttpTransport(server.url, server="s"), "s") as client:
            result = await client.call_tool("x", {}, timeout_s=10)
            assert result.content == [{"type": "text", "text": "ok"}]
        assert any(verb == "GET" and headers.get("Last-Event-ID") == "ev-1" for verb, headers, _ in server.log)


async def test_404_on_session_says_it_expired() -> None:
    def behaviour(handler: ScriptedHandler, verb: str, body: Any) -> None:
        if verb == "POST" and body.get("method") == "initialize":
            handler.reply_json(init_result(body), {"Mcp-Session-Id": "old"})
        elif verb == "POST" and is_notification(body):
            handler.reply(202)
        elif verb == "GET":
            handler.reply(405)
        elif "Mcp-Session-Id" not in handler.headers:  # the era probe, before any session (as the TS SDK says)
            handler.reply(400, b'{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid '
                          b'session ID provided"},"id":null}', "application/json")
        else:
            handler.reply(404, b'{"jsonrpc":"2.0","error":{"code":-32001,"message":"Session not found"}}',
                          "application/json")

    with scripted(behaviour) as server:
        async with connected(StreamableHttpTransport(server.url, server="s"), "s") as client:
            started = time.monotonic()
            with pytest.raises(HttpSessionExpiredError, match="session expired") as info:
                await client.list_tools()
            assert time.monotonic() - started < FAST_S
            assert info.value.status == 404
            with pytest.raises(TransportError, match="expired"):  # the connection is over for good
                await client.list_tools()


async def test_401_carries_status_and_www_authenticate() -> None:
    challenge = 'Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource"'

    def behaviour(handler: ScriptedHandler, verb: str, body: Any) -> None:
        handler.reply(401, b"unauthorized", headers={"WWW-Authenticate": challenge})

    with scripted(behaviour) as server:
        client = McpClient(StreamableHttpTransport(server.url, server="s", headers={"X-Test": "1"}), name="s")
        with pytest.raises(HttpStatusError) as info:
            await client.connect(timeout_s=30)
        assert info.value.status == 401
        assert info.value.www_authenticate == challenge
        assert server.log[0][1]["X-Test"] == "1"


async def test_non_json_body_fails_fast() -> None:
    def behaviour(handler: ScriptedHandler, verb: str, body: Any) -> None:
        handler.reply(200, b"<html>not json</html>", "application/json")

    with scripted(behaviour) as server:
        client = McpClient(StreamableHttpTransport(server.url, server="s"), name="s")
        with pytest.raises(TransportError, match="not JSON"):
            await client.connect(timeout_s=30)


async def test_close_is_idempotent_and_receive_raises_after() -> None:
    transport = StreamableHttpTransport("http://127.0.0.1:9/mcp", server="s")
    await transport.start()
    await transport.close()
    await transport.close()
    for _ in range(2):
        with pytest.raises(TransportError):
            await transport.receive()
    with pytest.raises(TransportError):
        await transport.send({"jsonrpc": "2.0", "method": "ping", "id": 1})


# ---- SSE parser ------------------------------------------------------------------------------------------------


def test_sse_parser_fields() -> None:
    parser = SseParser()
    events = [parser.feed_line(line) for line in [
        ": keep-alive", "retry: 250", "id: 7", "event: message", "data: {\"a\":", "data:1}", "",
        "data: second", "", "id", "", "retry: soon", "data", "",
    ]]
    dispatched = [event for event in events if event is not None]
    assert [(e.event, e.data, e.id) for e in dispatched] == [("message", '{"a":\n1}', "7"), ("message", "second", "7")]
    assert parser.retry_s == 0.25
    assert parser.last_event_id is None  # a bare `id` resets it


# ---- which session-expiry errors mean "that request did not run" (review finding 1) ------------------------------

SESSION_GONE = b'{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Session not found"}}'


def forgetting_server(calls: list[Any]):
    """Accepts tools/call (counts it) on an SSE stream it closes after a priming event; the resume GET gets 404:
    the server forgot the session while the call ran. Every later POST with the session gets 404 too."""
    live = {"s1"}

    def behaviour(handler: ScriptedHandler, verb: str, body: Any) -> None:
        session = handler.headers.get("Mcp-Session-Id")
        if verb == "GET" and handler.headers.get("Last-Event-ID"):
            live.clear()
            handler.reply(404, SESSION_GONE, "application/json")
        elif verb != "POST":
            handler.reply(405)
        elif body.get("method") == "initialize":
            handler.reply_json(init_result(body), {"Mcp-Session-Id": "s1"})
        elif session not in live:
            handler.reply(404, SESSION_GONE, "application/json")
        elif is_notification(body):
            handler.reply(202)
        elif body.get("method") == "tools/call":
            calls.append(body["id"])
            handler.start_sse()
            handler.sse("id: ev1\nretry: 10\ndata:\n\n")
        else:
            handler.reply_json({"jsonrpc": "2.0", "id": body["id"], "result": {"tools": []}})

    return behaviour


async def test_session_expiry_seen_by_another_request_is_not_marked_not_processed() -> None:
    calls: list[Any] = []
    with scripted(forgetting_server(calls)) as server:
        async with connected(StreamableHttpTransport(server.url, server="s"), "s") as client:
            # the call was accepted; the 404 came to the resume GET and ended the connection
            with pytest.raises(HttpSessionExpiredError) as through_inbox:
                await client.call_tool("transfer", {}, timeout_s=10)
            assert calls and through_inbox.value.not_processed is False
            # a message the transport is asked to send after that is not POSTed: it surely did not run
            with pytest.raises(HttpSessionExpiredError) as not_sent:
                await client.transport.send({"jsonrpc": "2.0", "id": 99, "method": "tools/list"})
            assert not_sent.value.not_processed is True
            assert through_inbox.value.not_processed is False  # the shared error stays unmarked
    assert len(calls) == 1


async def test_session_expiry_answering_the_post_itself_is_marked_not_processed() -> None:
    calls: list[Any] = []

    def behaviour(handler: ScriptedHandler, verb: str, body: Any) -> None:
        if verb == "POST" and body.get("method") == "tools/call":
            calls.append(body["id"])
            handler.reply(404, SESSION_GONE, "application/json")
        else:
            forgetting_server([])(handler, verb, body)

    with scripted(behaviour) as server:
        async with connected(StreamableHttpTransport(server.url, server="s"), "s") as client:
            with pytest.raises(HttpSessionExpiredError) as info:
                await client.call_tool("transfer", {}, timeout_s=10)
            assert info.value.not_processed is True
            assert "s1" not in str(info.value)  # the session id is not shown
            # ... while what the ended connection gives everything else is not marked
            with pytest.raises(HttpSessionExpiredError) as ended:
                await client.transport.receive()
            assert ended.value.not_processed is False


async def test_a_5xx_answering_the_post_is_not_marked_not_processed() -> None:
    def behaviour(handler: ScriptedHandler, verb: str, body: Any) -> None:
        if verb == "POST" and body.get("method") == "tools/call":
            handler.reply(500, b"crashed half way")
        else:
            forgetting_server([])(handler, verb, body)

    with scripted(behaviour) as server:
        async with connected(StreamableHttpTransport(server.url, server="s"), "s") as client:
            with pytest.raises(HttpStatusError) as info:
                await client.call_tool("transfer", {}, timeout_s=10)
            assert info.value.status == 500 and info.value.not_processed is False


# ---- POST stream readers are bounded (review finding 17) ---------------------------------------------------------


def hanging_streams(closed: list[Any]):
    """Answers each request with an SSE stream that never replies, sending keep-alives until the client hangs up
    (then records the request id in `closed`); a `ping` is answered at once (a barrier for the tests)."""
    def behaviour(handler: ScriptedHandler, verb: str, body: Any) -> None:
        if verb != "POST":
            handler.reply(405)
            return
        if body.get("method") == "ping":
            handler.reply_json({"jsonrpc": "2.0", "id": body["id"], "result": {}})
            return
        handler.start_sse()
        deadline = time.monotonic() + 20
        try:
            while time.monotonic() < deadline:
                handler.sse(": keep-alive\n\n")
                time.sleep(0.05)
        except OSError:
            closed.append(body["id"])

    return behaviour


async def _next_is_the_ping_reply(transport: StreamableHttpTransport, request_id: int) -> Any:
    """Send a ping (answered at once) and return the next message: the ping's reply unless something (such as a
    "stream lost" failure) was queued before it. A positive signal instead of waiting for nothing to arrive."""
    await transport.send({"jsonrpc": "2.0", "id": request_id, "method": "ping"})
    return await asyncio.wait_for(transport.receive(), 5)


async def _until(condition: Callable[[], bool], timeout_s: float = 5.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(0.02)


async def test_abandon_closes_that_requests_stream_without_a_reply() -> None:
    closed: list[Any] = []
    with scripted(hanging_streams(closed)) as server:
        transport = StreamableHttpTransport(server.url, server="s")
        await transport.start()
        try:
            await transport.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {}})
            await transport.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {}})
            transport.abandon(1)
            transport.abandon(99)  # unknown: ignored
            await _until(lambda: closed == [1])
            # no "stream lost" failure for a request nobody awaits: the ping's reply is the next message
            assert await _next_is_the_ping_reply(transport, 99) == {"jsonrpc": "2.0", "id": 99, "result": {}}
            assert closed == [1]  # the other stream is still read
        finally:
            await transport.close()


async def test_too_many_open_streams_close_the_oldest(monkeypatch: pytest.MonkeyPatch) -> None:
    import mini_claude.mcp.transports.http_post_streams as post_streams_module

    monkeypatch.setattr(post_streams_module, "MAX_POST_STREAMS", 2)
    closed: list[Any] = []
    with scripted(hanging_streams(closed)) as server:
        transport = StreamableHttpTransport(server.url, server="s")
        await transport.start()
        try:
            for request_id in (1, 2, 3):
                await transport.send({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {}})
            reply = await asyncio.wait_for(transport.receive(), 5)
            assert isinstance(reply, RequestFailed) and reply.request_id == 1
            assert isinstance(reply.error, StreamLostError)
            assert "more than 2 were open" in reply.error.message
            await _until(lambda: closed == [1])
            assert await _next_is_the_ping_reply(transport, 99) == {"jsonrpc": "2.0", "id": 99, "result": {}}  # one failure only: for the oldest
        finally:
            await transport.close()
