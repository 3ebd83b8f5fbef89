#!/usr/bin/env python3
"""A minimal Streamable HTTP MCP server (stdlib only, JSON answers, no sessions) for the trust-boundary tests.

    python tiny_http_server.py (--port PORT | --fd FD) [--log FILE]

POST any path: `initialize`, `ping`, `tools/list` (`echo`, `deep_reply`) and `tools/call`; notifications get 202;
anything else -32601. `deep_reply` answers with a result nested 10,000 levels deep (written as bytes). `--log`:
each request's path (with its query string) is appended to FILE, one a line, so a test can tell the server was
reached with its URL's secret while the client's logs show none of it. `--fd`: serve on an inherited socket the
test already bound and listens on (`tests.helpers.start_tiny_http`), so no other process can take the port first.
"""

from __future__ import annotations

import argparse
import json
import socket
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MESSAGE_DEPTH = 10_000
TOOLS = [{"name": "echo", "description": "Echo text back.",
          "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}},
         {"name": "deep_reply", "description": "Answers too deep.", "inputSchema": {"type": "object"}}]


class Handler(BaseHTTPRequestHandler):
    log_file: str | None = None

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet: the test reads --log instead

    def do_POST(self) -> None:
        if self.log_file:
            with open(self.log_file, "a", encoding="utf-8") as handle:
                handle.write(self.path + "\n")
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        message = json.loads(body)
        method, request_id = message.get("method"), message.get("id")
        if method is None or request_id is None:
            self._answer(202, b"")
            return
        params = message.get("params") or {}
        rid = json.dumps(request_id).encode()
        if method == "initialize":
            result: Any = {"protocolVersion": params.get("protocolVersion", "2025-06-18"),
                           "capabilities": {"tools": {}}, "serverInfo": {"name": "tiny", "version": "1.0"}}
        elif method == "ping":
            result = {}
        elif method == "tools/list":
            result = {"tools": TOOLS}
        elif method == "tools/call" and params.get("name") == "deep_reply":
            deep = b"[" * MESSAGE_DEPTH + b"]" * MESSAGE_DEPTH
            self._answer(200, b'{"jsonrpc":"2.0","id":' + rid + b',"result":{"content":' + deep + b"}}")
            return
        elif method == "tools/call":
            text = str((params.get("arguments") or {}).get("text", ""))
            result = {"content": [{"type": "text", "text": text}]}
        else:
            error = {"code": -32601, "message": f"no method {method}"}
            self._answer(200, json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error}).encode())
            return
        self._answer(200, json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}).encode())

    def do_GET(self) -> None:
        self._answer(405, b"")  # no server-to-client stream

    def do_DELETE(self) -> None:
        self._answer(405, b"")

    def _answer(self, status: int, body: bytes) -> None:
        self.send_response(status)
        if body:
            self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def main() -> None:
    parser = argparse.ArgumentParser()
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--port", type=int)
    where.add_argument("--fd", type=int, help="an inherited socket, bound and listening (the test holds the port)")
    parser.add_argument("--log")
    args = parser.parse_args()
    Handler.log_file = args.log
    if args.fd is None:
        ThreadingHTTPServer(("127.0.0.1", args.port), Handler).serve_forever()
        return
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler, bind_and_activate=False)
    server.socket.close()
    server.socket = socket.socket(fileno=args.fd)
    server.server_address = server.socket.getsockname()
    server.serve_forever()


if __name__ == "__main__":
    main()
