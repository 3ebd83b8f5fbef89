"""`HttpSender`: how an HTTP transport sends one request — its header layers, redirects and authorization retries.

Headers, later layers winning: static `headers` from config, then the `headersHelper`'s, then the auth
provider's (`Authorization`, `DPoP`), then the request's own (Accept, session id, protocol version, ...).

Redirects are never followed automatically (httpx would carry our secret headers to wherever the server points).
A 307/308 (and a 301/302/303 answering a GET) is followed by hand, at most `MAX_REDIRECTS` times, and only to
the same origin (scheme, host, port), keeping every header; a redirect to another origin fails the request with
a TransportError naming that origin, and nothing is sent there.

A 401 first re-runs the `headersHelper` (when one is configured; once per request) and resends: its token may
have expired. A 401 that is still there, a 403 (or a 400 carrying `DPoP-Nonce`) goes to the auth provider's
`handle_challenge()`; when it says retry, the same request is sent again with fresh headers, at most
`MAX_AUTH_RETRIES` times in all. Whatever answer is left is returned to the transport, which maps statuses to
errors. Auth errors propagate unchanged.

One sender may serve two transports of one server (Streamable HTTP and its legacy SSE fallback): `prepare()`
runs the helper only once, so both use its headers.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin

from mini_claude.errors import TransportError
from mini_claude.mcp.transports.base import HttpAuth
from mini_claude.mcp.transports.headers_helper import HeadersHelper, header_problem
from mini_claude.net.urls import display_url, origin

if TYPE_CHECKING:
    import httpx

__all__ = ["MAX_AUTH_RETRIES", "MAX_REDIRECTS", "HttpSender", "clean_headers", "is_challenge"]

log = logging.getLogger(__name__)

MAX_AUTH_RETRIES = 3  # resends of one request after auth challenges
MAX_REDIRECTS = 5  # same-origin redirects followed for one request
_METHOD_KEEPING_REDIRECTS = frozenset({307, 308})
_GET_ONLY_REDIRECTS = frozenset({301, 302, 303})  # they turn a POST into a GET: meaningless for a JSON-RPC POST


def clean_headers(headers: Mapping[str, str], server: str | None, what: str) -> dict[str, str]:
    """`headers` without the ones httpx would refuse (non-Latin-1, CR/LF, bad names); each dropped one is logged
    by name (never by value)."""
    clean: dict[str, str] = {}
    for name, value in headers.items():
        problem = header_problem(name, value) if isinstance(name, str) and isinstance(value, str) \
            else f"header {name!r} is not a string pair"
        if problem is None:
            clean[name] = value
        else:
            log.warning("%s: %s: dropping a header: %s", server, what, problem)
    return clean


def is_challenge(response: httpx.Response) -> bool:
    """An answer authorization may fix: 401, 403, or a 400 asking for a DPoP nonce."""
    status = response.status_code
    return status in (401, 403) or (status == 400 and "dpop-nonce" in response.headers)


class HttpSender:
    """Sends requests for one server with its header layers, redirects and challenge handling (see the module
    docstring). The httpx client it is given must not follow redirects itself."""

    def __init__(self, *, server: str | None, headers: Mapping[str, str] | None = None,
                 auth: HttpAuth | None = None, headers_helper: HeadersHelper | None = None) -> None:
        self.server = server
        self.auth = auth
        self.headers_helper = headers_helper
        self._static = clean_headers(headers or {}, server, "headers")
        self._helper_headers: dict[str, str] = {}
        self._prepared = False

    async def prepare(self) -> None:
        """Run the headersHelper (if any), once per sender. Raises TransportError naming its config key when it
        fails (and a later call runs it again)."""
        if self._prepared:
            return
        if self.headers_helper is not None:
            self._helper_headers = await self.headers_helper.run()
        self._prepared = True

    async def send(self, client: httpx.AsyncClient, method: str, url: str, *, headers: Mapping[str, str],
                   content: bytes | None = None, timeout: httpx.Timeout | None = None) -> httpx.Response:
        """Send one request (streamed: the caller reads and closes the response). Raises httpx.HTTPError for
        connection problems (the caller translates them), TransportError for a redirect it will not follow, and
        the auth provider's errors unchanged."""
        helper_rerun = False
        for attempt in range(MAX_AUTH_RETRIES + 1):
            response, target = await self._send_following(client, method, url, headers, content, timeout)
            if not is_challenge(response) or attempt == MAX_AUTH_RETRIES:
                return response
            retry = False
            try:
                if response.status_code == 401 and self.headers_helper is not None and not helper_rerun:
                    # the helper's token may have expired: a fresh one comes before any OAuth flow
                    helper_rerun = True
                    log.debug("%s: HTTP 401; running the headersHelper again", self.server)
                    self._helper_headers = await self.headers_helper.run()
                    retry = True
                elif self.auth is not None:
                    retry = await self.auth.handle_challenge(method, target, response.status_code, response.headers)
            except BaseException:
                await response.aclose()
                raise
            if not retry:
                return response
            await response.aclose()
        raise AssertionError("unreachable")  # the loop returns on its last attempt

    async def _send_following(self, client: httpx.AsyncClient, method: str, url: str, headers: Mapping[str, str],
                              content: bytes | None, timeout: httpx.Timeout | None) -> tuple[httpx.Response, str]:
        """Send once, following same-origin redirects by hand; the final response and the URL that gave it."""
        extra: dict[str, Any] = {} if timeout is None else {"timeout": timeout}
        target = url
        for _hop in range(MAX_REDIRECTS + 1):
            request = client.build_request(method, target, headers=await self._wire_headers(method, target, headers),
                                           content=content, **extra)
            response = await client.send(request, stream=True, follow_redirects=False)
            status = response.status_code
            location = response.headers.get("location")
            follows = status in _METHOD_KEEPING_REDIRECTS or (status in _GET_ONLY_REDIRECTS and method == "GET")
            if not (300 <= status < 400) or location is None:
                return response, target
            await response.aclose()
            if not follows:
                raise TransportError(
                    f"{method} {display_url(target)}: HTTP {status} redirect; an MCP {method} is only redirected "
                    "with 307/308: set the server's `url` to the final address", server=self.server)
            new = urljoin(target, location)
            if origin(new) != origin(url):
                raise TransportError(
                    f"{method} {display_url(url)}: HTTP {status} redirect to another origin ({display_url(new)}); "
                    "not following it (the server's headers and credentials stay on its own origin): set the "
                    "server's `url` to the new address if you trust it", server=self.server)
            log.debug("%s: HTTP %d: following the redirect to %s", self.server, status, display_url(new))
            target = new
        raise TransportError(f"{method} {display_url(url)}: more than {MAX_REDIRECTS} redirects", server=self.server)

    async def _wire_headers(self, method: str, url: str, headers: Mapping[str, str]) -> dict[bytes, bytes]:
        layered = dict(self._static)
        layered.update(self._helper_headers)
        if self.auth is not None:
            layered.update(await self.auth.request_headers(method, url))
        layered.update(headers)
        # httpx encodes str values as ASCII; HTTP allows Latin-1, so we pass checked bytes (a checked name is a
        # token: ASCII)
        return {name.encode("ascii"): value.encode("latin-1")
                for name, value in clean_headers(layered, self.server, f"{method} request").items()}
