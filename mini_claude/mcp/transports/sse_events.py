"""Decoding `text/event-stream` bodies: the line splitter (CR, LF or CRLF, across chunk boundaries) and the
incremental WHATWG event parser. Shared by the Streamable HTTP and legacy SSE transports; knows nothing of MCP."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import httpx

__all__ = ["SseEvent", "SseParser", "iter_sse_lines"]

_EOL = re.compile(r"\r\n|\r|\n")
_MS_PER_S = 1000


@dataclass(frozen=True)
class SseEvent:
    """One dispatched server-sent event. `id` is the stream's last event id at dispatch (may be None)."""

    event: str
    data: str
    id: str | None


class SseParser:
    """Incremental `text/event-stream` parser (WHATWG rules): feed it lines, get events.

    `last_event_id` and `retry_s` persist across events (and are what a reconnect needs).
    """

    def __init__(self) -> None:
        self.last_event_id: str | None = None
        self.retry_s: float | None = None
        self._data: list[str] = []
        self._event = ""

    def feed_line(self, line: str) -> SseEvent | None:
        """One line without its terminator; returns the event a blank line completes, if any."""
        if not line:
            return self._dispatch()
        if line.startswith(":"):
            return None  # comment (keep-alive)
        name, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id":
            if "\0" not in value:
                self.last_event_id = value or None
        elif name == "retry" and value.isdigit():
            self.retry_s = int(value) / _MS_PER_S
        return None

    def _dispatch(self) -> SseEvent | None:
        data, event = self._data, self._event or "message"
        self._data, self._event = [], ""
        if not data or data == [""]:  # an empty data buffer dispatches nothing (e.g. a priming `id:` event)
            return None
        return SseEvent(event, "\n".join(data), self.last_event_id)


async def iter_sse_lines(response: httpx.Response) -> AsyncIterator[str]:
    """The lines of an SSE body (CR, LF or CRLF terminated), decoded as UTF-8; linear in the body's size."""
    parts: list[str] = []  # pieces of the current, incomplete line
    skip_lf = False  # the last chunk ended with CR: a LF starting the next one belongs to it
    async for chunk in response.aiter_text():
        if skip_lf and chunk.startswith("\n"):
            chunk = chunk[1:]
        skip_lf = False
        start = 0
        for match in _EOL.finditer(chunk):
            parts.append(chunk[start:match.start()])
            yield "".join(parts)
            parts.clear()
            start = match.end()
            if match.group() == "\r" and start == len(chunk):
                skip_lf = True
        if start < len(chunk):
            parts.append(chunk[start:])
    if parts:
        yield "".join(parts)
