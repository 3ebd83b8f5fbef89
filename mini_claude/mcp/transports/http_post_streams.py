"""The readers of a Streamable HTTP connection's POST response streams: which are open, how many, which to stop.

A POST answered with SSE gets its own reader task, reading until the reply to its request (`http_streams`, which
resumes a stream that drops early). The rules kept here:

* A stream that ends without the reply fails that one request with `RequestFailed(request_id, StreamLostError(...))`
  (never a JSON-RPC error), so the pending call fails at once while the session stays usable.
* `abandon(request_id)` (the owner gave up on the request: timeout, cancellation) stops its reader, and fails
  nothing: nobody waits for that reply any more.
* At most `MAX_POST_STREAMS` are open at once: when another opens, the oldest is closed, failing its request, so
  readers never pile up until the HTTP pool runs dry.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from mini_claude.errors import StreamLostError
from mini_claude.mcp.transports.base import RequestFailed
from mini_claude.mcp.transports.http_streams import StreamHooks, read_post_stream

if TYPE_CHECKING:
    import httpx

__all__ = ["MAX_POST_STREAMS", "PostStreams"]

log = logging.getLogger(__name__)

MAX_POST_STREAMS = 32  # POST response streams read at once (httpx's pool holds 100 connections; leave room)


class PostStreams:
    """The open POST response streams of one transport, oldest first. `spawn` starts a task the transport owns (and
    cancels on close); `deliver` queues a message for the transport's `receive()`."""

    def __init__(self, hooks: StreamHooks, *, spawn: Callable[[Coroutine[Any, Any, None], str], asyncio.Task[None]],
                 deliver: Callable[[Any], None]) -> None:
        self.server = hooks.server
        self._hooks = hooks
        self._spawn = spawn
        self._deliver = deliver
        self._readers: dict[Any, asyncio.Task[None]] = {}  # request id -> its reader, oldest first
        self._abandoned: set[Any] = set()  # request ids whose reader was stopped on purpose: no error reply

    def open(self, response: httpx.Response, request_id: Any) -> None:
        """Start the reader of a POST's SSE stream; close the oldest one when too many are open."""
        while len(self._readers) >= MAX_POST_STREAMS:
            oldest_id = next(iter(self._readers))
            oldest = self._readers.pop(oldest_id)
            log.warning("%s: more than %d response streams open; closing the oldest (request %.50r)",
                        self.server, MAX_POST_STREAMS, oldest_id)
            oldest.cancel()  # its reader queues a "stream lost" error for that request
        task = self._spawn(self._read(response, request_id), f"http-post-{request_id}")
        self._readers[request_id] = task

        def forget(done: asyncio.Task[None], key: Any = request_id) -> None:
            if self._readers.get(key) is done:
                del self._readers[key]
            self._abandoned.discard(key)

        task.add_done_callback(forget)

    def abandon(self, request_id: Any) -> None:
        """Stop reading the response stream of `request_id`, if one is open (no error reply is queued for it)."""
        task = self._readers.pop(request_id, None)
        if task is not None and not task.done():
            self._abandoned.add(request_id)
            task.cancel()

    async def _read(self, response: httpx.Response, request_id: Any) -> None:
        """Read a POST's SSE stream (see `http_streams`); when it ends without the reply, fail that one request."""
        reason: str | None = "the server closed the response stream"
        try:
            reason = await read_post_stream(self._hooks, response, request_id)
        except asyncio.CancelledError:
            # the transport closed (no reply is queued then: it has ended), abandon(), or too many streams open
            reason = f"the client closed the response stream (more than {MAX_POST_STREAMS} were open)"
            raise
        finally:
            if reason is not None and not self._hooks.is_ended() and request_id not in self._abandoned:
                self._deliver(RequestFailed(request_id, StreamLostError(
                    f"no response: {reason} before replying", server=self.server)))
