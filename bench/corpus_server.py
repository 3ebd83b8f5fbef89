"""A stdio MCP server that serves a saved `tools/list` (a file of bench/tool_corpus/servers/): the corpus "configured
as real stdio servers". stdlib only, newline-delimited JSON-RPC 2.0.

    python bench/corpus_server.py bench/tool_corpus/servers/github.json [--later MORE.json]

`tools/call` answers with one text block naming the tool and its arguments (there is no real service behind it).
`--later FILE`: after the first `tools/call`, FILE's tools join the list and `notifications/tools/list_changed` is
sent (tests of the tool-search index following a refresh). Exits on stdin EOF.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


def _tools(path: str) -> list[dict[str, Any]]:
    return list(json.loads(Path(path).read_text(encoding="utf-8"))["tools"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tools_file")
    parser.add_argument("--later", help="tools that join after the first tools/call")
    args = parser.parse_args(argv)
    tools = _tools(args.tools_file)
    later = _tools(args.later) if args.later else []
    out = sys.stdout.buffer

    def send(message: dict[str, Any]) -> None:
        out.write(json.dumps(message, ensure_ascii=False).encode() + b"\n")
        out.flush()

    for line in sys.stdin.buffer:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if not isinstance(message, dict) or "id" not in message or "method" not in message:
            continue
        method, params = message["method"], message.get("params") or {}
        result: dict[str, Any]
        if method == "initialize":
            result = {"protocolVersion": params.get("protocolVersion", "2025-06-18"),
                      "capabilities": {"tools": {"listChanged": True}},
                      "serverInfo": {"name": Path(args.tools_file).stem, "version": "corpus"}}
        elif method == "tools/list":
            result = {"tools": tools}
        elif method == "tools/call":
            text = f"{params.get('name')} called with {json.dumps(params.get('arguments') or {}, sort_keys=True)}"
            result = {"content": [{"type": "text", "text": text}]}
        elif method == "ping":
            result = {}
        else:
            send({"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": f"no {method}"}})
            continue
        send({"jsonrpc": "2.0", "id": message["id"], "result": result})
        if method == "tools/call" and later:
            tools, later = tools + later, []
            send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
    return 0


if __name__ == "__main__":
    sys.exit(main())
