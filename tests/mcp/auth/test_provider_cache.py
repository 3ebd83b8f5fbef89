"""One OAuthProvider per (server, URL, oauth settings, token store) per process (review finding 21): a reconnect
keeps the flow rate limit and the memory of a refused workload assertion; another store never shares state."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mini_claude.errors import AuthError
from mini_claude.mcp.auth import TokenStore, login, logout, provider_for
from mini_claude.mcp.client import McpClient
from mini_claude.mcp.config import ServerConfig
from mini_claude.mcp.transports.http import StreamableHttpTransport
from tests.mcp.auth.mock_oauth import HeadlessAuthorizer, MockOAuth

TIMEOUT_S = 15.0
JWT = {"clientId": "svc", "grantType": "jwt_bearer", "assertion": "a.b.c"}


@pytest.fixture
def mock() -> Iterator[MockOAuth]:
    server = MockOAuth().start()
    yield server
    server.stop()


def _cfg(mock: MockOAuth, oauth: dict[str, Any] | None = None, name: str = "remote") -> ServerConfig:
    return ServerConfig(name=name, type="http", url=mock.mcp_url, oauth=oauth or {})


async def _connect(mock: MockOAuth, cfg: ServerConfig, store: TokenStore) -> None:
    provider = provider_for(cfg, {}, store=store)  # what every (re)connect does through build_transport
    client = McpClient(StreamableHttpTransport(mock.mcp_url, server=cfg.name, auth=provider), name=cfg.name,
                       protocol_version="2025-11-25")
    try:
        await client.connect(timeout_s=TIMEOUT_S)
    finally:
        await client.close()


def test_same_server_same_provider_other_store_or_settings_another(tmp_path: Path) -> None:
    store = TokenStore(None)
    cfg = ServerConfig(name="a", type="http", url="http://127.0.0.1:1/mcp", oauth={"scopes": "x"})
    first = provider_for(cfg, {}, store=store)
    assert provider_for(cfg, {}, store=store) is first
    assert provider_for(ServerConfig(name="a", type="http", url="http://127.0.0.1:1/mcp", oauth={"scopes": "x"}),
                        {}, store=store) is first
    assert provider_for(cfg, {}, store=TokenStore(None)) is not first
    assert provider_for(cfg, {}, store=TokenStore(tmp_path / "s.json")) is not first
    assert provider_for(ServerConfig(name="a", type="http", url="http://127.0.0.1:1/mcp", oauth={"scopes": "y"}),
                        {}, store=store) is not first
    assert provider_for(ServerConfig(name="b", type="http", url="http://127.0.0.1:1/mcp", oauth={"scopes": "x"}),
                        {}, store=store) is not first
    # the same file through another TokenStore object is the same store
    file_provider = provider_for(cfg, {}, store=TokenStore(tmp_path / "s.json"))
    assert provider_for(cfg, {"MINI_CLAUDE_STATE_DIR": str(tmp_path)}, store=None) is not file_provider
    assert provider_for(cfg, {}, store=TokenStore(tmp_path / "s.json")) is file_provider


async def test_refused_assertion_not_retried_on_reconnect(mock: MockOAuth) -> None:
    store = TokenStore(None)
    for _reconnect in range(3):
        with pytest.raises(AuthError, match="unsupported_grant_type"):
            await _connect(mock, _cfg(mock, JWT), store)
    assert len(mock.of("/token")) == 1  # the mock refuses jwt-bearer; the same assertion is not sent again


async def test_login_reaches_the_running_provider_and_logout_resets_it(mock: MockOAuth, tmp_path: Path) -> None:
    store = TokenStore(tmp_path / "mcp-oauth.json")
    cfg = _cfg(mock)
    background = provider_for(cfg, {}, store=store)
    await login(cfg, {}, HeadlessAuthorizer(), store=store)
    assert background.authorizer is None  # the login's authorizer was only for the login
    assert (await background.request_headers("POST", mock.mcp_url))["Authorization"].startswith("Bearer at-")
    assert logout(cfg, {}, store=store)
    assert await background.request_headers("POST", mock.mcp_url) == {}
