"""The legacy HTTP+SSE transport (MCP 2024-11-05): a GET event stream in, a POST per message out.

It owns one connection: the GET stream, waiting (bounded) for its `endpoint` event, resolving that endpoint
against the stream's URL (it must stay on the same origin: a server must not point our POSTs elsewhere), posting
messages there, and turning `message` events into decoded JSON for `receive()`. An event over the message cap
(`limits.max_message_bytes()`) is cut where it passes the cap and fails the request it answers; one that names no
request closes the connection (`MessageOverflowError`), since every reply shares this one stream.

The session lives exactly as long as the GET stream: when it ends (server closed it, connection dropped) the
transport is over and every later `receive()` / `send()` raises TransportError. It is not reconnected, because a
new stream is a new session on the server. SSE parsing (`sse_events`), reading HTTP error answers (`http_errors`)
and describing httpx errors (`mini_claude.net.errors`) are shared with the Streamable HTTP transport.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin

from mini_claude.errors import TransportError
from mini_claude.mcp.transports import limits
from mini_claude.mcp.transports.base import HttpAuth
from mini_claude.mcp.transports.headers_helper import HeadersHelper
from mini_claude.mcp.transports.http import CLOSE_TIMEOUT_S, encode_message
from mini_claude.mcp.transports.http_errors import (
    decode_json,
    media_type,
    one_line,
    read_excerpt,
    status_error,
)
from mini_claude.mcp.transports.http_sender import HttpSender
from mini_claude.mcp.transports.inbox import Inbox
from mini_claude.mcp.transports.sse_events import SseEvent, SseParser, iter_sse_lines
from mini_claude.net.errors import describe_http_error, http_error
from mini_claude.net.tls import tls_context_for
from mini_claude.net.urls import display_url, origin

if TYPE_CHECKING:
    import httpx

__all__ = ["SseTransport"]

log = logging.getLogger(__name__)


class SseTransport:
    """A `Transport` to a server speaking the 2024-11-05 HTTP+SSE transport.

    Example:

        transport = SseTransport("http://127.0.0.1:3001/sse", server="everything")
        client = McpClient(transport, name="everything")
        await client.connect(timeout_s=30)

    `endpoint` is the resolved POST URL once the server announced it. `auth`, `headers_helper` and `sender` work
    as for `StreamableHttpTransport` (a shared `sender` has run the helper already: it is not run again).
    `endpoint_timeout_s` bounds the wait for the `endpoint` event (default `timeout_s`).
    """

    kind = "sse"

    def __init__(self, url: str, *, headers: Mapping[str, str] | None = None, server: str | None = None,
                 timeout_s: float = 30.0, auth: HttpAuth | None = None,
                 headers_helper: HeadersHelper | None = None, endpoint_timeout_s: float | None = None,
                 sender: HttpSender | None = None, max_message_bytes: int | None = None) -> None:
        self.url = url
        self.max_message_bytes = max_message_bytes if max_message_bytes is not None else limits.max_message_bytes()
        self.server = server
        self.timeout_s = timeout_s
        self.endpoint_timeout_s = timeout_s if endpoint_timeout_s is None else endpoint_timeout_s
        self.endpoint: str | None = None
        self._stream_url = url  # where the GET stream was answered (after same-origin redirects)
        self._sender = sender if sender is not None else HttpSender(
            server=server, headers=headers, auth=auth, headers_helper=headers_helper)
        self._client: httpx.AsyncClient | None = None
        self._inbox = Inbox()
        self._endpoint_ready: asyncio.Future[None] | None = None
        self._started = False
        self._reader: asyncio.Task[None] | None = None
        self._close_task: asyncio.Task[None] | None = None

    # ---- public API --------------------------------------------------------------------------------------------

    async def start(self) -> None:
        """Open the GET stream and wait (at most `endpoint_timeout_s`) for the server's `endpoint` event."""
        if self._started:
            raise TransportError("transport already started", server=self.server)
        self._started = True
        import httpx

        loop = asyncio.get_running_loop()
        self._endpoint_ready = loop.create_future()
        # the sender follows same-origin redirects itself
        self._client = httpx.AsyncClient(verify=tls_context_for(self.url), follow_redirects=False, timeout=httpx.Timeout(self.timeout_s, read=None))
        what = "GET SSE stream"
        try:
            async with asyncio.timeout(self.endpoint_timeout_s):
                await self._sender.prepare()
                try:
                    response = await self._sender.send(self._client, "GET", self.url,
                                                       headers={"Accept": "text/event-stream"})
                except httpx.InvalidURL as exc:
                    raise TransportError(f"invalid URL ({exc}); check the server's `url`",
                                         server=self.server) from None
                except httpx.HTTPError as exc:
                    raise http_error(exc, what, self.server) from None
                if response.status_code >= 400:
                    error = await status_error(response, what, self.server)
                    await response.aclose()
                    raise error
                if media_type(response) != "text/event-stream":
                    excerpt = await read_excerpt(response)
                    await response.aclose()
                    raise TransportError(
                        f"{what}: expected text/event-stream, got {media_type(response) or 'no content type'!r}"
                        + (f": {excerpt}" if excerpt else ""), server=self.server)
                self._stream_url = str(response.request.url)
                self._reader = loop.create_task(self._read_stream(response), name=f"sse-{self.server}")
                await asyncio.shield(self._endpoint_ready)
        except TimeoutError:
            self._end(TransportError(f"{what}: no `endpoint` event within {self.endpoint_timeout_s:g}s",
                                     server=self.server))
            await self._release()
            ended = self._inbox.error
            assert ended is not None  # just ended (this error, or the one that came first)
            raise ended.with_traceback(None) from None
        except BaseException as exc:  # TransportError, the auth provider's errors, cancellation
            self._end(exc if isinstance(exc, TransportError) else
                      TransportError("connection closed before it was open", server=self.server))
            await self._release()
            raise
        if self._inbox.error is not None:  # the stream ended (or sent a bad endpoint) before we could use it
            await self._release()
            raise self._inbox.error.with_traceback(None)

    async def send(self, message: dict[str, Any]) -> None:
        """POST one message to the endpoint. Raises TransportError (HttpStatusError for HTTP errors)."""
        if self._inbox.error is not None:
            raise self._inbox.error.with_traceback(None)
        client, endpoint = self._client, self.endpoint
        if client is None or endpoint is None:
            raise TransportError("transport not started", server=self.server)
        import httpx

        method = message.get("method")
        what = f"POST {method}" if isinstance(method, str) else "POST response"
        try:
            response = await self._sender.send(client, "POST", endpoint, headers={"Content-Type": "application/json"},
                                               content=encode_message(message), timeout=httpx.Timeout(self.timeout_s))
        except httpx.HTTPError as exc:
            raise http_error(exc, what, self.server) from None
        try:
            if response.status_code >= 400:
                error = await status_error(response, what, self.server)
                # refused: the server did not run it (see HttpStatusError.not_processed)
                raise error.for_this_request() if response.status_code < 500 else error
        finally:
            await response.aclose()

    async def receive(self) -> Any:
        return await self._inbox.receive()

    async def close(self) -> None:
        """Stop the stream and close the HTTP client. Idempotent; bounded."""
        if self._close_task is None:
            self._close_task = asyncio.get_running_loop().create_task(self._close(), name="sse-close")
        await asyncio.shield(self._close_task)

    def diagnostics(self) -> str:
        return self._inbox.diagnostics()

    def abandon(self, request_id: Any) -> None:
        """The owner gave up on a request: nothing to stop here (every reply comes on the one shared stream)."""

    # ---- internals ---------------------------------------------------------------------------------------------

    async def _read_stream(self, response: httpx.Response) -> None:
        import httpx

        parser = SseParser(self.max_message_bytes)
        reason = "the server closed the SSE stream"
        try:
            async for line in iter_sse_lines(response, self.max_message_bytes):
                event = parser.feed_line(line)
                if event is not None:
                    self._on_event(event)
                    if self._inbox.error is not None:
                        return
        except httpx.HTTPError as exc:
            reason = f"SSE stream: {describe_http_error(exc)}"
        finally:
            with contextlib.suppress(Exception):
                await response.aclose()
        self._end(TransportError(reason, server=self.server))

    def _on_event(self, event: SseEvent) -> None:
        if event.event == "endpoint":
            self._set_endpoint(event.data.strip())
            return
        if event.event != "message":
            log.debug("%s: ignoring SSE event %r", self.server, event.event)
            return
        if event.oversized is not None:
            item = limits.oversized_message(event.data, event.oversized, self.max_message_bytes, self.server,
                                            complete=False)
            if item is None:
                self._end(limits.overflow_error(self.max_message_bytes, event.oversized, self.server))
            else:
                log.warning("%s: refused an SSE message over %d bytes", self.server, self.max_message_bytes)
                self._inbox.put(item)
            return
        try:
            message = decode_json(event.data)
        except ValueError:
            self._inbox.note(event.data)
            log.debug("%s: non-JSON SSE data: %.200s", self.server, event.data)
            return
        self._inbox.put(message)

    def _set_endpoint(self, data: str) -> None:
        if self.endpoint is not None:
            log.debug("%s: ignoring a second endpoint event", self.server)
            return
        resolved = urljoin(self._stream_url, data)
        if origin(resolved) != origin(self.url):
            self._end(TransportError(
                f"server announced an endpoint on another origin ({one_line(display_url(resolved), 200)}); "
                "refusing it", server=self.server))
            return
        self.endpoint = resolved
        if self._endpoint_ready is not None and not self._endpoint_ready.done():
            self._endpoint_ready.set_result(None)

    def _end(self, error: TransportError) -> None:
        self._inbox.end(error)
        if self._endpoint_ready is not None and not self._endpoint_ready.done():
            self._endpoint_ready.set_result(None)

    async def _release(self) -> None:
        reader, self._reader = self._reader, None
        if reader is not None and reader is not asyncio.current_task():
            reader.cancel()
            await asyncio.wait([reader], timeout=CLOSE_TIMEOUT_S)
        client, self._client = self._client, None
        if client is not None:
            with contextlib.suppress(Exception):
                async with asyncio.timeout(CLOSE_TIMEOUT_S):
                    await client.aclose()

    async def _close(self) -> None:
        self._end(TransportError("connection closed by the client", server=self.server))
        self._inbox.clear()
        await self._release()

