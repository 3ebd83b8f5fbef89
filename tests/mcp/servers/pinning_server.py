#!/usr/bin/env python3
"""A stdlib stdio MCP server whose tool definitions come from a JSON file, for the tool-pinning tests.

    python pinning_server.py DEFS_PATH

DEFS_PATH holds a JSON list of tool objects (name, description, inputSchema, …); it is read again for every
`tools/list`, so a test changes a tool's definition by rewriting the file. Every listed tool echoes its arguments
("<name>:" + JSON). One extra tool is always there:

    announce {}   sends `notifications/tools/list_changed`, then answers "announced"

Exits on stdin EOF.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ANNOUNCE: dict[str, Any] = {"name": "announce", "description": "Send tools/list_changed.",
                            "inputSchema": {"type": "object"}}


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def tools(defs: Path) -> list[dict[str, Any]]:
    return [*json.loads(defs.read_text(encoding="utf-8")), ANNOUNCE]


def main() -> int:
    defs = Path(sys.argv[1])
    for line in sys.stdin:
        if not line.strip():
            continue
        msg = json.loads(line)
        method, rid = msg.get("method"), msg.get("id")
        if rid is None:
            continue
        if method == "initialize":
            result: Any = {"protocolVersion": msg["params"]["protocolVersion"],
                           "capabilities": {"tools": {"listChanged": True}},
                           "serverInfo": {"name": "pinning", "version": "1"}}
        elif method == "ping":
            result = {}
        elif method == "tools/list":
            result = {"tools": tools(defs)}
        elif method == "tools/call":
            name = msg["params"]["name"]
            if name == "announce":
                send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
                text = "announced"
            else:
                text = f"{name}:{json.dumps(msg['params'].get('arguments') or {}, sort_keys=True)}"
            result = {"content": [{"type": "text", "text": text}], "isError": False}
        else:
            send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "method not found"}})
            continue
        send({"jsonrpc": "2.0", "id": rid, "result": result})
    return 0


if __name__ == "__main__":
    sys.exit(main())
