"""A stdio server's stdout as messages: newline framing, bounded, and decoding (the stream side of `stdio`).

* A line is kept as a list of the chunks it arrived in and joined once when its newline comes, so a 40 MB line
  costs one pass over its bytes, not one per chunk.
* A line longer than the cap (`limits.max_message_bytes()`) is never stored: once it passes the cap its first
  `HEAD_BYTES` are read for the envelope and the rest is skipped up to its newline, counted but not kept. Newline
  framing survives this (JSON text holds no raw newline), so the connection goes on: in the line's place the
  reader hands on what `limits.oversized_message` makes of it, at once (a reply fails its request with
  `MessageTooLargeError` while the server may still be writing it). Only a line from which no id or method can be
  read leaves nobody to tell: `feed()` returns a `MessageOverflowError` and the transport closes the connection.
* Decoding happens when the consumer asks (`next_message()`): invalid UTF-8 is replaced, a BOM dropped, blank lines
  skipped, non-JSON kept as noise for diagnostics, a message nested too deep becomes a `RefusedMessage`.
"""

from __future__ import annotations

import collections
import json
import logging
from typing import Any

from mini_claude.errors import MessageOverflowError
from mini_claude.mcp.transports.json_depth import bound_message, refuse_undecodable
from mini_claude.mcp.transports.limits import HEAD_BYTES, overflow_error, oversized_message

__all__ = ["NOISE_LINES", "NOISE_LINE_CHARS", "NOTHING", "StdoutLines"]

log = logging.getLogger(__name__)

NOISE_LINES = 20  # non-JSON stdout lines kept for diagnostics
NOISE_LINE_CHARS = 500
NOTHING = object()  # next_message(): no complete message buffered

_json_decode = json.JSONDecoder().decode
_NOT_JSON = object()


class StdoutLines:
    """The framing and decoding state of one server's stdout (see the module docstring).

    `backlog` is the bytes of complete lines not yet consumed (the transport pauses the pipe on it)."""

    def __init__(self, *, limit: int, server: str | None) -> None:
        self.limit = limit
        self.server = server
        self.backlog = 0
        self.noise: collections.deque[str] = collections.deque(maxlen=NOISE_LINES)
        self._items: collections.deque[Any] = collections.deque()  # bytes lines, or values handed on as they are
        self._parts: list[bytes] = []  # chunks of the current, incomplete line
        self._parts_len = 0
        self._skipped: int | None = None  # bytes of an oversized line skipped so far; None when not skipping

    def feed(self, data: bytes) -> MessageOverflowError | None:
        """Take one chunk of stdout. Returns the error that must close the connection (an oversized line that
        names no request), else None."""
        if self._skipped is not None:
            end = data.find(b"\n")
            if end < 0:
                self._skipped += len(data)
                return None
            log.debug("%s: skipped an oversized stdout line of %d bytes", self.server, self._skipped + end)
            self._skipped = None
            data = data[end + 1:]
        if b"\n" not in data:
            self._parts.append(data)
            self._parts_len += len(data)
            return self._cut_partial() if self._parts_len > self.limit else None
        pieces = data.split(b"\n")
        tail = pieces.pop()
        if self._parts:
            self._parts.append(pieces[0])
            pieces[0] = b"".join(self._parts)
            self._parts.clear()
        for piece in pieces:
            if len(piece) > self.limit:
                error = self._refuse(piece[:HEAD_BYTES], len(piece), complete=True)
                if error is not None:
                    return error
            else:
                self._items.append(piece)
                self.backlog += len(piece) + 1
        self._parts_len = len(tail)
        if tail:
            self._parts.append(tail)
            if self._parts_len > self.limit:
                return self._cut_partial()
        return None

    def flush(self) -> None:
        """At EOF: an unterminated last line is kept if it is complete JSON, else dropped (kept as noise)."""
        self._skipped = None
        if not self._parts:
            return
        line = b"".join(self._parts)
        self._parts.clear()
        self._parts_len = 0
        if not line.strip():
            return
        try:
            _json_decode(line.decode("utf-8", "replace"))
        except (ValueError, RecursionError):
            shown = line[: NOISE_LINE_CHARS * 4].decode("utf-8", "replace")[:NOISE_LINE_CHARS]
            self.noise.append(shown)
            log.debug("%s: dropping an incomplete last line on stdout: %.200s", self.server, shown)
            return
        self._items.append(line)
        self.backlog += len(line) + 1

    @property
    def has_items(self) -> bool:
        """Something is buffered for `next_message()` (a line or a value handed on in one's place)."""
        return bool(self._items)

    def clear(self) -> None:
        self._items.clear()

    def next_message(self) -> Any:
        """The next decoded message (or value handed on in a line's place), or `NOTHING` when none is buffered."""
        items = self._items
        while items:
            line = items.popleft()
            if not isinstance(line, bytes):
                return line
            self.backlog -= len(line) + 1
            try:
                message = _json_decode(line.decode())
            except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
                message, noise = _decode_line(line)
            else:
                return bound_message(message, line)
            if message is not _NOT_JSON:
                return message
            if noise is not None:
                self.noise.append(noise)
                log.debug("%s: skipping non-JSON line on stdout: %.200s", self.server, noise)
        return NOTHING

    def _cut_partial(self) -> MessageOverflowError | None:
        """The incomplete line passed the cap: hand on what it was for, skip the rest of it."""
        head = bytearray()
        for part in self._parts:
            head += part[:HEAD_BYTES - len(head)]
            if len(head) >= HEAD_BYTES:
                break
        size = self._parts_len
        self._parts.clear()
        self._parts_len = 0
        self._skipped = size
        return self._refuse(bytes(head), size, complete=False)

    def _refuse(self, head: bytes, size: int, *, complete: bool) -> MessageOverflowError | None:
        item = oversized_message(head, size, self.limit, self.server, complete=complete)
        if item is None:
            return overflow_error(self.limit, size, self.server)
        log.warning("%s: refused a stdout message over %d bytes (%d bytes%s)", self.server, self.limit, size,
                    "" if complete else " so far")
        self._items.append(item)
        return None


def _decode_line(line: bytes) -> tuple[Any, str | None]:
    """Decode a stdout line the fast path refused: (message, None), or (_NOT_JSON, noise to keep, or None).

    Invalid UTF-8 is replaced rather than fatal; a BOM is dropped; blank lines are no noise; a message nested
    too deep (for the decoder, or for `MAX_MESSAGE_DEPTH`) becomes a `RefusedMessage`; other non-JSON is noise.
    """
    text = line.decode("utf-8", "replace")
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text.strip():
        return _NOT_JSON, None
    try:
        message = _json_decode(text)
    except RecursionError:
        refused = refuse_undecodable(text)
        if refused is not None:
            return refused, None
        return _NOT_JSON, text[:NOISE_LINE_CHARS].rstrip("\r")
    except ValueError:
        return _NOT_JSON, text[:NOISE_LINE_CHARS].rstrip("\r")
    log.debug("decoded a stdout line with invalid UTF-8 (bytes replaced)")
    return bound_message(message, text), None
