#!/usr/bin/env python3
"""A stdlib stdio MCP server whose `instructions` come from a file, for the instructions-pinning tests.

    python instructions_server.py TEXT_PATH

TEXT_PATH holds the instructions sent in the `initialize` result (read at each start; a missing or empty file
means no instructions). One tool, `ping {}`, answers "pong". Exits on stdin EOF.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

PING: dict[str, Any] = {"name": "ping", "description": "Answer pong.", "inputSchema": {"type": "object"}}


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main() -> int:
    source = Path(sys.argv[1])
    for line in sys.stdin:
        if not line.strip():
            continue
        msg = json.loads(line)
        method, rid = msg.get("method"), msg.get("id")
        if rid is None:
            continue
        if method == "initialize":
            text = source.read_text(encoding="utf-8") if source.exists() else ""
            result: Any = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                           "serverInfo": {"name": "instructions", "version": "1"}}
            if text:
                result["instructions"] = text
        elif method == "ping":
            result = {}
        elif method == "tools/list":
            result = {"tools": [PING]}
        elif method == "tools/call":
            result = {"content": [{"type": "text", "text": "pong"}], "isError": False}
        else:
            send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "method not found"}})
            continue
        send({"jsonrpc": "2.0", "id": rid, "result": result})
    return 0


if __name__ == "__main__":
    sys.exit(main())
