"""Decoding `text/event-stream` bodies: the line splitter (CR, LF or CRLF, across chunk boundaries) and the
incremental WHATWG event parser. Shared by the Streamable HTTP and legacy SSE transports; knows nothing of MCP.

Both are bounded by a `limit` (characters; the transports pass `limits.max_message_bytes()`): a line longer than it
is not stored (its head is handed on as a `CutLine`, the rest skipped up to the end of the line), and an event whose
data passes it is dispatched at once as an `SseEvent` with `oversized` set (the size seen so far; `data` holds only
its head) and the rest of that event is skipped. So a server cannot grow our memory with one endless event, and the
request waiting for it fails at once instead of when (if ever) the event ends."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import httpx

__all__ = ["CutLine", "SseEvent", "SseParser", "iter_sse_lines"]

_EOL = re.compile(r"\r\n|\r|\n")
_MS_PER_S = 1000
_HEAD_CHARS = 64 * 1024  # of an oversized line or event, kept (for the message envelope)


@dataclass(frozen=True)
class SseEvent:
    """One dispatched server-sent event. `id` is the stream's last event id at dispatch (may be None)."""

    event: str
    data: str
    id: str | None
    oversized: int | None = None  # over the limit: the characters seen so far (`data` is then only its head)


@dataclass(frozen=True)
class CutLine:
    """A line longer than the splitter's limit: its first characters and its length when it was cut."""

    head: str
    size: int


class SseParser:
    """Incremental `text/event-stream` parser (WHATWG rules): feed it lines, get events.

    `last_event_id` and `retry_s` persist across events (and are what a reconnect needs).
    """

    def __init__(self, limit: int | None = None) -> None:
        self.last_event_id: str | None = None
        self.retry_s: float | None = None
        self.limit = limit
        self._data: list[str] = []
        self._size = 0  # characters of data in the current event
        self._skipping = False  # the rest of an oversized event: ignored up to its blank line
        self._event = ""

    def feed_line(self, line: str | CutLine) -> SseEvent | None:
        """One line without its terminator; returns the event a blank line completes (or an oversized one), if
        any."""
        cut, text = (line, line.head) if isinstance(line, CutLine) else (None, line)
        if self._skipping:
            if not text and cut is None:
                self._skipping = False
                self._data, self._size, self._event = [], 0, ""
            return None
        if not text:
            return self._dispatch()
        if text.startswith(":"):
            return None  # comment (keep-alive)
        name, sep, value = text.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if cut is not None:
            # only data can make an event too big; any other field cut this long is dropped
            return self._oversized(value, cut.size) if name == "data" else None
        if name == "data":
            if self.limit is not None and self._size + len(value) > self.limit:
                return self._oversized(value[:_HEAD_CHARS], len(value))
            self._data.append(value)
            self._size += len(value) + 1
        elif name == "event":
            self._event = value
        elif name == "id":
            if "\0" not in value:
                self.last_event_id = value or None
        elif name == "retry" and value.isdigit():
            self.retry_s = int(value) / _MS_PER_S
        return None

    def _oversized(self, head: str, size: int) -> SseEvent:
        data = "\n".join([*self._data, head])[:_HEAD_CHARS]
        event = SseEvent(self._event or "message", data, self.last_event_id, oversized=self._size + size)
        self._data, self._size, self._skipping = [], 0, True
        return event

    def _dispatch(self) -> SseEvent | None:
        data, event = self._data, self._event or "message"
        self._data, self._size, self._event = [], 0, ""
        if not data or data == [""]:  # an empty data buffer dispatches nothing (e.g. a priming `id:` event)
            return None
        return SseEvent(event, "\n".join(data), self.last_event_id)


async def iter_sse_lines(response: httpx.Response, limit: int | None = None) -> AsyncIterator[str | CutLine]:
    """The lines of an SSE body (CR, LF or CRLF terminated), decoded as UTF-8; linear in the body's size. A line
    longer than `limit` characters comes as a `CutLine` once it passes it, and the rest of it is skipped."""
    parts: list[str] = []  # pieces of the current, incomplete line
    size = 0  # characters in `parts`
    skipping = False  # the rest of a cut line
    skip_lf = False  # the last chunk ended with CR: a LF starting the next one belongs to it
    async for chunk in response.aiter_text():
        if skip_lf and chunk.startswith("\n"):
            chunk = chunk[1:]
        skip_lf = False
        start = 0
        for match in _EOL.finditer(chunk):
            if not skipping:
                parts.append(chunk[start:match.start()])
                yield "".join(parts)
            parts.clear()
            size, skipping = 0, False
            start = match.end()
            if match.group() == "\r" and start == len(chunk):
                skip_lf = True
        if start < len(chunk) and not skipping:
            parts.append(chunk[start:])
            size += len(chunk) - start
            if limit is not None and size > limit:
                yield CutLine(_head(parts), size)
                parts.clear()
                skipping = True
    if parts and not skipping:
        yield "".join(parts)


def _head(parts: list[str]) -> str:
    """The first `_HEAD_CHARS` of the pieces of a line, without joining all of them."""
    head: list[str] = []
    size = 0
    for part in parts:
        head.append(part[:_HEAD_CHARS - size])
        size += len(head[-1])
        if size >= _HEAD_CHARS:
            break
    return "".join(head)
