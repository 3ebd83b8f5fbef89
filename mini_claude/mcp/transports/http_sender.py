"""`HttpSender`: how an HTTP transport sends one request — its header layers and its authorization retries.

Headers, later layers winning: static `headers` from config, then the `headersHelper`'s, then the auth
provider's (`Authorization`, `DPoP`), then the request's own (Accept, session id, protocol version, ...).
A 401/403 (or a 400 carrying `DPoP-Nonce`) goes to the auth provider's `handle_challenge()`; when it says
retry, the same request is sent again with fresh headers, at most `MAX_AUTH_RETRIES` times. A 401 nobody
handled re-runs the `headersHelper` once (its token may have expired) and retries. Whatever answer is left is
returned to the transport, which maps statuses to errors. Auth errors propagate unchanged.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from mini_claude.mcp.transports.base import HttpAuth
from mini_claude.mcp.transports.headers_helper import HeadersHelper, header_problem

if TYPE_CHECKING:
    import httpx

__all__ = ["MAX_AUTH_RETRIES", "HttpSender", "clean_headers", "is_challenge"]

log = logging.getLogger(__name__)

MAX_AUTH_RETRIES = 3  # resends of one request after auth challenges


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
    """Sends requests for one server with its header layers and challenge handling (see the module docstring)."""

    def __init__(self, *, server: str | None, headers: Mapping[str, str] | None = None,
                 auth: HttpAuth | None = None, headers_helper: HeadersHelper | None = None) -> None:
        self.server = server
        self.auth = auth
        self.headers_helper = headers_helper
        self._static = clean_headers(headers or {}, server, "headers")
        self._helper_headers: dict[str, str] = {}

    async def prepare(self) -> None:
        """Run the headersHelper (if any). Raises TransportError naming its config key when it fails."""
        if self.headers_helper is not None:
            self._helper_headers = await self.headers_helper.run()

    async def send(self, client: httpx.AsyncClient, method: str, url: str, *, headers: Mapping[str, str],
                   content: bytes | None = None, timeout: httpx.Timeout | None = None) -> httpx.Response:
        """Send one request (streamed: the caller reads and closes the response). Raises httpx.HTTPError for
        connection problems (the caller translates them) and the auth provider's errors unchanged."""
        helper_rerun = False
        extra: dict[str, Any] = {} if timeout is None else {"timeout": timeout}
        for attempt in range(MAX_AUTH_RETRIES + 1):
            layered = dict(self._static)
            layered.update(self._helper_headers)
            if self.auth is not None:
                layered.update(await self.auth.request_headers(method, url))
            layered.update(headers)
            # httpx encodes str values as ASCII; HTTP allows Latin-1, so we pass checked bytes
            wire = {name: value.encode("latin-1")
                    for name, value in clean_headers(layered, self.server, f"{method} request").items()}
            request = client.build_request(method, url, headers=wire, content=content, **extra)
            response = await client.send(request, stream=True)
            if not is_challenge(response) or attempt == MAX_AUTH_RETRIES:
                return response
            retry = False
            try:
                if self.auth is not None:
                    retry = await self.auth.handle_challenge(method, url, response.status_code, response.headers)
                if (not retry and response.status_code == 401 and self.headers_helper is not None
                        and not helper_rerun):
                    helper_rerun = True
                    log.debug("%s: HTTP 401; running the headersHelper again", self.server)
                    self._helper_headers = await self.headers_helper.run()
                    retry = True
            except BaseException:
                await response.aclose()
                raise
            if not retry:
                return response
            await response.aclose()
        raise AssertionError("unreachable")  # the loop returns on its last attempt
