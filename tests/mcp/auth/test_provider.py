"""OAuthProvider against a loopback mock AS + protected MCP endpoint, through the real Streamable HTTP transport."""

from __future__ import annotations

import logging
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest

from mini_claude.errors import AuthError, AuthRequiredError
from mini_claude.mcp.auth import TokenStore, provider_for
from mini_claude.mcp.auth.provider import OAuthProvider
from mini_claude.mcp.client import McpClient
from mini_claude.mcp.config import ServerConfig
from mini_claude.mcp.transports.http import StreamableHttpTransport
from tests.mcp.auth.mock_oauth import HeadlessAuthorizer, MockOAuth

TIMEOUT_S = 15.0


@pytest.fixture
def mock() -> Iterator[MockOAuth]:
    server = MockOAuth().start()
    yield server
    server.stop()


def _cfg(mock: MockOAuth, oauth: dict[str, Any] | None = None) -> ServerConfig:
    return ServerConfig(name="remote", type="http", url=mock.mcp_url, oauth=oauth or {})


def _provider(mock: MockOAuth, store: TokenStore, *, authorizer: Any = "headless",
              oauth: dict[str, Any] | None = None) -> OAuthProvider:
    auth = HeadlessAuthorizer() if authorizer == "headless" else authorizer
    return provider_for(_cfg(mock, oauth), {}, authorizer=auth, store=store)


async def _session(mock: MockOAuth, provider: OAuthProvider, *, call: bool = True) -> list[str]:
    transport = StreamableHttpTransport(mock.mcp_url, server="remote", auth=provider)
    client = McpClient(transport, name="remote", protocol_version="2025-11-25")
    try:
        await client.connect(timeout_s=TIMEOUT_S)
        tools = [t.name for t in await client.list_tools()]
        if call:
            await client.call_tool("whoami", {})
        return tools
    finally:
        await client.close()


def _authorize_params(mock: MockOAuth) -> list[dict[str, str]]:
    return [r["query"] for r in mock.of("/authorize")]


async def test_full_login_with_dcr_pkce_state_and_resource(mock: MockOAuth, tmp_path: Path) -> None:
    store = TokenStore(tmp_path / "state" / "mcp-oauth.json")
    assert await _session(mock, _provider(mock, store)) == ["whoami"]
    (auth,) = _authorize_params(mock)
    assert auth["code_challenge_method"] == "S256" and len(auth["code_challenge"]) == 43
    assert auth["resource"] == mock.mcp_url and auth["state"]
    assert auth["client_id"].startswith("client-")
    assert "scope" not in auth  # nothing in WWW-Authenticate, no scopes_supported: omitted
    (token_req,) = [r for r in mock.of("/token")]
    assert token_req["form"]["resource"] == mock.mcp_url and token_req["form"]["code_verifier"]
    (reg,) = mock.of("/register")
    assert reg["json"]["application_type"] == "native"
    assert "refresh_token" in reg["json"]["grant_types"]
    # the store: 0600, reused by a new provider without an authorizer (no new login, no new registration)
    mode = stat.S_IMODE((tmp_path / "state" / "mcp-oauth.json").stat().st_mode)
    assert mode == 0o600
    await _session(mock, _provider(mock, store, authorizer=None))
    assert len(mock.of("/authorize")) == 1 and len(mock.of("/register")) == 1


async def test_no_authorizer_needs_login(mock: MockOAuth) -> None:
    provider = _provider(mock, TokenStore(None), authorizer=None)
    with pytest.raises(AuthRequiredError, match="mini-claude mcp login remote"):
        await _session(mock, provider)
    assert not mock.of("/register")


async def test_scope_from_www_authenticate_and_offline_access(mock: MockOAuth) -> None:
    mock.options.update(www_scope="mcp:read", as_scopes=["mcp:read", "offline_access"], prm_scopes=["mcp:all"])
    await _session(mock, _provider(mock, TokenStore(None)))
    assert _authorize_params(mock)[0]["scope"] == "mcp:read offline_access"


async def test_scopes_supported_without_offline_access(mock: MockOAuth) -> None:
    mock.options.update(prm_scopes=["a", "b"], as_scopes=["a", "b"])
    await _session(mock, _provider(mock, TokenStore(None)))
    assert _authorize_params(mock)[0]["scope"] == "a b"


async def test_step_up_unions_scopes(mock: MockOAuth) -> None:
    mock.options.update(www_scope="mcp:basic", call_scope="mcp:write")
    await _session(mock, _provider(mock, TokenStore(None)))
    scopes = [p.get("scope") for p in _authorize_params(mock)]
    assert scopes == ["mcp:basic", "mcp:basic mcp:write"]


async def test_step_up_is_bounded(mock: MockOAuth) -> None:
    mock.options.update(www_scope="mcp:admin", call_scope="mcp:admin", always_403=True)
    with pytest.raises(AuthError, match="insufficient_scope"):
        await _session(mock, _provider(mock, TokenStore(None)))
    assert len(mock.of("/authorize")) <= 3


async def test_refresh_before_expiry(mock: MockOAuth) -> None:
    mock.options.update(expires_in=30)  # inside the refresh margin: every request refreshes first
    store = TokenStore(None)
    await _session(mock, _provider(mock, store), call=False)
    grants = [r["form"]["grant_type"] for r in mock.of("/token")]
    assert grants[0] == "authorization_code" and "refresh_token" in grants
    assert len(mock.of("/authorize")) == 1


async def test_refresh_on_401_then_new_login_when_refresh_fails(mock: MockOAuth) -> None:
    store = TokenStore(None)
    await _session(mock, _provider(mock, store), call=False)
    mock.tokens.clear()  # the server forgets every access token
    await _session(mock, _provider(mock, store, authorizer=None), call=False)
    assert [r["form"]["grant_type"] for r in mock.of("/token")] == ["authorization_code", "refresh_token"]
    mock.tokens.clear()
    mock.options["refresh_fails"] = True
    with pytest.raises(AuthRequiredError):
        await _session(mock, _provider(mock, store, authorizer=None), call=False)


@pytest.mark.parametrize(("iss_supported", "iss_mode", "ok"), [
    (True, "correct", True), (None, "omit", True), (True, "omit", False), (True, "wrong", False),
    (None, "wrong", False),
])
async def test_iss_checks(mock: MockOAuth, iss_supported: bool | None, iss_mode: str, ok: bool) -> None:
    mock.options.update(iss_supported=iss_supported, iss_mode=iss_mode)
    provider = _provider(mock, TokenStore(None))
    if ok:
        await _session(mock, provider, call=False)
    else:
        with pytest.raises(AuthError, match="iss"):
            await _session(mock, provider, call=False)
        assert not mock.of("/token")


async def test_metadata_issuer_mismatch_refused(mock: MockOAuth) -> None:
    mock.options["metadata_issuer"] = "https://attacker.example.com"
    with pytest.raises(AuthError, match="issuer"):
        await _session(mock, _provider(mock, TokenStore(None)), call=False)
    assert not mock.of("/register") and not mock.of("/authorize")


async def test_resource_mismatch_refused(mock: MockOAuth) -> None:
    mock.options["prm_resource"] = "https://evil.example.com/mcp"
    with pytest.raises(AuthError, match="not this server"):
        await _session(mock, _provider(mock, TokenStore(None)), call=False)
    assert not mock.of("/authorize")


async def test_pkce_s256_required(mock: MockOAuth) -> None:
    mock.options["pkce_methods"] = ["plain"]
    with pytest.raises(AuthError, match="S256"):
        await _session(mock, _provider(mock, TokenStore(None)), call=False)


async def test_path_issuer_discovery_order(mock: MockOAuth) -> None:
    mock.options["prefix"] = "/tenant1"
    await _session(mock, _provider(mock, TokenStore(None)), call=False)
    well_known = [p for p in mock.paths() if "/.well-known/" in p]
    assert well_known[:2] == ["/.well-known/oauth-protected-resource/mcp",
                              "/.well-known/oauth-authorization-server/tenant1"]


async def test_preregistered_client_with_secret_uses_basic(mock: MockOAuth) -> None:
    mock.options.update(registration=False, auth_methods=["client_secret_basic"])
    provider = _provider(mock, TokenStore(None), oauth={"clientId": "pre", "clientSecret": "s3cret-value"})
    await _session(mock, provider, call=False)
    (token_req,) = mock.of("/token")
    assert token_req["headers"]["authorization"].startswith("Basic ")
    assert "client_secret" not in token_req["form"]


async def test_client_credentials_inferred_from_as_metadata(mock: MockOAuth) -> None:
    mock.options.update(grant_types=["client_credentials"], auth_methods=["client_secret_basic"])
    provider = _provider(mock, TokenStore(None), authorizer=None,
                         oauth={"clientId": "svc", "clientSecret": "s3cret-value"})
    await _session(mock, provider, call=False)
    assert [r["form"]["grant_type"] for r in mock.of("/token")] == ["client_credentials"]


async def test_no_secret_in_logs(mock: MockOAuth, caplog: pytest.LogCaptureFixture) -> None:
    mock.options.update(dcr_secret="dcr-secretvalue")
    caplog.set_level(logging.DEBUG)
    await _session(mock, _provider(mock, TokenStore(None)))
    assert mock.tokens
    assert "secretvalue" not in caplog.text


@pytest.mark.parametrize("cimd", [True, False])
async def test_cimd_client_id_only_when_supported(mock: MockOAuth, cimd: bool) -> None:
    url = "https://client.example.com/mini-claude.json"
    mock.options["cimd"] = cimd
    await _session(mock, _provider(mock, TokenStore(None), oauth={"clientMetadataUrl": url}), call=False)
    client_id = _authorize_params(mock)[0]["client_id"]
    assert (client_id == url) is cimd
    assert bool(mock.of("/register")) is not cimd


async def test_browser_authorizer_loopback() -> None:
    import urllib.request

    from mini_claude.mcp.auth import BrowserAuthorizer

    seen: list[str] = []

    def fake_browser(url: str) -> bool:
        seen.append(url)
        redirect = dict(parse_qsl(urlsplit(url).query))["redirect_uri"]
        with urllib.request.urlopen(f"{redirect}?code=abc&state=xyz", timeout=5) as reply:
            assert reply.status == 200
        return True

    import io

    authorizer = BrowserAuthorizer(0, open_browser=fake_browser, out=io.StringIO(), timeout_s=10)
    await authorizer.start()
    assert authorizer.redirect_uri.startswith("http://127.0.0.1:")
    params = await authorizer.authorize(f"https://as.example/authorize?redirect_uri={authorizer.redirect_uri}")
    assert params == {"code": "abc", "state": "xyz"}
    assert seen


async def test_browser_authorizer_times_out() -> None:
    import io

    from mini_claude.mcp.auth import BrowserAuthorizer

    authorizer = BrowserAuthorizer(0, open_browser=None, out=io.StringIO(), timeout_s=0.2)
    with pytest.raises(AuthError, match="no login redirect"):
        await authorizer.authorize("https://as.example/authorize")


async def test_the_access_token_is_masked_wherever_it_would_be_shown(mock: MockOAuth, tmp_path: Path) -> None:
    """Issue 27: an MCP server's OAuth access token is a known secret: a tool result or a terminal line that
    carries it shows `[secret mcp:remote OAuth token]`."""
    from mini_claude.secrets import SECRETS, mask

    SECRETS.clear()
    try:
        store = TokenStore(tmp_path / "state" / "mcp-oauth.json")
        await _session(mock, _provider(mock, store))
        issued = [v for r in mock.of("/mcp") for k, v in r.get("headers", {}).items()
                  if k.lower() == "authorization"]
        assert issued, "the server was sent the token"
        access = issued[-1].partition(" ")[2]
        assert mask(f"the token is {access}") == "the token is [secret mcp:remote OAuth token]"
    finally:
        SECRETS.clear()
