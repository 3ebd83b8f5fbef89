"""The era choice and the modern wire over real loopback HTTP (StreamableHttpTransport against small scripted
servers): a modern server is adopted with matching `MCP-Protocol-Version` headers; legacy servers that answer
the probe with 400/404/405 get `initialize`."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from mini_claude.mcp.client import McpClient
from mini_claude.mcp.transports.http import StreamableHttpTransport

pytestmark = pytest.mark.timeout(20)

MODERN = "2026-07-28"
Reply = tuple[int, dict[str, Any] | bytes | None]
Behaviour = Callable[[dict[str, Any]], Reply]


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, *_args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
        self.server.log.append(({k.lower(): v for k, v in self.headers.items()}, body))
        status, payload = self.server.behaviour(body)
        data = json.dumps(payload).encode() if isinstance(payload, dict) else payload or b""
        self.send_response(status)
        if isinstance(payload, dict):
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self.send_response(405)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_DELETE = do_GET


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, behaviour: Behaviour) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.behaviour = behaviour
        self.log: list[tuple[dict[str, str], dict[str, Any]]] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/mcp"


@contextmanager
def serving(behaviour: Behaviour) -> Iterator[_Server]:
    server = _Server(behaviour)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def result(body: dict[str, Any], value: dict[str, Any]) -> Reply:
    return 200, {"jsonrpc": "2.0", "id": body["id"], "result": value}


def modern_server(body: dict[str, Any]) -> Reply:
    method = body.get("method")
    if method == "server/discover":
        return result(body, {"resultType": "complete", "supportedVersions": [MODERN], "capabilities": {"tools": {}},
                             "serverInfo": {"name": "m", "version": "1"}, "ttlMs": 0, "cacheScope": "private"})
    if method == "tools/list":
        return result(body, {"resultType": "complete", "ttlMs": 0, "tools": [{"name": "sql", "inputSchema": {
            "type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}}}]})
    if method == "tools/call":
        return result(body, {"resultType": "complete", "content": [{"type": "text", "text": "ok"}]})
    return 404, {"jsonrpc": "2.0", "id": body.get("id"), "error": {"code": -32601, "message": "Method not found"}}


def legacy_server(probe_reply: Reply) -> Behaviour:
    def behaviour(body: dict[str, Any]) -> Reply:
        method = body.get("method")
        if method == "initialize":
            return result(body, {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                                 "serverInfo": {"name": "legacy", "version": "1"}})
        if "id" not in body:
            return 202, None
        if method == "tools/list":
            return result(body, {"tools": []})
        return probe_reply
    return behaviour


async def test_modern_server_over_http() -> None:
    with serving(modern_server) as server:
        transport = StreamableHttpTransport(server.url, server="m")
        client = McpClient(transport, name="m")
        await client.connect(timeout_s=10)
        try:
            assert (client.era, client.protocol_version) == ("modern", MODERN)
            assert [t.name for t in await client.list_tools()] == ["sql"]
            assert (await client.call_tool("sql", {"region": "eu-west1"})).content[0]["text"] == "ok"
        finally:
            await client.close()
        methods = [body["method"] for _, body in server.log]
        assert methods == ["server/discover", "tools/list", "tools/call"]
        for headers, body in server.log:
            assert headers["mcp-protocol-version"] == body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"]
            assert "mcp-session-id" not in headers
        if hasattr(transport, "message_headers"):  # the transport's SEP-2243 hook
            headers = server.log[-1][0]
            assert headers["mcp-method"] == "tools/call" and headers["mcp-name"] == "sql"
            assert headers["mcp-param-region"] == "eu-west1"


@pytest.mark.parametrize("probe_reply", [
    (404, b"Not Found"),
    (405, None),
    (400, {"jsonrpc": "2.0", "id": None, "error": {"code": -32000, "message": "Bad Request: No valid session ID"}}),
], ids=["404", "405", "400-jsonrpc-no-id"])
async def test_legacy_server_over_http_falls_back(probe_reply: Reply) -> None:
    with serving(legacy_server(probe_reply)) as server:
        client = McpClient(StreamableHttpTransport(server.url, server="l"), name="l")
        await client.connect(timeout_s=10)
        try:
            assert (client.era, client.protocol_version) == ("legacy", "2025-11-25")
            assert await client.list_tools() == []
        finally:
            await client.close()
        methods = [body.get("method") for _, body in server.log]
        assert methods[:3] == ["server/discover", "initialize", "notifications/initialized"]
        init_headers = server.log[1][0]
        assert "mcp-protocol-version" not in init_headers  # the modern header was reset before initialize
        assert server.log[3][0]["mcp-protocol-version"] == "2025-11-25"
