"""A login that fails keeps what was stored (review finding 10), never leaves its loopback listener open
(finding 9), and only a redirect carrying the request's `state` ends it (finding 16)."""

from __future__ import annotations

import asyncio
import io
import socket
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import pytest

from mini_claude.errors import AuthError
from mini_claude.mcp.auth import BrowserAuthorizer, TokenStore, login, provider_for
from mini_claude.mcp.client import McpClient
from mini_claude.mcp.config import ServerConfig
from mini_claude.mcp.transports.http import StreamableHttpTransport
from tests.helpers import free_port
from tests.mcp.auth.mock_oauth import HeadlessAuthorizer, MockOAuth

TIMEOUT_S = 15.0


@pytest.fixture
def mock() -> Iterator[MockOAuth]:
    server = MockOAuth().start()
    yield server
    server.stop()


class CancelledLogin(HeadlessAuthorizer):
    """The user closes the browser tab: the authorization never comes back."""

    async def authorize(self, authorization_url: str) -> dict[str, str]:
        raise AuthError("login cancelled")


def _cfg(mock: MockOAuth, oauth: dict[str, Any] | None = None) -> ServerConfig:
    return ServerConfig(name="remote", type="http", url=mock.mcp_url, oauth=oauth or {})


async def _connect(mock: MockOAuth, store: TokenStore) -> None:
    provider = provider_for(_cfg(mock), {}, store=store)
    client = McpClient(StreamableHttpTransport(mock.mcp_url, server="remote", auth=provider), name="remote",
                       protocol_version="2025-11-25")
    try:
        await client.connect(timeout_s=TIMEOUT_S)
    finally:
        await client.close()


async def test_failed_login_keeps_the_stored_login(mock: MockOAuth, tmp_path: Path) -> None:
    path = tmp_path / "mcp-oauth.json"
    await login(_cfg(mock), {}, HeadlessAuthorizer(), store=TokenStore(path))
    before = TokenStore(path).entry(TokenStore.server_key("remote", mock.mcp_url))
    assert before["tokens"] and before["clients"]
    # a later login from another process whose authorizer has another redirect URI (a new registration) fails
    with pytest.raises(AuthError, match="cancelled"):
        await login(_cfg(mock), {}, CancelledLogin("http://127.0.0.1:1/callback"), store=TokenStore(path))
    assert TokenStore(path).entry(TokenStore.server_key("remote", mock.mcp_url)) == before
    await _connect(mock, TokenStore(path))  # still logged in: no AuthRequiredError
    assert len(mock.of("/token")) == 1


async def test_successful_login_replaces_the_client_and_tokens(mock: MockOAuth, tmp_path: Path) -> None:
    path = tmp_path / "mcp-oauth.json"
    await login(_cfg(mock), {}, HeadlessAuthorizer(), store=TokenStore(path))
    await login(_cfg(mock), {}, HeadlessAuthorizer("http://127.0.0.1:2/callback"), store=TokenStore(path))
    entry = TokenStore(path).entry(TokenStore.server_key("remote", mock.mcp_url))
    (client,) = entry["clients"].values()
    assert client["redirect_uri"] == "http://127.0.0.1:2/callback"
    (token,) = entry["tokens"].values()
    assert token["client"]["client_id"] == client["client_id"]


async def test_listener_closed_when_the_login_fails_before_the_browser(mock: MockOAuth) -> None:
    mock.options["registration"] = False  # registration fails after the listener was bound
    port = free_port()
    for _attempt in range(2):  # the second attempt can bind the fixed port again
        authorizer = BrowserAuthorizer(port, open_browser=None, out=io.StringIO(), timeout_s=5)
        provider = provider_for(_cfg(mock, {"callbackPort": port}), {}, store=TokenStore(None))
        with pytest.raises(AuthError, match="dynamic client registration"):
            await provider.login(authorizer)
        assert authorizer._server is None
        with socket.socket() as s:
            s.bind(("127.0.0.1", port))


def _get(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=5) as reply:
            return int(reply.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)


async def test_only_the_matching_state_ends_the_wait() -> None:
    statuses: list[int] = []

    def browser(url: str) -> bool:
        redirect = dict(parse_qsl(urlsplit(url).query))["redirect_uri"]
        statuses.append(_get(f"{redirect}?code=evil&state=wrong"))
        statuses.append(_get(f"{redirect}?code=evil"))
        statuses.append(_get(f"{redirect}?code=good&state=s1"))
        return True

    authorizer = BrowserAuthorizer(0, open_browser=browser, out=io.StringIO(), timeout_s=10)
    await authorizer.start()
    query = urlencode({"redirect_uri": authorizer.redirect_uri, "state": "s1"})
    params = await authorizer.authorize(f"https://as.example/authorize?{query}")
    assert params == {"code": "good", "state": "s1"}
    assert statuses == [400, 400, 200]


async def test_header_flood_is_cut_off() -> None:
    authorizer = BrowserAuthorizer(0, open_browser=None, out=io.StringIO(), timeout_s=10)
    await authorizer.start()
    waiting = asyncio.ensure_future(authorizer.authorize("https://as.example/authorize?state=s1"))
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", authorizer.port)
        writer.write(b"GET /callback?state=s1&code=c HTTP/1.1\r\n")
        closed = False
        for i in range(10_000):
            try:
                writer.write(b"X-Pad-%d: y\r\n" % i)
                await writer.drain()
            except ConnectionError:
                closed = True
                break
            if reader.at_eof():
                closed = True
                break
            if i % 200 == 0:
                await asyncio.sleep(0.01)
        if not closed:
            closed = await asyncio.wait_for(reader.read(), 5) == b""
        writer.close()
        assert closed
        assert not waiting.done()  # the flood did not count as the redirect
    finally:
        waiting.cancel()
        with pytest.raises((asyncio.CancelledError, AuthError)):
            await waiting
        await authorizer.close()


async def test_step_up_from_a_stored_token_that_asked_for_no_scope(mock: MockOAuth, tmp_path: Path) -> None:
    """A new process holds only the stored token (requested_scope null) when the 403 comes: step-up still works
    (seen as an AttributeError in the conformance run, where a stored token was picked up)."""
    from mini_claude.mcp.auth.provider import OAuthProvider
    from mini_claude.mcp.auth.settings import OAuthSettings

    path = tmp_path / "mcp-oauth.json"
    await login(_cfg(mock), {}, HeadlessAuthorizer(), store=TokenStore(path))
    mock.options["call_scope"] = "mcp:write"
    fresh = OAuthProvider(_cfg(mock), OAuthSettings.from_config(_cfg(mock)), authorizer=HeadlessAuthorizer(),
                          store=TokenStore(path))  # what the next run builds: nothing in memory
    client = McpClient(StreamableHttpTransport(mock.mcp_url, server="remote", auth=fresh), name="remote",
                       protocol_version="2025-11-25")
    try:
        await client.connect(timeout_s=TIMEOUT_S)
        await client.call_tool("whoami", {})
    finally:
        await client.close()
    assert [p.get("scope") for p in (r["query"] for r in mock.of("/authorize"))] == [None, "mcp:write"]
