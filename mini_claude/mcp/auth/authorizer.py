"""The interactive half of an authorization-code login: show the user the authorization URL and get back the
redirect's query parameters. `BrowserAuthorizer` listens on a loopback port (127.0.0.1; `oauth.callbackPort` or an
ephemeral one), opens the browser, prints the URL as a fallback, and waits a bounded time for the redirect.

Only a redirect carrying the `state` of the authorization URL ends the wait: anything else hitting the callback
(a stale tab, another local process) gets 400 and the listener keeps waiting. A request's line and headers are
bounded in size, count and time."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
import webbrowser
from collections.abc import Callable, Mapping
from typing import Protocol, TextIO
from urllib.parse import parse_qsl, urlsplit

from mini_claude.errors import AuthError

__all__ = ["CALLBACK_PATH", "LOGIN_TIMEOUT_S", "Authorizer", "BrowserAuthorizer"]

log = logging.getLogger(__name__)

CALLBACK_PATH = "/callback"
LOGIN_TIMEOUT_S = 300.0
_REQUEST_READ_TIMEOUT_S = 10.0
_MAX_REQUEST_LINE = 16 * 1024  # bytes, the request line and each header line
_MAX_HEADER_LINES = 100
_PAGE = ("<!doctype html><html><head><meta charset='utf-8'><title>mini-claude</title></head><body>"
         "<h3>{text}</h3><p>You can close this window.</p></body></html>")


class Authorizer(Protocol):
    """Runs the user-facing step of an authorization-code login."""

    @property
    def redirect_uri(self) -> str:
        """The redirect URI to register and send (valid once `prepare()`/`authorize()` bound it)."""

    async def authorize(self, authorization_url: str) -> Mapping[str, str]:
        """Send the user to `authorization_url`; return the query parameters of the redirect back to us."""


class BrowserAuthorizer:
    """Loopback redirect listener + browser. `port` 0 picks a free port (bound at `start()`, so `redirect_uri` is
    right before registration). `open_browser` and `out` are for tests and headless use."""

    def __init__(self, port: int | None = None, *, timeout_s: float = LOGIN_TIMEOUT_S,
                 open_browser: Callable[[str], bool] | None = webbrowser.open, out: TextIO | None = None) -> None:
        self.port = port or 0
        self.timeout_s = timeout_s
        self._open = open_browser
        self._out = out if out is not None else sys.stderr
        self._server: asyncio.Server | None = None
        self._result: asyncio.Future[dict[str, str]] | None = None
        self._state: str | None = None  # what the redirect must carry (None: the URL sent none)

    @property
    def redirect_uri(self) -> str:
        return f"http://127.0.0.1:{self.port}{CALLBACK_PATH}"

    async def start(self) -> None:
        """Bind the listener (idempotent)."""
        if self._server is not None:
            return
        try:
            self._server = await asyncio.start_server(self._handle, "127.0.0.1", self.port, limit=_MAX_REQUEST_LINE)
        except OSError as exc:
            raise AuthError(f"cannot listen on 127.0.0.1:{self.port} for the login redirect "
                            f"({exc.strerror or exc}); set oauth.callbackPort to a free port") from None
        self.port = self._server.sockets[0].getsockname()[1]

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2.0)
            self._server = None

    async def authorize(self, authorization_url: str) -> Mapping[str, str]:
        await self.start()
        loop = asyncio.get_running_loop()
        self._result = loop.create_future()
        self._state = dict(parse_qsl(urlsplit(authorization_url).query)).get("state")
        self._out.write(f"Opening the browser to log in. If it does not open, visit:\n  {authorization_url}\n")
        self._out.flush()
        if self._open is not None:
            with contextlib.suppress(Exception):
                await asyncio.to_thread(self._open, authorization_url)
        try:
            return await asyncio.wait_for(self._result, self.timeout_s)
        except TimeoutError:
            raise AuthError(f"no login redirect within {self.timeout_s:g}s; run the login again") from None
        finally:
            self._result = self._state = None
            await self.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            async with asyncio.timeout(_REQUEST_READ_TIMEOUT_S):
                line = await reader.readline()
                # drain the headers so the browser sees a clean response (a line over the limit: ValueError)
                for _ in range(_MAX_HEADER_LINES + 1):
                    header = await reader.readline()
                    if header in (b"\r\n", b"\n", b""):
                        break
                else:
                    raise ValueError("too many header lines")
        except (TimeoutError, ConnectionError, ValueError):
            writer.close()
            return
        parts = line.decode("latin-1").split()
        status, text = "404 Not Found", "Not found."
        if len(parts) >= 2 and parts[0] == "GET":
            target = urlsplit(parts[1])
            if target.path == CALLBACK_PATH:
                params = dict(parse_qsl(target.query, keep_blank_values=True))
                if self._state is not None and params.get("state") != self._state:
                    status, text = "400 Bad Request", "This is not the login mini-claude is waiting for."
                else:
                    if self._result is not None and not self._result.done():
                        self._result.set_result(params)
                    status = "200 OK"
                    text = "Login failed; see the terminal." if "error" in params else "Login complete."
        body = _PAGE.format(text=text).encode()
        writer.write(f"HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {len(body)}"
                     f"\r\nConnection: close\r\n\r\n".encode() + body)
        with contextlib.suppress(ConnectionError):
            await writer.drain()
        writer.close()
