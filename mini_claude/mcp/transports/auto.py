"""`AutoHttpTransport`: what a `type: "http"` server gets — Streamable HTTP, or legacy SSE when the server is one.

The spec's backwards-compatibility rule: POST the first message as Streamable HTTP; when the server answers 400,
404 or 405 with a body that is not a JSON-RPC response (a JSON-RPC error body is delivered as the reply and
decides for Streamable HTTP), the endpoint is taken for a legacy HTTP+SSE one: GET it as an SSE stream, wait for
its `endpoint` event and send that first message again there. The choice is made once, on the first answered
POST, and `kind` says which transport is in use. When both fail, the error names both attempts and keeps the
Streamable HTTP status (so a caller that treats 400/404/405 as "not this protocol era" still can). Both
transports share one `HttpSender`: the `headersHelper` runs once (at `start()`), not again for the fallback.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

from mini_claude.errors import HttpSessionExpiredError, HttpStatusError, TransportError
from mini_claude.mcp.transports.base import HttpAuth
from mini_claude.mcp.transports.headers_helper import HeadersHelper
from mini_claude.mcp.transports.http import StreamableHttpTransport
from mini_claude.mcp.transports.http_sender import HttpSender
from mini_claude.mcp.transports.sse import SseTransport

__all__ = ["FALLBACK_ENDPOINT_TIMEOUT_S", "FALLBACK_STATUSES", "AutoHttpTransport"]

FALLBACK_STATUSES = frozenset({400, 404, 405})
FALLBACK_ENDPOINT_TIMEOUT_S = 5.0  # a legacy server sends `endpoint` at once; a stream without one is not legacy


class AutoHttpTransport:
    """A `Transport` for `type: "http"`: Streamable HTTP with the legacy SSE fallback (see the module docstring).

    Example:

        transport = AutoHttpTransport("http://127.0.0.1:3001/sse", server="everything")
        client = McpClient(transport, name="everything")
        await client.connect(timeout_s=30)
        transport.kind   # "sse"
    """

    def __init__(self, url: str, *, headers: Mapping[str, str] | None = None, server: str | None = None,
                 timeout_s: float = 30.0, auth: HttpAuth | None = None,
                 headers_helper: HeadersHelper | None = None) -> None:
        self.url = url
        self.server = server
        sender = HttpSender(server=server, headers=headers, auth=auth, headers_helper=headers_helper)
        self._http = StreamableHttpTransport(url, server=server, timeout_s=timeout_s, sender=sender)
        self._sse_args: dict[str, Any] = {
            "server": server, "timeout_s": timeout_s, "sender": sender,
            "endpoint_timeout_s": min(timeout_s, FALLBACK_ENDPOINT_TIMEOUT_S)}
        self._inner: StreamableHttpTransport | SseTransport = self._http
        self._decided = False
        self._deciding = asyncio.Lock()
        self._sse_failure: str | None = None  # why the fallback failed, until a Streamable HTTP POST succeeds

    # ---- what the client and manager read ----------------------------------------------------------------------

    @property
    def kind(self) -> str:
        """"streamable-http" or "sse": the transport in use."""
        return self._inner.kind

    @property
    def session_id(self) -> str | None:
        return self._http.session_id if self._inner is self._http else None

    @property
    def protocol_version(self) -> str | None:
        return self._http.protocol_version if self._inner is self._http else None

    def set_protocol_version(self, version: str | None) -> None:
        self._http.set_protocol_version(version)

    @property
    def message_headers(self) -> Callable[[dict[str, Any]], Mapping[str, str]] | None:
        return self._http.message_headers

    @message_headers.setter
    def message_headers(self, produce: Callable[[dict[str, Any]], Mapping[str, str]] | None) -> None:
        self._http.message_headers = produce  # the legacy SSE transport sends no per-message headers

    # ---- Transport -------------------------------------------------------------------------------------------

    async def start(self) -> None:
        await self._http.start()

    async def send(self, message: dict[str, Any]) -> None:
        if not self._decided:
            async with self._deciding:
                if not self._decided:
                    await self._send_first(message)
                    return
        if self._sse_failure is None:
            await self._inner.send(message)
            return
        try:
            await self._http.send(message)
        except HttpStatusError as exc:
            if exc.status in FALLBACK_STATUSES and not isinstance(exc, HttpSessionExpiredError):
                raise self._both_failed(exc, self._sse_failure) from None
            raise
        self._sse_failure = None  # Streamable HTTP works after all (the first message was just refused)

    async def receive(self) -> Any:
        while True:
            inner = self._inner
            try:
                return await inner.receive()
            except TransportError:
                if inner is not self._inner:  # we switched to SSE (closing the HTTP side woke us): read there
                    continue
                raise

    async def close(self) -> None:
        await self._inner.close()
        await self._http.close()  # idempotent; closes it when the SSE side was in use

    def diagnostics(self) -> str:
        return self._inner.diagnostics()

    def abandon(self, request_id: Any) -> None:
        """The owner gave up on a request: stop reading its response stream (see StreamableHttpTransport)."""
        self._inner.abandon(request_id)

    # ---- the fallback ----------------------------------------------------------------------------------------

    async def _send_first(self, message: dict[str, Any]) -> None:
        try:
            await self._http.send(message)
        except HttpStatusError as exc:
            self._decided = True  # the server answered: whatever happens next, the choice is made
            if exc.status not in FALLBACK_STATUSES or isinstance(exc, HttpSessionExpiredError):
                raise
            await self._fall_back(message, exc)
            return
        # a connection error (no answer at all) decides nothing: the next POST tries again
        self._decided = True

    async def _fall_back(self, message: dict[str, Any], http_error: HttpStatusError) -> None:
        sse = SseTransport(self.url, **self._sse_args)
        try:
            await sse.start()
            await sse.send(message)
        except TransportError as exc:
            await sse.close()
            self._sse_failure = exc.message
            raise self._both_failed(http_error, exc.message) from None
        except BaseException:
            await sse.close()
            raise
        self._inner = sse
        await self._http.close()  # wakes a receive() waiting on it, which then reads from `sse`

    def _both_failed(self, http_error: HttpStatusError, sse_failure: str) -> HttpStatusError:
        return HttpStatusError(
            f"Streamable HTTP: {http_error.message}; legacy SSE at the same URL: {sse_failure}",
            server=self.server, status=http_error.status, body_excerpt=http_error.body_excerpt,
            www_authenticate=http_error.www_authenticate, not_processed=http_error.not_processed)
