"""OAuthSettings validation (errors name mcpServers.NAME.oauth.KEY), TokenStore file handling, resource matching."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from mini_claude.errors import ConfigError
from mini_claude.mcp.auth import OAuthSettings, TokenStore
from mini_claude.mcp.auth.discovery import parse_challenge, resource_matches


def test_defaults_and_scopes() -> None:
    s = OAuthSettings.from_mapping({}, server="gh")
    assert s.grant_type == "authorization_code" and not s.grant_type_explicit
    assert OAuthSettings.from_mapping({"scopes": "a b"}, server="gh").scopes == ("a", "b")
    assert OAuthSettings.from_mapping({"scopes": ["a", "b c"]}, server="gh").scopes == ("a", "b", "c")
    assert OAuthSettings.from_mapping({"callbackPort": "8123"}, server="gh").callback_port == 8123
    assert OAuthSettings.from_mapping({"assertion": "x.y.z"}, server="gh").grant_type == "jwt_bearer"


@pytest.mark.parametrize(("raw", "key"), [
    ({"clientId": 3}, "mcpServers.gh.oauth.clientId"),
    ({"callbackPort": 70000}, "mcpServers.gh.oauth.callbackPort"),
    ({"grantType": "password"}, "mcpServers.gh.oauth.grantType"),
    ({"grantType": "client_credentials"}, "mcpServers.gh.oauth.clientId"),
    ({"scopes": 5}, "mcpServers.gh.oauth.scopes"),
    ({"clientMetadataUrl": "nope"}, "mcpServers.gh.oauth.clientMetadataUrl"),
    ({"enterprise": {"idToken": "t"}}, "mcpServers.gh.oauth.enterprise"),
    ({"dpop": "yes"}, "mcpServers.gh.oauth.dpop"),
])
def test_errors_name_the_key(raw: dict[str, object], key: str) -> None:
    with pytest.raises(ConfigError) as info:
        OAuthSettings.from_mapping(raw, server="gh")
    assert info.value.key == key
    assert "\n" not in str(info.value)


def test_secret_not_in_repr() -> None:
    s = OAuthSettings.from_mapping({"clientId": "c", "clientSecret": "hunter2"}, server="gh")
    assert "hunter2" not in repr(s)


def test_store_file_mode_and_forget(tmp_path: Path) -> None:
    path = tmp_path / "state" / "mcp-oauth.json"
    store = TokenStore(path)
    key = TokenStore.server_key("gh", "https://x/mcp")
    store.put(key, "tokens", "https://as", {"access_token": "t"})
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert TokenStore(path).get(key, "tokens", "https://as") == {"access_token": "t"}
    assert store.entry(key)["issuer"] == "https://as"
    assert not list(path.parent.glob(".*.tmp"))
    assert store.forget_server("gh") and not store.forget_server("gh")
    assert store.entry(key) == {}


def test_store_survives_a_broken_file(tmp_path: Path) -> None:
    path = tmp_path / "mcp-oauth.json"
    path.write_text("{not json")
    assert TokenStore(path).entry("k") == {}


def test_default_store_under_state_dir(tmp_path: Path) -> None:
    assert TokenStore.default({"MINI_CLAUDE_STATE_DIR": str(tmp_path)}).path == tmp_path / "mcp-oauth.json"


def test_resource_matches() -> None:
    assert resource_matches("http://h:1/mcp", "http://h:1/mcp")
    assert resource_matches("http://h:1", "http://h:1/mcp")
    assert not resource_matches("https://evil.example.com/mcp", "http://h:1/mcp")
    assert not resource_matches("http://h:1/mc", "http://h:1/mcp")
    assert not resource_matches("http://h:2/mcp", "http://h:1/mcp")


def test_parse_challenge_bearer_and_dpop() -> None:
    c = parse_challenge({"WWW-Authenticate": 'Bearer error="insufficient_scope", scope="a b", '
                                             'resource_metadata="http://h/.well-known/oauth-protected-resource"'})
    assert (c.scheme, c.error, c.scope) == ("bearer", "insufficient_scope", "a b")
    d = parse_challenge({"www-authenticate": 'DPoP resource_metadata="http://h/prm"'})
    assert (d.scheme, d.resource_metadata) == ("dpop", "http://h/prm")
    assert parse_challenge({}).scheme is None
