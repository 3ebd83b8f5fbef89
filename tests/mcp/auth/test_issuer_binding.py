"""Configured client credentials go to one authorization server only (review finding 3): `oauth.issuer`,
`oauth.authServerMetadataUrl`, else the first issuer seen (recorded in the token store). Dynamic registration
follows a move."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mini_claude.errors import AuthError, ConfigError
from mini_claude.mcp.auth import OAuthSettings, TokenStore, logout, provider_for
from mini_claude.mcp.auth.provider import OAuthProvider
from mini_claude.mcp.client import McpClient
from mini_claude.mcp.config import ServerConfig
from mini_claude.mcp.transports.http import StreamableHttpTransport
from tests.mcp.auth.mock_oauth import HeadlessAuthorizer, MockOAuth

TIMEOUT_S = 15.0
MACHINE = {"clientId": "svc", "clientSecret": "s3cret-value", "grantType": "client_credentials"}


@pytest.fixture
def mock() -> Iterator[MockOAuth]:
    server = MockOAuth(options={"prefix": "/as1", "grant_types": ["client_credentials"],
                                "auth_methods": ["client_secret_basic"]}).start()
    yield server
    server.stop()


def _provider(mock: MockOAuth, store: TokenStore, oauth: dict[str, Any], authorizer: Any = None) -> OAuthProvider:
    cfg = ServerConfig(name="remote", type="http", url=mock.mcp_url, oauth=oauth)
    return provider_for(cfg, {}, authorizer=authorizer, store=store)


async def _connect(mock: MockOAuth, provider: OAuthProvider) -> None:
    client = McpClient(StreamableHttpTransport(mock.mcp_url, server="remote", auth=provider), name="remote",
                       protocol_version="2025-11-25")
    try:
        await client.connect(timeout_s=TIMEOUT_S)
    finally:
        await client.close()


async def test_first_issuer_is_bound_and_a_new_one_refused(mock: MockOAuth, tmp_path: Path) -> None:
    store = TokenStore(tmp_path / "mcp-oauth.json")
    await _connect(mock, _provider(mock, store, MACHINE))
    assert store.field(TokenStore.server_key("remote", mock.mcp_url), "bound_issuer") == f"{mock.base}/as1"
    mock.tokens.clear()
    mock.options["prefix"] = "/as2"  # the server's metadata now names another authorization server
    # a new store object on the same file: what the next mini-claude run sees
    with pytest.raises(AuthError) as info:
        await _connect(mock, _provider(mock, TokenStore(tmp_path / "mcp-oauth.json"), MACHINE))
    message = info.value.message
    assert f"{mock.base}/as2" in message and f"{mock.base}/as1" in message
    assert "mcpServers.remote.oauth.issuer" in message and "s3cret" not in message
    assert not [r for r in mock.requests if r["path"].startswith("/as2/")]  # the secret never went there


async def test_logout_forgets_the_binding(mock: MockOAuth, tmp_path: Path) -> None:
    store = TokenStore(tmp_path / "mcp-oauth.json")
    await _connect(mock, _provider(mock, store, MACHINE))
    mock.tokens.clear()
    mock.options["prefix"] = "/as2"
    cfg = ServerConfig(name="remote", type="http", url=mock.mcp_url, oauth=MACHINE)
    assert logout(cfg, {}, store=store)
    await _connect(mock, _provider(mock, store, MACHINE))
    assert [r["path"] for r in mock.of("/token")] == ["/as1/token", "/as2/token"]


async def test_explicit_issuer_refuses_another(mock: MockOAuth) -> None:
    oauth = {**MACHINE, "issuer": f"{mock.base}/elsewhere"}
    with pytest.raises(AuthError, match=r"not the configured .*/elsewhere.*oauth\.issuer"):
        await _connect(mock, _provider(mock, TokenStore(None), oauth))
    assert not mock.of("/token")


async def test_explicit_issuer_allows_a_planned_move(mock: MockOAuth, tmp_path: Path) -> None:
    store = TokenStore(tmp_path / "mcp-oauth.json")
    await _connect(mock, _provider(mock, store, MACHINE))
    mock.tokens.clear()
    mock.options["prefix"] = "/as2"
    await _connect(mock, _provider(mock, store, {**MACHINE, "issuer": f"{mock.base}/as2"}))
    assert mock.of("/token")[-1]["path"] == "/as2/token"


async def test_auth_server_metadata_url_skips_discovery(mock: MockOAuth) -> None:
    mock.options["prm_servers"] = ["https://as.invalid"]  # discovery would go there (and fail)
    oauth = {**MACHINE, "authServerMetadataUrl": f"{mock.base}/.well-known/oauth-authorization-server/as1"}
    await _connect(mock, _provider(mock, TokenStore(None), oauth))
    assert [r["path"] for r in mock.of("/token")] == ["/as1/token"]
    with pytest.raises(AuthError, match=r"as\.invalid"):
        await _connect(mock, _provider(mock, TokenStore(None), MACHINE))


async def test_dynamic_registration_follows_a_move(tmp_path: Path) -> None:
    mock = MockOAuth(options={"prefix": "/as1"}).start()
    try:
        store = TokenStore(tmp_path / "mcp-oauth.json")
        await _connect(mock, _provider(mock, store, {}, HeadlessAuthorizer()))
        mock.tokens.clear()
        mock.options["prefix"] = "/as2"
        await _connect(mock, _provider(mock, store, {}, HeadlessAuthorizer()))
        assert [r["path"] for r in mock.of("/register")] == ["/as1/register", "/as2/register"]
        assert store.field(TokenStore.server_key("remote", mock.mcp_url), "bound_issuer") is None
    finally:
        mock.stop()


@pytest.mark.parametrize(("raw", "key"), [
    ({"issuer": "http://as.example.com"}, "mcpServers.gh.oauth.issuer"),
    ({"issuer": "https://as.example.com?x=1"}, "mcpServers.gh.oauth.issuer"),
    ({"issuer": 3}, "mcpServers.gh.oauth.issuer"),
    ({"authServerMetadataUrl": "http://as.example.com/.well-known/x"}, "mcpServers.gh.oauth.authServerMetadataUrl"),
])
def test_issuer_settings_validated(raw: dict[str, Any], key: str) -> None:
    with pytest.raises(ConfigError) as info:
        OAuthSettings.from_mapping(raw, server="gh")
    assert info.value.key == key


def test_issuer_settings_accepted() -> None:
    s = OAuthSettings.from_mapping({"issuer": "https://as.example.com/t1",
                                    "authServerMetadataUrl": "http://127.0.0.1:9/.well-known/x"}, server="gh")
    assert s.issuer == "https://as.example.com/t1" and s.auth_server_metadata_url == "http://127.0.0.1:9/.well-known/x"
