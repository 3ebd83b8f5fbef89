"""How big one message from a server may be, and what a reader hands on in place of a bigger one.

Every reader (stdio lines, HTTP JSON bodies, SSE events of both HTTP transports) stops storing a message at
`max_message_bytes()` (64 MB unless `MINI_CLAUDE_MCP_MAX_MESSAGE_BYTES` says otherwise): memory stays bounded
whatever a server sends, and the call waiting for that message fails at once instead of hanging.

What the message was for is read from its first `HEAD_BYTES` (JSON-RPC writers put `jsonrpc`, `id` and `method`
first): `oversized_message` turns it into what the JSON-RPC session already understands —

* a reply (an `id`, no `method`): `RequestFailed(id, MessageTooLargeError)`, failing that one request;
* a server's request (`method` and `id`): a `RefusedMessage`, answered with an error reply;
* a notification (`method` only): a `RefusedMessage` the session logs and drops;
* nothing readable: None. The reader then decides: a POST's SSE stream fails its own request, a connection shared
  by every request (stdio, legacy SSE) is closed with `MessageOverflowError` (pending calls fail at once).
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import Mapping
from typing import Any

from mini_claude.errors import MessageOverflowError, MessageTooLargeError
from mini_claude.jsonfile import size_text
from mini_claude.mcp.transports.base import RequestFailed
from mini_claude.mcp.transports.json_depth import RefusedMessage

__all__ = [
    "DEFAULT_MAX_MESSAGE_BYTES",
    "HEAD_BYTES",
    "MAX_MESSAGE_BYTES_ENV",
    "envelope",
    "max_message_bytes",
    "overflow_error",
    "oversized_message",
    "too_large_error",
]

log = logging.getLogger(__name__)

DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024 * 1024
MAX_MESSAGE_BYTES_ENV = "MINI_CLAUDE_MCP_MAX_MESSAGE_BYTES"
HEAD_BYTES = 64 * 1024  # of an oversized message, kept to read its envelope
_MIN_MESSAGE_BYTES = 1024  # a smaller setting could not carry an initialize reply

# one JSON token at a time: a complete string, a structural character, or a scalar
_TOKEN = re.compile(r'\s*(?:("(?:[^"\\]|\\.)*")|([\[\]{}:,])|(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null))')


def max_message_bytes(env: Mapping[str, str] | None = None) -> int:
    """The cap on one message: `MINI_CLAUDE_MCP_MAX_MESSAGE_BYTES` (bytes) in `env` (default: the process
    environment), else `DEFAULT_MAX_MESSAGE_BYTES`. A value that is not a whole number of at least 1024 is logged
    and the default used."""
    raw = (os.environ if env is None else env).get(MAX_MESSAGE_BYTES_ENV, "").strip()
    if not raw:
        return DEFAULT_MAX_MESSAGE_BYTES
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < _MIN_MESSAGE_BYTES:
        log.warning("%s=%r is not a number of bytes >= %d; using %d", MAX_MESSAGE_BYTES_ENV, raw,
                    _MIN_MESSAGE_BYTES, DEFAULT_MAX_MESSAGE_BYTES)
        return DEFAULT_MAX_MESSAGE_BYTES
    return value


def envelope(head: str) -> tuple[bool, Any, str | None]:
    """(whether a top-level `id` was read, its value, the top-level `method` when a string) from the start of a
    JSON object that may be cut anywhere. Nested values are skipped; reading stops where the text stops parsing."""
    has_id, request_id, method = False, None, None
    depth, key, expect_key, pos = 0, None, False, 0
    while (match := _TOKEN.match(head, pos)) is not None:
        pos = match.end()
        string, punct, scalar = match.groups()
        if punct is not None:
            if punct in "[{":
                depth += 1
                expect_key = depth == 1 and punct == "{"
                if depth == 1 and punct == "[":
                    break  # a batch: no envelope of its own
                if depth == 2:
                    key = None  # the value of `key` is a container: not an id or a method
            elif punct in "]}":
                depth -= 1
                if depth <= 0:
                    break
            elif punct == "," and depth == 1:
                expect_key = True
            continue
        if depth != 1:
            continue
        try:
            value = json.loads(string if string is not None else scalar)
        except ValueError:
            break
        if expect_key:
            key, expect_key = value, False
            continue
        if key == "id":
            has_id, request_id = True, value
        elif key == "method" and isinstance(value, str):
            method = value
        key = None
    return has_id, request_id, method


def _text(limit: int, size: int, complete: bool) -> str:
    read = f"{size} bytes" if complete else f"over {size} bytes arrived before it was cut off"
    return (f"a message larger than the {size_text(limit)} limit ({read}); raise {MAX_MESSAGE_BYTES_ENV} "
            "to accept bigger ones")


def too_large_error(limit: int, size: int, server: str | None, *, complete: bool,
                    what: str = "") -> MessageTooLargeError:
    """The error failing the request a too-large message answered (`what`: e.g. `POST tools/call`)."""
    text = _text(limit, size, complete)
    return MessageTooLargeError(f"{what}: {text}" if what else text, server=server, limit_bytes=limit,
                                size_bytes=size, complete=complete)


def overflow_error(limit: int, size: int, server: str | None) -> MessageOverflowError:
    """The error closing a shared connection when a too-large message answers no request we can name."""
    return MessageOverflowError(f"{_text(limit, size, False)}, and no request id could be read from it: the "
                                "connection was closed", server=server, limit_bytes=limit, size_bytes=size)


def oversized_message(head: bytes | str, size: int, limit: int, server: str | None, *,
                      complete: bool) -> RequestFailed | RefusedMessage | None:
    """What to hand the session in place of a message over `limit` (see the module docstring); None when its head
    names neither a request id nor a method."""
    text = head.decode("utf-8", "replace") if isinstance(head, bytes) else head
    has_id, request_id, method = envelope(text[:HEAD_BYTES])
    if method is None:
        if not has_id:
            return None
        return RequestFailed(request_id, too_large_error(limit, size, server, complete=complete))
    return RefusedMessage(request_id if has_id else None, method, detail=_text(limit, size, complete))
