"""Reading a Streamable HTTP connection's SSE streams, with their recovery rules.

Two kinds of stream: a POST's response stream, read until the reply to its request and resumed with
GET + `Last-Event-ID` when it drops early (SSE polling, SEP-1699); and the GET stream for server-initiated messages,
re-opened when it drops. Each waits the server's `retry:` delay (capped at `MAX_RETRY_S`) before trying again and
gives up after `MAX_RECONNECTS` attempts in a row that brought no event. A GET stream that cannot be re-opened at
all (connection refused, `MAX_RECONNECTS` times) means the server is gone: it ends the connection.

The readers reach their transport only through `StreamHooks` (deliver an event, re-open a stream, end), so they
hold no transport state of their own.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mini_claude.errors import TransportError
from mini_claude.mcp.transports.base import RequestFailed
from mini_claude.mcp.transports.sse_events import SseEvent, SseParser, iter_sse_lines
from mini_claude.net.errors import describe_http_error, http_error

if TYPE_CHECKING:
    import httpx

__all__ = ["DEFAULT_RETRY_S", "MAX_RECONNECTS", "MAX_RETRY_S", "StreamHooks", "is_reply_to", "read_post_stream",
           "run_get_stream"]

log = logging.getLogger(__name__)

MAX_RECONNECTS = 3  # resuming a dropped SSE stream: attempts in a row that got no event
DEFAULT_RETRY_S = 1.0  # wait before reconnecting when the server sent no `retry:`
MAX_RETRY_S = 10.0  # a server's `retry:` is capped so a reconnect never waits longer
_CLOSED = "the server closed the response stream"


@dataclass(frozen=True)
class StreamHooks:
    """What the stream readers need of their transport."""

    server: str | None
    # decode and deliver one event of the stream of request `id` (None: the GET stream); what was delivered, or None
    on_event: Callable[[SseEvent, Any], Any]
    # GET the endpoint for a stream (with the parser's Last-Event-ID): the stream, the httpx error, or None
    reopen: Callable[[SseParser], Awaitable[httpx.Response | Exception | None]]
    is_ended: Callable[[], bool]  # the connection is over: stop reading
    end: Callable[[TransportError], None]  # end the connection (every pending request fails with the error)
    max_message_bytes: int | None = None  # a longer SSE line or event is cut (see sse_events)


def _retry_delay_s(parser: SseParser) -> float:
    return min(parser.retry_s if parser.retry_s is not None else DEFAULT_RETRY_S, MAX_RETRY_S)


def is_reply_to(message: Any, request_id: Any) -> bool:
    """`message` is the response (result or error) to the request with id `request_id` (same type: 1 is not "1"),
    or the `RequestFailed` that stands in for it (a reply over the size cap)."""
    if isinstance(message, RequestFailed):
        return message.request_id == request_id and type(message.request_id) is type(request_id)
    return (isinstance(message, dict) and "method" not in message and message.get("id") == request_id
            and type(message.get("id")) is type(request_id))


async def read_post_stream(hooks: StreamHooks, response: httpx.Response, request_id: Any) -> str | None:
    """Read a POST's SSE stream until the reply to `request_id`, resuming it when it drops early. None once the
    reply was delivered, else why it never came. Every stream it opened is closed when it returns or is cancelled."""
    parser = SseParser(hooks.max_message_bytes)
    reason = _CLOSED
    attempts = 0
    current: httpx.Response | None = response
    while current is not None:
        stream, current = current, None
        id_before = parser.last_event_id
        got_event = False
        try:
            async for line in iter_sse_lines(stream, hooks.max_message_bytes):
                event = parser.feed_line(line)
                if event is None:
                    continue
                got_event = True
                if is_reply_to(hooks.on_event(event, request_id), request_id):
                    return None  # the server closes the stream after the reply; no need to wait for it
            reason = _CLOSED
        except Exception as exc:  # httpx.HTTPError, decoding errors
            reason = f"response stream: {describe_http_error(exc)}"
        finally:
            await stream.aclose()
        if hooks.is_ended() or parser.last_event_id is None:
            break
        attempts = 0 if got_event or parser.last_event_id != id_before else attempts + 1
        if attempts >= MAX_RECONNECTS:
            break
        current = await _resume(hooks, parser)
        if current is None:
            reason += "; resuming it failed"
    return reason


async def _resume(hooks: StreamHooks, parser: SseParser) -> httpx.Response | None:
    """Re-open a stream with GET + Last-Event-ID after the server's `retry:` delay; None when refused."""
    await asyncio.sleep(_retry_delay_s(parser))
    opened = await hooks.reopen(parser)
    if isinstance(opened, Exception):
        log.debug("%s: resuming an SSE stream failed: %s", hooks.server, opened)
        return None
    return opened


async def run_get_stream(hooks: StreamHooks, first: httpx.Response | Exception | None) -> None:
    """Read the GET stream for server-initiated messages, starting with `first` (what opening it gave); re-open it
    when it drops (bounded attempts); end the connection when it cannot be re-opened at all."""
    import httpx

    parser = SseParser(hooks.max_message_bytes)
    failures = 0
    opened = first
    while True:
        if isinstance(opened, Exception):
            failures += 1
            if failures >= MAX_RECONNECTS:
                # the server is gone: end the connection so pending requests fail now, not at their deadline
                hooks.end(http_error(opened, "GET stream", hooks.server))
                return
        elif opened is None:
            return
        else:
            id_before = parser.last_event_id
            got_event = False
            try:
                async for line in iter_sse_lines(opened, hooks.max_message_bytes):
                    event = parser.feed_line(line)
                    if event is not None:
                        got_event = True
                        hooks.on_event(event, None)
            except httpx.HTTPError as exc:
                log.debug("%s: GET stream dropped: %s", hooks.server, describe_http_error(exc))
            finally:
                await opened.aclose()
            failures = 0 if got_event or parser.last_event_id != id_before else failures + 1
            if failures >= MAX_RECONNECTS:
                log.debug("%s: GET stream keeps closing without events; giving up on it", hooks.server)
                return
        if hooks.is_ended():
            return
        await asyncio.sleep(_retry_delay_s(parser))
        opened = await hooks.reopen(parser)
