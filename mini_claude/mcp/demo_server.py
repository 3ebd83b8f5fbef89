"""A tiny stdio MCP server bundled for the demo: stdlib only, newline-delimited JSON-RPC 2.0 on stdin/stdout.

Run it with `python -m mini_claude.mcp.demo_server`. It answers `initialize` (with the client's protocol version
when it is one it knows, else the latest), `ping`, `tools/list` and `tools/call`; it exits on stdin EOF.

Tools (all read-only): `add` and `multiply` {a, b: number}, `echo` {text}, `now` {} (UTC, ISO 8601) and
`word_count` {text}. Bad arguments give an `isError` result that says what is wrong; an unknown tool is a
JSON-RPC -32602 error. Logs go to stderr, never to stdout (stdout is the protocol channel).
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, BinaryIO

__all__ = ["PROTOCOL_VERSIONS", "SERVER_NAME", "TOOLS", "handle_message", "main", "serve"]

PROTOCOL_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
SERVER_NAME = "mini-claude-demo"
SERVER_VERSION = "0.1.0"
INSTRUCTIONS = ("Demo server bundled with mini-claude. Use `add` and `multiply` for exact arithmetic, `word_count` "
                "to count words, `echo` to repeat text and `now` for the current UTC time.")

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602

_READ_ONLY = {"readOnlyHint": True, "destructiveHint": False, "openWorldHint": False}
_NUMBERS = {
    "type": "object",
    "properties": {"a": {"type": "number", "description": "First number"},
                   "b": {"type": "number", "description": "Second number"}},
    "required": ["a", "b"],
    "additionalProperties": False,
}
_TEXT = {
    "type": "object",
    "properties": {"text": {"type": "string", "description": "The text"}},
    "required": ["text"],
    "additionalProperties": False,
}


def _number_out(key: str) -> dict[str, Any]:
    return {"type": "object", "properties": {key: {"type": "number"}}, "required": [key]}


TOOLS: list[dict[str, Any]] = [
    {"name": "add", "title": "Add", "description": "Add two numbers and return the exact sum.",
     "inputSchema": _NUMBERS, "outputSchema": _number_out("sum"), "annotations": {**_READ_ONLY, "idempotentHint": True}},
    {"name": "multiply", "title": "Multiply", "description": "Multiply two numbers and return the exact product.",
     "inputSchema": _NUMBERS, "outputSchema": _number_out("product"),
     "annotations": {**_READ_ONLY, "idempotentHint": True}},
    {"name": "echo", "title": "Echo", "description": "Return the given text unchanged.",
     "inputSchema": _TEXT, "annotations": {**_READ_ONLY, "idempotentHint": True}},
    {"name": "now", "title": "Current time", "description": "The current date and time in UTC (ISO 8601).",
     "inputSchema": {"type": "object", "properties": {}, "additionalProperties": False},
     "annotations": {**_READ_ONLY, "idempotentHint": False}},
    {"name": "word_count", "title": "Word count", "description": "Count the whitespace-separated words in a text.",
     "inputSchema": _TEXT, "outputSchema": _number_out("words"),
     "annotations": {**_READ_ONLY, "idempotentHint": True}},
]


class _BadArguments(Exception):
    """The arguments do not fit the tool's schema: becomes an isError result."""


class _RpcError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _text(text: str, structured: dict[str, Any] | None = None) -> dict[str, Any]:
    result: dict[str, Any] = {"content": [{"type": "text", "text": text}]}
    if structured is not None:
        result["structuredContent"] = structured
    return result


def _check(tool: str, args: dict[str, Any], expected: dict[str, str]) -> None:
    for key in args:
        if key not in expected:
            raise _BadArguments(f"{tool}: unexpected argument {key!r} (expected: {', '.join(expected) or 'none'})")
    for key, kind in expected.items():
        if key not in args:
            raise _BadArguments(f"{tool}: missing required argument {key!r} ({kind})")
        value = args[key]
        if kind == "number":
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
                raise _BadArguments(f"{tool}: argument {key!r} must be a number, got {_json_type(value)}")
        elif kind == "string" and not isinstance(value, str):
            raise _BadArguments(f"{tool}: argument {key!r} must be a string, got {_json_type(value)}")


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _fmt(value: int | float) -> str:
    """42, not 42.0; floats otherwise in their shortest exact form."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return str(int(value))
    return repr(value)


def _arith(tool: str, key: str, op: Callable[[Any, Any], Any]) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def run(args: dict[str, Any]) -> dict[str, Any]:
        _check(tool, args, {"a": "number", "b": "number"})
        value = op(args["a"], args["b"])
        if isinstance(value, float) and not math.isfinite(value):
            raise _BadArguments(f"{tool}: the result is not a finite number")
        return _text(_fmt(value), {key: value})
    return run


def _echo(args: dict[str, Any]) -> dict[str, Any]:
    _check("echo", args, {"text": "string"})
    return _text(args["text"])


def _now(args: dict[str, Any]) -> dict[str, Any]:
    _check("now", args, {})
    return _text(datetime.now(UTC).isoformat(timespec="seconds"))


def _word_count(args: dict[str, Any]) -> dict[str, Any]:
    _check("word_count", args, {"text": "string"})
    words = len(args["text"].split())
    return _text(str(words), {"words": words})


_HANDLERS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "add": _arith("add", "sum", lambda a, b: a + b),
    "multiply": _arith("multiply", "product", lambda a, b: a * b),
    "echo": _echo,
    "now": _now,
    "word_count": _word_count,
}


def _initialize(params: dict[str, Any]) -> dict[str, Any]:
    requested = params.get("protocolVersion")
    version = requested if requested in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[0]
    return {
        "protocolVersion": version,
        "capabilities": {"tools": {"listChanged": False}},
        "serverInfo": {"name": SERVER_NAME, "title": "mini-claude demo server", "version": SERVER_VERSION},
        "instructions": INSTRUCTIONS,
    }


def _call_tool(params: dict[str, Any]) -> dict[str, Any]:
    name = params.get("name")
    handler = _HANDLERS.get(name) if isinstance(name, str) else None
    if handler is None:
        known = ", ".join(_HANDLERS)
        raise _RpcError(INVALID_PARAMS, f"Unknown tool: {name!r} (tools: {known})")
    args = params.get("arguments")
    if args is None:
        args = {}
    try:
        if not isinstance(args, dict):
            raise _BadArguments(f"{name}: arguments must be an object, got {_json_type(args)}")
        return handler(args)
    except _BadArguments as exc:
        return {"content": [{"type": "text", "text": str(exc)}], "isError": True}


def _dispatch(method: str, params: dict[str, Any]) -> Any:
    if method == "initialize":
        return _initialize(params)
    if method == "ping":
        return {}
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call":
        return _call_tool(params)
    raise _RpcError(METHOD_NOT_FOUND, f"Method not found: {method}")


def _error(request_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def handle_message(message: Any) -> dict[str, Any] | None:
    """The reply to one decoded JSON-RPC message, or None (notifications and responses get none)."""
    if not isinstance(message, dict):
        return _error(None, INVALID_REQUEST, "Invalid Request: not a JSON object")
    method = message.get("method")
    request_id = message.get("id")
    if "id" not in message:
        return None  # a notification (initialized, cancelled, ...): nothing to answer
    if not isinstance(method, str):
        if "result" in message or "error" in message:
            return None  # a response: we never send requests, so there is nothing to match
        return _error(request_id, INVALID_REQUEST, "Invalid Request: no method")
    params = message.get("params")
    if params is None:
        params = {}
    if not isinstance(params, dict):
        return _error(request_id, INVALID_PARAMS, "Invalid params: must be an object")
    try:
        return {"jsonrpc": "2.0", "id": request_id, "result": _dispatch(method, params)}
    except _RpcError as exc:
        return _error(request_id, exc.code, exc.message)


def _handle_line(line: bytes) -> list[dict[str, Any]]:
    if not line.strip():
        return []
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return [_error(None, PARSE_ERROR, "Parse error: not JSON")]
    if isinstance(message, list):  # a batch (2025-03-26 only, but cheap to serve)
        if not message:
            return [_error(None, INVALID_REQUEST, "Invalid Request: empty batch")]
        replies = [handle_message(item) for item in message]
        return [reply for reply in replies if reply is not None]
    reply = handle_message(message)
    return [reply] if reply is not None else []


def serve(stdin: BinaryIO, stdout: BinaryIO) -> None:
    """Answer messages from `stdin` on `stdout` until EOF."""
    for line in stdin:
        for reply in _handle_line(line):
            stdout.write(json.dumps(reply, ensure_ascii=False, separators=(",", ":")).encode() + b"\n")
        stdout.flush()


def main() -> int:
    try:
        serve(sys.stdin.buffer, sys.stdout.buffer)
    except (BrokenPipeError, KeyboardInterrupt):
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
