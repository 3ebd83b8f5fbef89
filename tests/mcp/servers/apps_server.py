#!/usr/bin/env python3
"""A stdlib stdio MCP server shaped like the MCP Apps examples (extension `io.modelcontextprotocol/ui`): tools that
carry `_meta.ui` as the npm example servers send it (the nested `resourceUri` and `visibility`, and the deprecated
flat `ui/resourceUri` key), one of them for its view only, and the `ui://` resource they point at.

Tools:
    show_board {}   visibility ["model", "app"], with a view: "board shown"
    refresh {}      visibility ["app"]: the view's own tool, never the model's: "refreshed"
    plain {}        no `_meta`: "plain"
Exits on stdin EOF.
"""

from __future__ import annotations

import json
import sys
from typing import Any

VIEW = "ui://board/view.html"
TOOLS: list[dict[str, Any]] = [
    {"name": "show_board", "description": "Show the board.", "inputSchema": {"type": "object"},
     "_meta": {"ui": {"resourceUri": VIEW, "visibility": ["model", "app"]}, "ui/resourceUri": VIEW}},
    {"name": "refresh", "description": "Refresh the board (for the view).", "inputSchema": {"type": "object"},
     "_meta": {"ui": {"resourceUri": VIEW, "visibility": ["app"]}, "ui/resourceUri": VIEW}},
    {"name": "plain", "description": "A tool without a view.", "inputSchema": {"type": "object"}},
]
ANSWERS = {"show_board": "board shown", "refresh": "refreshed", "plain": "plain"}


def answer(message: dict[str, Any]) -> dict[str, Any] | None:
    method, params = message.get("method"), message.get("params") or {}
    if "id" not in message:
        return None
    if method == "initialize":
        result: dict[str, Any] = {"protocolVersion": params.get("protocolVersion", "2025-06-18"),
                                  "capabilities": {"tools": {}, "resources": {}},
                                  "serverInfo": {"name": "apps", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call":
        name = params.get("name")
        if name not in ANSWERS:
            return {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32602, "message": f"no tool {name}"}}
        result = {"content": [{"type": "text", "text": ANSWERS[name]}]}
    elif method == "resources/list":
        result = {"resources": []}
    elif method == "resources/read":
        result = {"contents": [{"uri": VIEW, "mimeType": "text/html;profile=mcp-app", "text": "<p>board</p>"}]}
    elif method == "ping":
        result = {}
    else:
        return {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": f"no method {method}"}}
    return {"jsonrpc": "2.0", "id": message["id"], "result": result}


def main() -> None:
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        reply = answer(message) if isinstance(message, dict) else None
        if reply is not None:
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
