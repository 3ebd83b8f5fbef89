"""How deep a JSON message from a server may nest, and what a reader hands on in place of one that nests deeper.

A peer controls the shape of what it sends. CPython's decoder gives up somewhere near the interpreter's recursion
limit (where exactly depends on the caller's own stack), and Python-level code after it (`copy.deepcopy`, the
indenting JSON encoder, `repr`) recurses once or twice per level: a message a thousand levels deep can end the
process long after it was read. So the readers (stdio lines, HTTP bodies, SSE events) bound it: a message nested
deeper than `MAX_MESSAGE_DEPTH` is not delivered; `receive()` returns a `RefusedMessage` carrying the envelope
fields we could still read (id, method), so the JSON-RPC session fails the one request it answers and goes on.

The limit is generous on purpose: a tool whose schema is a few hundred levels deep must still reach the schema
check (mcp/schema.py, a much lower limit), which withholds that one tool rather than the whole `tools/list` reply.

Cost: the depth walk runs only when it could matter. A short line is checked by counting its `{` and `[` (a value
with no more openers than the limit cannot nest deeper); a long one is walked level by level over its decoded
containers, which for the usual big reply (one long text) is a handful of objects. A reply made of very many small
containers costs about one more decode.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from mini_claude.jsonfile import nested_deeper_than

__all__ = [
    "MAX_MESSAGE_DEPTH",
    "RefusedMessage",
    "bound_message",
    "nested_deeper_than",
    "refuse_undecodable",
]

MAX_MESSAGE_DEPTH = 512  # levels of objects/arrays in one message (the message object itself is level 1)
_COUNT_MAX_CHARS = 4096  # up to this length, counting openers is cheaper than walking the decoded value

# a JSON string token, or one bracket (for the envelope scan of a message too deep to decode)
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')


@dataclass(frozen=True)
class RefusedMessage:
    """What `receive()` returns in place of a message nested deeper than `depth_limit` levels (or, with `detail`,
    refused for another reason: larger than the size cap, see `limits`).

    `request_id` and `method` are the message's own top-level fields when they could be read (else None): a
    message without `method` is a response, and the session fails the request with that id."""

    request_id: Any
    method: str | None
    depth_limit: int = MAX_MESSAGE_DEPTH
    detail: str | None = None  # why, when it was refused for something else (too large: see limits)

    @property
    def reason(self) -> str:
        return self.detail or f"message nested deeper than {self.depth_limit} levels"


def bound_message(message: Any, raw: bytes | str, limit: int = MAX_MESSAGE_DEPTH) -> Any:
    """`message` (decoded from `raw`), or a `RefusedMessage` when it nests deeper than `limit` levels."""
    if len(raw) <= _COUNT_MAX_CHARS:
        if isinstance(raw, bytes):
            openers = raw.count(b"{") + raw.count(b"[")
        else:
            openers = raw.count("{") + raw.count("[")
        if openers <= limit:
            return message
    if not nested_deeper_than(message, limit):
        return message
    if isinstance(message, dict):
        method = message.get("method")
        return RefusedMessage(message.get("id"), method if isinstance(method, str) else None, limit)
    return RefusedMessage(None, None, limit)


def refuse_undecodable(text: str, limit: int = MAX_MESSAGE_DEPTH) -> RefusedMessage | None:
    """For a text the decoder refused with RecursionError: a `RefusedMessage` with the envelope fields of the
    top-level object (every nested value read as null), or None when even that is not JSON (then it is noise)."""
    pieces: list[str] = []
    depth = 0
    kept_from = 0
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token[0] == '"':
            continue
        if token in "[{":
            depth += 1
            if depth == 2:  # a value inside the top level: replaced by null, whatever it holds
                pieces.append(text[kept_from:match.start()])
                pieces.append("null")
        else:
            if depth == 2:
                kept_from = match.end()
            depth -= 1
    if depth != 0:  # unbalanced: not one JSON value
        return None
    pieces.append(text[kept_from:])
    try:
        envelope = json.loads("".join(pieces))
    except (ValueError, RecursionError):
        return None
    if isinstance(envelope, dict):
        method = envelope.get("method")
        return RefusedMessage(envelope.get("id"), method if isinstance(method, str) else None, limit)
    return RefusedMessage(None, None, limit)
