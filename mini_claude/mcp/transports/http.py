"""The Streamable HTTP transport (MCP 2025-03-26 and later): one endpoint, a POST per message, SSE or JSON back.

It owns the HTTP side of a connection: the session id (`Mcp-Session-Id`), the negotiated `MCP-Protocol-Version`
header, the per-request SSE streams, the GET stream for server-initiated messages, resuming dropped streams with
`Last-Event-ID`, and deleting the session on close. Its helpers live beside it: `sse_events` (the event-stream
parser), `http_streams` (reading and resuming the SSE streams), `http_errors` (what an HTTP error answer means),
`http_sender` (header layers, redirects, auth retries), `http_inbound` (what arrives: decoded, queued, the
protocol version learnt from `initialize`), `http_post_streams` (the POST response streams' readers:
how many, which to stop); `mini_claude.net.errors` describes httpx exceptions.

Design notes:

* `send()` returns once the response *headers* are in: an HTTP error therefore fails the very request that
  caused it, at once (raised from `send()`, which the JSON-RPC session turns into that request's error), never a
  hang. A JSON body is read and queued before `send()` returns; an SSE body is read by a background task.
* The transport learns the negotiated protocol version by watching the `initialize` response pass by (it does
  not interpret anything else). `set_protocol_version()` overrides it.
* A response stream that ends before the reply to its request is resumed with a GET carrying `Last-Event-ID`
  (SSE polling, SEP-1699), honouring `retry:`, a bounded number of times (`http_streams`). When that is
  impossible that one request fails with `StreamLostError` (`http_post_streams`).
* A server gone for good (the GET stream cannot be re-opened: connection refused) ends the transport: every
  pending request fails with a TransportError. A 404 for our session id ends it too (`HttpSessionExpiredError`).
  Only the error `send()` raises for the very POST that was refused is marked `not_processed` (the server did not
  run that request, so it may be sent again on a new session); the copy that ends the connection, and so reaches
  every other pending request, is not: those requests may well have run.
* Each POST's SSE stream is read by its own task, until its reply; `abandon(request_id)` stops it, and at most
  `http_post_streams.MAX_POST_STREAMS` are open at once.
* Redirects are followed by hand, same origin only (see `http_sender`): our headers never go to another origin.
* Every answer is read up to the message cap (`limits.max_message_bytes()`, 64 MB by default): a JSON body over it
  fails its request with `MessageTooLargeError` (raised from `send()`; the rest is never read), an SSE event over
  it fails the request it answers (or, on a POST stream, that stream's request) the moment it passes the cap. The
  connection goes on.
* httpx is imported lazily (in `start()`), so importing this module, or the stdio path, stays cheap.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from mini_claude.errors import (
    HttpSessionExpiredError,
    HttpStatusError,
    McpError,
    TransportError,
)
from mini_claude.mcp.transports import limits
from mini_claude.mcp.transports.base import HttpAuth
from mini_claude.mcp.transports.headers_helper import HeadersHelper
from mini_claude.mcp.transports.http_errors import (
    MAX_ERROR_BODY_BYTES,
    decode_json,
    error_reply,
    may_carry_error_reply,
    media_type,
    one_line,
    read_bounded,
    read_excerpt,
    session_status_error,
    status_error,
)
from mini_claude.mcp.transports.http_inbound import HttpInbound
from mini_claude.mcp.transports.http_post_streams import PostStreams
from mini_claude.mcp.transports.http_sender import HttpSender, clean_headers
from mini_claude.mcp.transports.http_streams import StreamHooks, run_get_stream
from mini_claude.mcp.transports.sse_events import SseParser
from mini_claude.net.errors import http_error
from mini_claude.net.tls import tls_context_for

if TYPE_CHECKING:
    import httpx

__all__ = [
    "CLOSE_TIMEOUT_S",
    "StreamableHttpTransport",
    "encode_message",
]

log = logging.getLogger(__name__)

ACCEPT_BOTH = "application/json, text/event-stream"
CLOSE_TIMEOUT_S = 2.0  # close(): the DELETE of the session and closing the client, each

_json_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode


# ---- the transport ---------------------------------------------------------------------------------------------


class StreamableHttpTransport:
    """A `Transport` to an MCP server's Streamable HTTP endpoint (see the module docstring for the guarantees).

    Example:

        transport = StreamableHttpTransport("http://127.0.0.1:3001/mcp", server="everything")
        client = McpClient(transport, name="everything")
        await client.connect(timeout_s=30)

    `session_id` and `protocol_version` are what the server negotiated (None until known). `auth` answers
    401/403 challenges (see `HttpAuth`); `headers_helper` runs at `start()` and its headers override `headers`.
    `message_headers`, when set, gives extra headers for each POSTed message (merged into that POST's).
    `sender`, when given, is an `HttpSender` shared with another transport of the same server (it then carries the
    headers, auth and helper, and `headers` / `auth` / `headers_helper` are ignored). `max_message_bytes` caps one
    message (default: `limits.max_message_bytes()`).
    """

    kind = "streamable-http"

    def __init__(self, url: str, *, headers: Mapping[str, str] | None = None, server: str | None = None,
                 timeout_s: float = 30.0, auth: HttpAuth | None = None,
                 headers_helper: HeadersHelper | None = None, sender: HttpSender | None = None,
                 max_message_bytes: int | None = None) -> None:
        self.url = url
        self.max_message_bytes = max_message_bytes if max_message_bytes is not None else limits.max_message_bytes()
        self.server = server
        self.timeout_s = timeout_s
        self.session_id: str | None = None
        self.protocol_version: str | None = None
        self.message_headers: Callable[[dict[str, Any]], Mapping[str, str]] | None = None
        self._sender = sender if sender is not None else HttpSender(
            server=server, headers=headers, auth=auth, headers_helper=headers_helper)
        self._client: httpx.AsyncClient | None = None
        self._inbound = HttpInbound(server=server, max_message_bytes=self.max_message_bytes,
                                    learn_version=self._learn_protocol_version)
        self._inbox = self._inbound.inbox
        self._started = False
        self._get_task: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._close_task: asyncio.Task[None] | None = None
        self._hooks = StreamHooks(server=server, on_event=self._inbound.on_event, reopen=self._open_get_stream,
                                  is_ended=self._inbound.is_ended, end=self._inbound.end,
                                  max_message_bytes=self.max_message_bytes)
        self._post_streams = PostStreams(self._hooks, spawn=self._spawn, deliver=self._inbound.deliver)

    # ---- public API --------------------------------------------------------------------------------------------

    async def start(self) -> None:
        if self._started:
            raise TransportError("transport already started", server=self.server)
        self._started = True
        import httpx

        try:
            self._client = httpx.AsyncClient(
                verify=tls_context_for(self.url),
                follow_redirects=False,  # the sender follows same-origin redirects itself
                timeout=httpx.Timeout(self.timeout_s, read=None),
            )
        except (ValueError, TypeError) as exc:
            error = TransportError(f"cannot set up HTTP client: {exc}", server=self.server)
            self._inbox.end(error)
            raise error from exc
        try:
            httpx.URL(self.url)
        except httpx.InvalidURL as exc:
            error = TransportError(f"invalid URL ({exc}); check the server's `url`", server=self.server)
            self._inbox.end(error)
            raise error from exc
        try:
            await self._sender.prepare()
        except TransportError as exc:
            self._inbox.end(exc)
            raise

    def set_protocol_version(self, version: str | None) -> None:
        """Set the `MCP-Protocol-Version` header sent from now on (normally learnt from `initialize`)."""
        self.protocol_version = version

    async def send(self, message: dict[str, Any]) -> None:
        """POST one message. Raises TransportError (HttpStatusError for HTTP errors) when it was not accepted.

        An HTTP error whose body is a JSON-RPC error response to this request is delivered as its reply instead
        (so the session raises JsonRpcError with the server's code and data). A 4xx raised here for this very
        message is marked `not_processed` (see HttpStatusError)."""
        if self._inbox.error is not None:
            if isinstance(self._inbox.error, HttpSessionExpiredError):
                raise self._inbox.error.for_this_request()  # nothing is POSTed: this request surely did not run
            raise self._inbox.error.with_traceback(None)
        client = self._client
        if client is None:
            raise TransportError("transport not started", server=self.server)
        import httpx

        method = message.get("method")
        is_request = isinstance(method, str) and "id" in message
        if method == "initialize" and is_request:
            self._inbound.initialize_id = message["id"]
        what = f"POST {method}" if isinstance(method, str) else "POST response"
        if method == "notifications/initialized" and self._get_task is None:
            # the GET stream must be open *before* the server sees `initialized`: some servers (server-everything)
            # send their first tools/list_changed on it right then, and a stream opened later misses them
            first = await self._open_get_stream(SseParser())
            self._get_task = self._spawn(run_get_stream(self._hooks, first), "http-get-stream")
        body = encode_message(message)
        extra = self._message_headers(message)
        extra.update({"Accept": ACCEPT_BOTH, "Content-Type": "application/json"})
        headers = self._request_headers(extra)
        # notifications and responses must be acknowledged promptly; a request may legitimately take long
        # (a JSON reply arrives only when the tool is done) and is bounded by the session's own deadline
        timeout = httpx.Timeout(self.timeout_s, read=None if is_request else self.timeout_s)
        try:
            response = await self._sender.send(client, "POST", self.url, headers=headers, content=body,
                                               timeout=timeout)
        except httpx.HTTPError as exc:
            raise http_error(exc, what, self.server) from None
        streaming = False
        try:
            if response.status_code >= 400:
                if await self._deliver_error_reply(response, message.get("id") if is_request else None, what):
                    return
                raise await self._status_error(response, what, own=True)
            if method == "initialize" and is_request:
                session_id = response.headers.get("mcp-session-id")
                if session_id:
                    self.session_id = session_id
            if response.status_code in (202, 204) or not is_request:
                return
            kind = media_type(response)
            if kind == "text/event-stream":
                streaming = True
                self._post_streams.open(response, message["id"])
            elif kind == "application/json":
                try:
                    body, over = await read_bounded(response, self.max_message_bytes)
                except httpx.HTTPError as exc:
                    raise http_error(exc, what, self.server) from None
                if over is not None:
                    log.warning("%s: %s: a JSON reply over %d bytes (%d); not read", self.server, what,
                                self.max_message_bytes, over)
                    raise limits.too_large_error(self.max_message_bytes, over, self.server, what=what,
                                                 complete=not body)
                text = body.decode("utf-8", "replace")
                try:
                    self._inbound.deliver(decode_json(text))
                except ValueError:
                    raise TransportError(f"{what}: response body is not JSON: {one_line(text)!r}",
                                         server=self.server) from None
            else:
                excerpt = await read_excerpt(response)
                raise TransportError(
                    f"{what}: unexpected response content type {kind or 'none'!r} (HTTP {response.status_code})"
                    + (f": {excerpt}" if excerpt else ""), server=self.server)
        finally:
            if not streaming:
                await response.aclose()

    async def receive(self) -> Any:
        return await self._inbox.receive()

    async def close(self) -> None:
        """Delete the session (bounded, errors ignored), stop the streams, close the client. Idempotent."""
        if self._close_task is None:
            self._close_task = asyncio.get_running_loop().create_task(self._close(), name="http-close")
        await asyncio.shield(self._close_task)

    def diagnostics(self) -> str:
        """Recent non-JSON data the server sent (may be empty)."""
        return self._inbox.diagnostics()

    def abandon(self, request_id: Any) -> None:
        """The owner gave up on request `request_id` (timed out, cancelled): stop reading its response stream, if
        one is open (no error reply is queued for it). Unknown ids are ignored."""
        self._post_streams.abandon(request_id)

    # ---- internals ---------------------------------------------------------------------------------------------

    def _request_headers(self, extra: dict[str, str]) -> dict[str, str]:
        """This connection's own headers (the sender layers static, helper and auth headers below them)."""
        headers = dict(extra)
        if self.session_id is not None:
            headers["Mcp-Session-Id"] = self.session_id
        if self.protocol_version is not None:
            headers["MCP-Protocol-Version"] = self.protocol_version
        return headers

    def _message_headers(self, message: dict[str, Any]) -> dict[str, str]:
        produce = self.message_headers
        if produce is None:
            return {}
        return clean_headers(produce(message), self.server, "message headers")

    async def _deliver_error_reply(self, response: httpx.Response, request_id: Any, what: str) -> bool:
        """Deliver a JSON-RPC error body of an HTTP error as the reply to `request_id`; False when it is not one
        (or the status means something else: auth, or our session is gone)."""
        has_session = self.session_id is not None
        if not may_carry_error_reply(response, request_id, has_session=has_session):
            return False
        import httpx

        try:
            text = (await read_bounded(response, MAX_ERROR_BODY_BYTES))[0].decode("utf-8", "replace")
        except httpx.HTTPError as exc:
            raise http_error(exc, what, self.server) from None
        reply = error_reply(text, request_id, has_session=has_session)
        if reply is None:
            raise await self._status_error(response, what, body=text, own=True)
        log.debug("%s: %s: HTTP %d carries a JSON-RPC error; delivering it as the reply", self.server, what,
                  response.status_code)
        self._inbound.deliver(reply)
        return True

    async def _status_error(self, response: httpx.Response, what: str, *, body: str | None = None,
                            own: bool = False) -> HttpStatusError:
        """The error for an HTTP error answer. `own`: it answers the POST of the message `send()` is sending, so
        a 4xx means the server refused (did not run) it and the error is marked `not_processed`."""
        error = session_status_error(await status_error(response, what, self.server, body=body), what,
                                     has_session=self.session_id is not None)
        if isinstance(error, HttpSessionExpiredError):
            self._inbound.end(error)  # this object fails every other pending request: it must stay unmarked
        if own and 400 <= response.status_code < 500:
            return error.for_this_request()
        return error

    def _spawn(self, coro: Any, name: str) -> asyncio.Task[None]:
        task = asyncio.get_running_loop().create_task(coro, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def _learn_protocol_version(self, version: str) -> None:
        if self.protocol_version is None:
            self.protocol_version = version

    async def _open_get_stream(self, parser: SseParser) -> httpx.Response | Exception | None:
        """GET the endpoint for an SSE stream: the response, the httpx error, or None when the server has none."""
        import httpx

        client = self._client
        if client is None or self._inbox.error is not None:
            return None
        headers = self._request_headers({"Accept": "text/event-stream"})
        if parser.last_event_id is not None:
            headers["Last-Event-ID"] = parser.last_event_id
        try:
            async with asyncio.timeout(self.timeout_s):
                response = await self._sender.send(client, "GET", self.url, headers=headers)
        except (httpx.HTTPError, TimeoutError) as exc:
            return exc
        except McpError as exc:  # the auth provider's: a stream we cannot open ends nothing else
            log.info("%s: GET stream: %s", self.server, exc.message)
            return None
        if response.status_code == 405:
            log.debug("%s: server offers no GET stream (405)", self.server)
        elif response.status_code >= 400:
            error = await self._status_error(response, "GET stream")
            log.debug("%s: no GET stream: %s", self.server, error)
        elif media_type(response) != "text/event-stream":
            log.debug("%s: GET stream is not SSE (%s); not using it", self.server, media_type(response))
        else:
            return response
        await response.aclose()
        return None

    async def _close(self) -> None:
        self._inbound.end(TransportError("connection closed by the client", server=self.server))
        self._inbox.clear()
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=CLOSE_TIMEOUT_S)
        client, self._client = self._client, None
        if client is None:
            return
        try:
            if self.session_id is not None:
                import httpx

                headers = self._request_headers({})
                with contextlib.suppress(httpx.HTTPError, OSError, TimeoutError, McpError):
                    async with asyncio.timeout(CLOSE_TIMEOUT_S):
                        response = await self._sender.send(client, "DELETE", self.url, headers=headers,
                                                           timeout=httpx.Timeout(CLOSE_TIMEOUT_S))
                        await response.aclose()
        finally:
            with contextlib.suppress(Exception):
                async with asyncio.timeout(CLOSE_TIMEOUT_S):
                    await client.aclose()


def encode_message(message: Any) -> bytes:
    try:
        return _json_encode(message).encode()
    except UnicodeEncodeError:  # lone surrogates: escape them
        return json.dumps(message, separators=(",", ":"), allow_nan=False).encode()

