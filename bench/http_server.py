"""A minimal, fast Streamable HTTP MCP server (stdlib asyncio only) that every client of bench/http_bench.py talks to.

Stateless, JSON responses only: each POST carries one JSON-RPC message and gets one `application/json` reply
(a notification gets `202 Accepted`); no session id, no SSE, GET and DELETE answer `405`. It speaks both eras:

* legacy (2025-11-25 and older): `initialize`, `notifications/initialized`, `tools/list`, `tools/call`, `ping`;
  `server/discover` is "method not found";
* modern (2026-07-28, chosen by the `MCP-Protocol-Version` header): `server/discover`, and every result carries
  `"resultType":"complete"`; the per-request `_meta` is accepted and not checked.

Tools and payloads are the stdio bench server's (`bench/server.py`: `echo`, `big`, fillers), pre-serialised; the
HTTP layer is a hand-written HTTP/1.1 keep-alive parser on `asyncio.Protocol`, so the server costs a few tens of
µs per request and the client's cost dominates.

Run: python bench/http_server.py --port 0 --prebuild 10000000   (prints `LISTENING <url>` once it accepts)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
from typing import Any

from server import Server, _encode  # bench/server.py: tools, texts, pre-serialised results

MODERN_VERSIONS = ("2026-07-28",)
PATH = "/mcp"
MAX_HEADER_BYTES = 64 * 1024
COMPLETE = b'"resultType":"complete",'
SERVER_INFO = {"name": "bench-http-server", "version": "1.0"}


class Handler:
    """JSON-RPC message -> reply body (bytes), per era; results are pre-serialised where they can be."""

    def __init__(self, core: Server) -> None:
        self.core = core
        # list results need a cache hint in 2026-07-28 (the SDK refuses one without `ttlMs`)
        self.modern_tools = b"{" + COMPLETE + b'"ttlMs":0,"cacheScope":"private",' + core.tools_result[1:]
        self.modern_big: dict[int, bytes] = {}
        self.discover = _encode({
            "resultType": "complete", "supportedVersions": list(MODERN_VERSIONS), "capabilities": {"tools": {}},
            "cacheScope": "private", "ttlMs": 0, "_meta": {"io.modelcontextprotocol/serverInfo": SERVER_INFO},
        }).encode()

    def reply(self, message: Any, modern: bool) -> bytes | None:
        if not isinstance(message, dict):
            return _error(b"null", -32600, "Invalid request")
        if "id" not in message:
            return None
        if not modern:
            if message.get("method") == "server/discover":
                return _error(_encode(message["id"]).encode(), -32601, "Method not found: server/discover")
            line = self.core.handle(message)
            return line[:-1] if line is not None else None  # without the stdio server's newline
        rid = _encode(message["id"]).encode()
        method = message.get("method")
        params = message.get("params") or {}
        if method == "tools/call":
            name = params.get("name")
            args = params.get("arguments") or {}
            if name == "echo":
                text = _encode(str(args.get("text", "")))
                body = (b'{"resultType":"complete","content":[{"type":"text","text":' + text.encode()
                        + b'}],"isError":false}')
            elif name == "big":
                body = self.big(int(args.get("size", self.core.default_size)))
            else:
                return _error(rid, -32602, f"Unknown tool: {name}")
        elif method == "tools/list":
            body = self.modern_tools
        elif method == "server/discover":
            body = self.discover
        elif method == "ping":
            body = b'{"resultType":"complete"}'
        else:
            return _error(rid, -32601, f"Method not found: {method}")
        return b'{"jsonrpc":"2.0","id":' + rid + b',"result":' + body + b"}"

    def big(self, size: int) -> bytes:
        cached = self.modern_big.get(size)
        if cached is None:
            cached = self.modern_big[size] = b"{" + COMPLETE + self.core.big_result(size)[1:]
        return cached


def _error(rid: bytes, code: int, text: str) -> bytes:
    return b'{"jsonrpc":"2.0","id":' + rid + b',"error":' + _encode({"code": code, "message": text}).encode() + b"}"


def _response(status: str, body: bytes = b"", *, close: bool = False, extra: str = "") -> bytes:
    head = f"HTTP/1.1 {status}\r\ncontent-length: {len(body)}\r\n{extra}"
    if body:
        head += "content-type: application/json\r\n"
    if close:
        head += "connection: close\r\n"
    return (head + "\r\n").encode() + body


class HttpProtocol(asyncio.Protocol):
    """One keep-alive HTTP/1.1 connection: requests parsed from a byte buffer, answered in order."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.buffer = bytearray()
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        out: list[bytes] = []
        close = False
        while not close:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                if len(self.buffer) > MAX_HEADER_BYTES:
                    out.append(_response("431 Request Header Fields Too Large", close=True))
                    close = True
                break
            lines = self.buffer[:end].decode("latin-1").split("\r\n")
            request_line = lines[0].split(" ")
            headers = {}
            for line in lines[1:]:
                key, _, value = line.partition(":")
                headers[key.strip().lower()] = value.strip()
            if "chunked" in headers.get("transfer-encoding", "").lower():
                out.append(_response("411 Length Required", close=True))
                close = True
                break
            length = int(headers.get("content-length") or 0)
            if len(self.buffer) < end + 4 + length:
                break
            body = bytes(self.buffer[end + 4:end + 4 + length])
            del self.buffer[:end + 4 + length]
            close = headers.get("connection", "").lower() == "close"
            method = request_line[0]
            target = request_line[1].split("?", 1)[0] if len(request_line) > 1 else ""
            out.append(self.respond(method, target, headers, body, close))
        if out and self.transport is not None:
            self.transport.write(out[0] if len(out) == 1 else b"".join(out))
            if close:
                self.transport.close()

    def respond(self, method: str, target: str, headers: dict[str, str], body: bytes, close: bool) -> bytes:
        if target != PATH:
            return _response("404 Not Found", close=close)
        if method != "POST":
            return _response("405 Method Not Allowed", close=close, extra="allow: POST\r\n")
        try:
            message = json.loads(body)
        except ValueError:
            return _response("400 Bad Request", _error(b"null", -32700, "Parse error"), close=close)
        modern = headers.get("mcp-protocol-version") in MODERN_VERSIONS
        reply = self.handler.reply(message, modern)
        if reply is None:
            return _response("202 Accepted", close=close)
        return _response("200 OK", reply, close=close)


async def serve(handler: Handler, host: str, port: int) -> None:
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: HttpProtocol(handler), host, port, backlog=256)
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    bound = server.sockets[0].getsockname()
    print(f"LISTENING http://{bound[0]}:{bound[1]}{PATH}", flush=True)
    async with server:
        await stop.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0: an ephemeral port (printed on stdout)")
    parser.add_argument("--tools", type=int, default=2, help="number of tools listed (>= 1)")
    parser.add_argument("--size", type=int, default=1_000_000, help="default size of `big` results in bytes")
    parser.add_argument("--prebuild", default="", help="comma-separated `big` sizes to serialise at startup")
    args = parser.parse_args()
    prebuild = [int(x) for x in args.prebuild.split(",") if x.strip()]
    handler = Handler(Server(max(1, args.tools), args.size, prebuild))
    for size in prebuild:
        handler.big(size)
    asyncio.run(serve(handler, args.host, args.port))
    sys.exit(0)


if __name__ == "__main__":
    main()
