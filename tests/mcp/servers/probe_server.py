#!/usr/bin/env python3
"""A small stdlib stdio MCP server for the CLI integration tests (tests/integration).

    python probe_server.py [--pidfile PATH] [--marker PATH] [--hang] [--tool NAME]...

--pidfile PATH  append this process's pid (one per line) at startup
--marker PATH   create this file at startup (proves the process ran at all)
--hang          read stdin but never answer anything (a server that never finishes `initialize`)
--tool NAME     also offer an echo-like tool under this exact raw name (repeatable; e.g. "do.thing")
--resources LOG offer resources (one listed: docs://readme) and append every uri asked for by resources/read, one
                line each, to LOG (proves what reached the server)
--calls LOG     append every tools/call as one JSON line {"name", "arguments"} to LOG

Tools:
    echo {text}        the text back ("probe-echo:" + text)
    env_keys {}        JSON list of the environment variable names this process sees
    get_env {name}     the value of one environment variable ("<unset>" if absent)
    peek {}            readOnlyHint true: returns "peeked"
    poke {}            no annotations: returns "poked"
    fail {}            an isError result with text "probe failure"
    crash {}           exit 9 without answering
    vanish {}          close stdout without answering, then sleep 300 s ignoring stdin (alive, unreachable)
Exits on stdin EOF.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

TOOLS: list[dict[str, Any]] = [
    {"name": "echo", "description": "Echo text.", "inputSchema": {
        "type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}},
    {"name": "env_keys", "description": "Environment variable names.", "inputSchema": {"type": "object"},
     "annotations": {"readOnlyHint": True}},
    {"name": "get_env", "description": "One environment variable.", "inputSchema": {
        "type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}},
    {"name": "peek", "description": "Read-only.", "inputSchema": {"type": "object"},
     "annotations": {"readOnlyHint": True}},
    {"name": "poke", "description": "Not read-only.", "inputSchema": {"type": "object"}},
    {"name": "fail", "description": "Always an isError result.", "inputSchema": {"type": "object"}},
    {"name": "crash", "description": "Exit without answering.", "inputSchema": {"type": "object"}},
    {"name": "vanish", "description": "Close stdout and linger.", "inputSchema": {"type": "object"}},
]


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def text(value: str, *, error: bool = False) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}], "isError": error}


def call(name: str, args: dict[str, Any], extra: list[str]) -> dict[str, Any]:
    if name == "echo" or name in extra:
        return text(f"probe-echo:{name}:{args.get('text', '')}")
    if name == "env_keys":
        return text(json.dumps(sorted(os.environ)))
    if name == "get_env":
        return text(os.environ.get(str(args.get("name")), "<unset>"))
    if name == "peek":
        return text("peeked")
    if name == "poke":
        return text("poked")
    if name == "fail":
        return text("probe failure", error=True)
    if name == "crash":
        sys.stderr.write("probe: crashing on purpose\n")
        sys.stderr.flush()
        os._exit(9)
    if name == "vanish":
        sys.stdout.flush()
        os.close(1)
        time.sleep(300)
        os._exit(0)
    raise KeyError(name)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pidfile")
    parser.add_argument("--marker")
    parser.add_argument("--hang", action="store_true")
    parser.add_argument("--tool", action="append", default=[])
    parser.add_argument("--resources")
    parser.add_argument("--calls")
    opts = parser.parse_args()
    if opts.pidfile:
        with open(opts.pidfile, "a") as handle:
            handle.write(f"{os.getpid()}\n")
    if opts.marker:
        Path(opts.marker).write_text("started\n")
    tools = TOOLS + [{"name": n, "description": f"Echo as {n}.", "inputSchema": {
        "type": "object", "properties": {"text": {"type": "string"}}}} for n in opts.tool]
    for line in sys.stdin:
        if opts.hang or not line.strip():
            continue
        msg = json.loads(line)
        method, rid = msg.get("method"), msg.get("id")
        if rid is None:
            continue
        if method == "initialize":
            capabilities: dict[str, Any] = {"tools": {}, **({"resources": {}} if opts.resources else {})}
            result: Any = {"protocolVersion": msg["params"]["protocolVersion"],
                           "capabilities": capabilities, "serverInfo": {"name": "probe", "version": "1"}}
        elif method == "ping":
            result = {}
        elif method == "tools/list":
            result = {"tools": tools}
        elif method == "resources/list" and opts.resources:
            result = {"resources": [{"uri": "docs://readme", "name": "readme", "mimeType": "text/plain"}]}
        elif method == "resources/read" and opts.resources:
            uri = str(msg["params"].get("uri"))
            with open(opts.resources, "a") as handle:
                handle.write(uri + "\n")
            result = {"contents": [{"uri": uri, "mimeType": "text/plain", "text": "resource text"}]}
        elif method == "tools/call":
            if opts.calls:
                with open(opts.calls, "a") as handle:
                    handle.write(json.dumps({"name": msg["params"]["name"],
                                             "arguments": msg["params"].get("arguments")}) + "\n")
            try:
                result = call(msg["params"]["name"], msg["params"].get("arguments") or {}, opts.tool)
            except KeyError:
                send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32602, "message": "unknown tool"}})
                continue
        else:
            send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "method not found"}})
            continue
        send({"jsonrpc": "2.0", "id": rid, "result": result})
    return 0


if __name__ == "__main__":
    sys.exit(main())
