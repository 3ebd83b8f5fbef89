"""What a Streamable HTTP server sends, decoded and queued for the transport's `receive()`.

It owns the connection's `Inbox` (messages in order, or the error that ended the connection), decodes each SSE
event of any stream (a POST's or the GET one), and watches the reply to `initialize` go by to learn the negotiated
protocol version (nothing else is interpreted). An event over the message cap fails the request it answers (on a
POST stream, at worst that stream's own request); one that names no request is dropped with a warning. Non-JSON
data is kept for `diagnostics()`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from mini_claude.errors import TransportError
from mini_claude.mcp.transports import limits
from mini_claude.mcp.transports.base import RequestFailed
from mini_claude.mcp.transports.http_errors import decode_json
from mini_claude.mcp.transports.inbox import Inbox
from mini_claude.mcp.transports.sse_events import SseEvent

__all__ = ["HttpInbound"]

log = logging.getLogger(__name__)


class HttpInbound:
    """The receiving side of one HTTP transport. `initialize_id` is the id of the `initialize` request in flight
    (set by the sender); its reply's `protocolVersion` goes to `learn_version`."""

    def __init__(self, *, server: str | None, max_message_bytes: int,
                 learn_version: Callable[[str], None]) -> None:
        self.server = server
        self.max_message_bytes = max_message_bytes
        self.inbox = Inbox()
        self.initialize_id: Any = None
        self._learn_version = learn_version

    def deliver(self, message: Any) -> None:
        """Queue one decoded message for receive() (and learn the protocol version from `initialize`)."""
        if self.inbox.error is not None:
            return
        if (self.initialize_id is not None and isinstance(message, dict) and "method" not in message
                and message.get("id") == self.initialize_id):
            result = message.get("result")
            version = result.get("protocolVersion") if isinstance(result, dict) else None
            if isinstance(version, str):
                self._learn_version(version)
            self.initialize_id = None
        self.inbox.put(message)

    def end(self, error: TransportError) -> None:
        self.inbox.end(error)

    def is_ended(self) -> bool:
        return self.inbox.error is not None

    def on_event(self, event: SseEvent, request_id: Any = None) -> Any:
        """Decode one SSE event of the stream of `request_id` (None: the GET stream); returns what was delivered
        (or None)."""
        if event.event != "message":
            log.debug("%s: ignoring SSE event %r", self.server, event.event)
            return None
        if event.oversized is not None:
            return self._on_oversized(event, request_id)
        try:
            message = decode_json(event.data)
        except ValueError:
            self.inbox.note(event.data)
            log.debug("%s: non-JSON SSE data: %.200s", self.server, event.data)
            return None
        self.deliver(message)
        return message

    def _on_oversized(self, event: SseEvent, request_id: Any) -> Any:
        """An SSE message over the cap: fail the request it answers (on a POST stream, at worst that stream's own)."""
        size, limit = event.oversized or 0, self.max_message_bytes
        item: Any = limits.oversized_message(event.data, size, limit, self.server, complete=False)
        if item is None and request_id is not None:
            item = RequestFailed(request_id, limits.too_large_error(limit, size, self.server, complete=False))
        if item is None:
            log.warning("%s: dropped an SSE message over %d bytes that names no request", self.server, limit)
            return None
        log.warning("%s: refused an SSE message over %d bytes", self.server, limit)
        self.deliver(item)
        return item
