"""A minimal, fast stdio MCP server (stdlib only) that every benchmarked client talks to.

Methods: `initialize`, `ping`, `tools/list` (`--tools N` tools: `echo`, `big`, then fillers), `tools/call` of
`echo` (returns its `text` argument) and `big` (returns a text of `size` bytes, default `--size`).

It must never be the bottleneck: whole replies are pre-serialised where possible (tools/list, big payloads given
in `--prebuild`), stdin is read in large chunks and all replies to one chunk go out in one write, so 64 requests
in flight cost the server a handful of syscalls.

Run: python bench/server.py --tools 500 --size 1000000 --prebuild 1000000,10000000
"""

from __future__ import annotations

import argparse
import json
import os
import sys

KNOWN_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
READ_CHUNK_BYTES = 1 << 20
TEXT_LINE = "line {:07d}: the quick brown fox jumps over the lazy dog, 0123456789 ABCDEFGH\n"

_encode = json.JSONEncoder(separators=(",", ":")).encode


def make_tools(count: int) -> list[dict]:
    """`echo`, `big`, then fillers with a realistic description and schema (a tools list is mostly these)."""
    tools = [
        {"name": "echo", "description": "Return the `text` argument unchanged.",
         "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}},
        {"name": "big", "description": "Return a text of `size` bytes.",
         "inputSchema": {"type": "object", "properties": {"size": {"type": "integer", "minimum": 0}}}},
    ]
    for i in range(len(tools), count):
        tools.append({
            "name": f"tool_{i:04d}",
            "title": f"Tool number {i}",
            "description": (f"Filler tool {i}: searches the project index for symbols matching a pattern and "
                            "returns file paths with line numbers. Read-only."),
            "inputSchema": {
                "type": "object",
                "properties": {
                    "pattern": {"type": "string", "description": "A regular expression."},
                    "path": {"type": "string", "description": "Directory to search, default the root."},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 100},
                },
                "required": ["pattern"],
            },
            "annotations": {"readOnlyHint": True},
        })
    return tools[:count]


def make_text(size: int) -> str:
    line_len = len(TEXT_LINE.format(0))
    text = "".join(TEXT_LINE.format(i) for i in range(size // line_len + 1))
    return text[:size]


class Server:
    def __init__(self, tools: int, size: int, prebuild: list[int]) -> None:
        self.default_size = size
        self.tools_result = _encode({"tools": make_tools(tools)}).encode()
        self.big: dict[int, bytes] = {}
        for n in prebuild:
            self.big_result(n)

    def big_result(self, size: int) -> bytes:
        cached = self.big.get(size)
        if cached is None:
            cached = self.big[size] = _encode({"content": [{"type": "text", "text": make_text(size)}]}).encode()
        return cached

    def handle(self, message: dict) -> bytes | None:
        """The reply line (bytes, with newline) to one message, or None for a notification."""
        if "id" not in message:
            return None
        rid = _encode(message["id"]).encode()
        method = message.get("method")
        params = message.get("params") or {}
        if method == "tools/call":
            name = params.get("name")
            args = params.get("arguments") or {}
            if name == "echo":
                text = _encode(str(args.get("text", "")))
                body = b'{"content":[{"type":"text","text":' + text.encode() + b'}],"isError":false}'
            elif name == "big":
                body = self.big_result(int(args.get("size", self.default_size)))
            else:
                return _error(rid, -32602, f"Unknown tool: {name}")
        elif method == "tools/list":
            body = self.tools_result
        elif method == "initialize":
            asked = params.get("protocolVersion")
            version = asked if asked in KNOWN_VERSIONS else KNOWN_VERSIONS[0]
            body = _encode({"protocolVersion": version, "capabilities": {"tools": {}},
                            "serverInfo": {"name": "bench-server", "version": "1.0"}}).encode()
        elif method == "ping":
            body = b"{}"
        else:
            return _error(rid, -32601, f"Method not found: {method}")
        return b'{"jsonrpc":"2.0","id":' + rid + b',"result":' + body + b"}\n"


def _error(rid: bytes, code: int, text: str) -> bytes:
    return (b'{"jsonrpc":"2.0","id":' + rid + b',"error":'
            + _encode({"code": code, "message": text}).encode() + b"}\n")


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def serve(server: Server) -> None:
    pending = b""
    while True:
        chunk = os.read(0, READ_CHUNK_BYTES)
        if not chunk:
            return
        *lines, pending = (pending + chunk).split(b"\n")
        out = []
        for line in lines:
            if not line.strip():
                continue
            try:
                message = json.loads(line)
            except ValueError:
                out.append(_error(b"null", -32700, "Parse error"))
                continue
            if isinstance(message, dict):
                reply = server.handle(message)
                if reply is not None:
                    out.append(reply)
        if out:
            _write_all(1, out[0] if len(out) == 1 else b"".join(out))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tools", type=int, default=2, help="number of tools listed (>= 1)")
    parser.add_argument("--size", type=int, default=1_000_000, help="default size of `big` results in bytes")
    parser.add_argument("--prebuild", default="", help="comma-separated `big` sizes to serialise at startup")
    args = parser.parse_args()
    prebuild = [int(x) for x in args.prebuild.split(",") if x.strip()]
    try:
        serve(Server(max(1, args.tools), args.size, prebuild))
    except (BrokenPipeError, KeyboardInterrupt):
        pass  # the client went away
    sys.exit(0)


if __name__ == "__main__":
    main()
