#!/usr/bin/env python3
"""A stdlib stdio MCP server for the MCP Apps host's session tests: one tool with a `ui://` view, tools for the view
only, a model-only one, and counters that say which calls reached the server at all.

Tools (`_meta.ui.visibility` in brackets; absent means both):
    show_board {}   [model, app], with the view: "board shown", structuredContent {"cells": 3}
    bump {}         [app]: "bumped N" (N counts the bumps)
    wipe {}         [model, app]: "wiped N"
    secret {}       [model]: "secret"
    counts {}       [app]: the counters as JSON text: {"bump": N, "wipe": N, "secret": N}
    caps {}         no `_meta`: the client capabilities `initialize` carried, as JSON text
    slow_board {}   [model, app], with the view: never answers (the call can only be interrupted)
Exits on stdin EOF.
"""

from __future__ import annotations

import json
import sys
from typing import Any

VIEW = "ui://board/view.html"
HTML = "<!doctype html><html><body><p id='board'>board</p></body></html>"


def _tool(name: str, visibility: list[str] | None, view: bool = False) -> dict[str, Any]:
    ui: dict[str, Any] = {}
    if view:
        ui["resourceUri"] = VIEW
    if visibility is not None:
        ui["visibility"] = visibility
    tool: dict[str, Any] = {"name": name, "description": f"The {name} tool.", "inputSchema": {"type": "object"}}
    if ui:
        tool["_meta"] = {"ui": ui, **({"ui/resourceUri": VIEW} if view else {})}
    return tool


TOOLS = [_tool("show_board", None, view=True), _tool("bump", ["app"]), _tool("wipe", ["model", "app"]),
         _tool("secret", ["model"]), _tool("counts", ["app"]), _tool("caps", None),
         _tool("slow_board", None, view=True)]
COUNTS = {"bump": 0, "wipe": 0, "secret": 0}
CAPS: dict[str, Any] = {}


def call(name: str) -> dict[str, Any] | None:
    if name == "show_board":
        return {"content": [{"type": "text", "text": "board shown"}], "structuredContent": {"cells": 3}}
    if name in COUNTS:
        COUNTS[name] += 1
        return {"content": [{"type": "text", "text": f"{name}ed {COUNTS[name]}" if name != "secret" else "secret"}]}
    if name == "counts":
        return {"content": [{"type": "text", "text": json.dumps(COUNTS, sort_keys=True)}]}
    if name == "caps":
        return {"content": [{"type": "text", "text": json.dumps(CAPS, sort_keys=True)}]}
    return None


def answer(message: dict[str, Any]) -> dict[str, Any] | None:
    method, params = message.get("method"), message.get("params") or {}
    if "id" not in message:
        return None
    if method == "initialize":
        CAPS.update(params.get("capabilities") or {})
        result: dict[str, Any] | None = {"protocolVersion": params.get("protocolVersion", "2025-06-18"),
                                         "capabilities": {"tools": {}, "resources": {}},
                                         "serverInfo": {"name": "apps-host", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call":
        if params.get("name") == "slow_board":
            return None  # no answer, ever
        result = call(str(params.get("name")))
        if result is None:
            return {"jsonrpc": "2.0", "id": message["id"],
                    "error": {"code": -32602, "message": f"no tool {params.get('name')}"}}
    elif method == "resources/list":
        result = {"resources": []}
    elif method == "resources/read":
        result = {"contents": [{"uri": VIEW, "mimeType": "text/html;profile=mcp-app", "text": HTML}]}
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
