"""A network failure keeps its reason: OAuth requests (discovery, registration, token, the login probe) and the
shared description of httpx errors (`mini_claude.net.errors`) say *why* a request failed — "connection refused",
the host, the phase a timeout hit — not only the exception's type name ("…: ConnectError")."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import httpx
import pytest

from mini_claude.errors import AuthError
from mini_claude.mcp.auth import TokenStore, login
from mini_claude.mcp.auth.discovery import (
    AuthServerMetadata,
    Challenge,
    discover_auth_server,
    discover_resource,
)
from mini_claude.mcp.auth.registration import register_client
from mini_claude.mcp.auth.tokens import ClientAuth, client_credentials_form, token_request
from mini_claude.mcp.config import ServerConfig
from mini_claude.net.errors import describe_http_error
from tests.helpers import refused_port
from tests.mcp.auth.mock_oauth import HeadlessAuthorizer

pytestmark = pytest.mark.timeout(30)

READ_TIMEOUT_S = 0.3


@pytest.fixture
def closed() -> tuple[str, str]:
    """(base URL, host:port) of a loopback port nothing listens on."""
    port = refused_port()
    return f"http://127.0.0.1:{port}", f"127.0.0.1:{port}"


@pytest.fixture
def silent() -> Iterator[str]:
    """A loopback port that accepts connections (the kernel's backlog) but never answers."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)
        yield f"127.0.0.1:{sock.getsockname()[1]}"


async def test_token_request_keeps_the_reason(closed: tuple[str, str]) -> None:
    base, host = closed
    async with httpx.AsyncClient() as http:
        with pytest.raises(AuthError) as info:
            await token_request(http, f"{base}/token", client_credentials_form(None, None),
                                client_auth=ClientAuth("cid", "none"), server="s")
    assert str(info.value) == f"MCP server 's': token endpoint unreachable: cannot connect to {host} (connection refused)"


async def test_discovery_keeps_the_reason(closed: tuple[str, str]) -> None:
    base, host = closed
    async with httpx.AsyncClient() as http:
        with pytest.raises(AuthError) as info:
            await discover_auth_server(http, base, "s")
        assert str(info.value) == (f"MCP server 's': cannot fetch {base}/.well-known/oauth-authorization-server: "
                                   f"cannot connect to {host} (connection refused)")
        with pytest.raises(AuthError) as info:
            await discover_resource(http, f"{base}/mcp", Challenge(), "s")
        assert str(info.value) == (f"MCP server 's': cannot fetch {base}/.well-known/oauth-protected-resource/mcp: "
                                   f"cannot connect to {host} (connection refused)")


async def test_registration_keeps_the_reason(closed: tuple[str, str]) -> None:
    base, host = closed
    meta = AuthServerMetadata(issuer=base, authorization_endpoint=f"{base}/authorize", token_endpoint=f"{base}/token",
                              registration_endpoint=f"{base}/register")
    async with httpx.AsyncClient() as http:
        with pytest.raises(AuthError) as info:
            await register_client(http, meta, "http://127.0.0.1:1/callback", None, "s")
    assert str(info.value) == (f"MCP server 's': client registration at {base}/register failed: cannot connect to "
                               f"{host} (connection refused)")


async def test_login_probe_keeps_the_reason(closed: tuple[str, str]) -> None:
    base, host = closed
    cfg = ServerConfig(name="s", type="http", url=f"{base}/mcp?token=s3cret")
    with pytest.raises(AuthError) as info:
        await login(cfg, {}, HeadlessAuthorizer(), store=TokenStore(None))
    # the URL is shown without its query (it may carry a secret)
    assert str(info.value) == f"MCP server 's': cannot reach {base}/mcp?…: cannot connect to {host} (connection refused)"


async def test_a_timeout_names_its_phase_and_host(silent: str) -> None:
    async with httpx.AsyncClient(timeout=httpx.Timeout(5.0, read=READ_TIMEOUT_S)) as http:
        with pytest.raises(httpx.ReadTimeout) as info:
            await http.get(f"http://{silent}/")
    assert describe_http_error(info.value) == f"timed out waiting for an answer from {silent} (ReadTimeout)"

