"""Authorization-server endpoints must be HTTPS unless on loopback (review finding 4), and their answers are read
with a byte cap (finding 18): a server streaming an endless body gets a quick AuthError, not our memory."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest

from mini_claude.errors import AuthError, BodyTooLargeError
from mini_claude.mcp.auth import TokenStore, provider_for
from mini_claude.mcp.auth.discovery import AuthServerMetadata, discover_auth_server
from mini_claude.mcp.auth.registration import register_client
from mini_claude.mcp.auth.tokens import ClientAuth, client_credentials_form, token_request
from mini_claude.mcp.auth.urls import is_secure_url
from mini_claude.mcp.client import McpClient
from mini_claude.mcp.config import ServerConfig
from mini_claude.mcp.transports.http import StreamableHttpTransport
from tests.mcp.auth.mock_oauth import MockOAuth

TIMEOUT_S = 10.0


@pytest.mark.parametrize(("url", "ok"), [
    ("https://as.example.com/token", True), ("http://127.0.0.1:8/t", True), ("http://127.9.9.9/t", True),
    ("http://[::1]:8/t", True), ("http://localhost:3000/t", True), ("http://LOCALHOST/t", True),
    ("http://as.example.com/token", False), ("http://10.0.0.1/t", False), ("http://localhost.evil.com/t", False),
    ("ftp://as.example.com/t", False), ("https:///nohost", False), ("not a url", False),
])
def test_secure_url_rule(url: str, ok: bool) -> None:
    assert is_secure_url(url) is ok


async def test_plain_http_issuer_is_never_fetched() -> None:
    async with httpx.AsyncClient() as http:
        with pytest.raises(AuthError, match="not HTTPS"):
            await discover_auth_server(http, "http://as.example.com", "gh")


async def test_plain_http_token_endpoint_is_never_posted_to() -> None:
    async with httpx.AsyncClient() as http:
        with pytest.raises(AuthError, match=re.escape("token endpoint 'http://as.example.com/token' is not HTTPS")):
            await token_request(http, "http://as.example.com/token", client_credentials_form(None, None),
                                client_auth=ClientAuth("svc", "client_secret_basic", client_secret="s3cret"))


async def test_plain_http_registration_endpoint_refused() -> None:
    meta = AuthServerMetadata(issuer="https://as.example.com", authorization_endpoint=None,
                              token_endpoint="https://as.example.com/token",
                              registration_endpoint="http://as.example.com/register")
    async with httpx.AsyncClient() as http:
        with pytest.raises(AuthError, match=r"registration endpoint .* is not HTTPS"):
            await register_client(http, meta, "http://127.0.0.1:1/callback", None, "gh")


@pytest.fixture
def mock() -> Iterator[MockOAuth]:
    server = MockOAuth(options={"grant_types": ["client_credentials"], "auth_methods": ["client_secret_basic"]})
    yield server.start()
    server.stop()


async def test_metadata_naming_a_plain_http_endpoint_is_refused(mock: MockOAuth) -> None:
    mock.options["token_endpoint"] = "http://as.example.com/token"
    cfg = ServerConfig(name="remote", type="http", url=mock.mcp_url,
                       oauth={"clientId": "svc", "clientSecret": "s3cret-value", "grantType": "client_credentials"})
    client = McpClient(StreamableHttpTransport(mock.mcp_url, server="remote",
                                               auth=provider_for(cfg, {}, store=TokenStore(None))),
                       name="remote", protocol_version="2025-11-25")
    try:
        with pytest.raises(AuthError, match=re.escape("token_endpoint 'http://as.example.com/token' is not HTTPS")):
            await client.connect(timeout_s=TIMEOUT_S)
    finally:
        await client.close()


# ---- endless bodies ----

@pytest.fixture
async def endless() -> AsyncIterator[str]:
    """A loopback HTTP server whose every answer is a 200 JSON body that never ends (chunked)."""
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while (await reader.readline()) not in (b"\r\n", b"\n", b""):
                pass
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
            chunk = b" " * 65536
            while True:
                writer.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                await writer.drain()
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    yield f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
    server.close()


async def test_endless_token_answer_is_cut(endless: str) -> None:
    async with httpx.AsyncClient() as http:
        with pytest.raises(BodyTooLargeError, match="token endpoint"):
            await asyncio.wait_for(token_request(http, f"{endless}/token", client_credentials_form(None, None),
                                                 client_auth=ClientAuth("svc", "none")), TIMEOUT_S)


async def test_endless_metadata_is_cut(endless: str) -> None:
    async with httpx.AsyncClient() as http:
        with pytest.raises(BodyTooLargeError, match="metadata"):
            await asyncio.wait_for(discover_auth_server(http, endless, "gh"), TIMEOUT_S)


async def test_endless_registration_answer_is_cut(endless: str) -> None:
    meta = AuthServerMetadata(issuer=endless, authorization_endpoint=None, token_endpoint=f"{endless}/token",
                              registration_endpoint=f"{endless}/register")
    async with httpx.AsyncClient() as http:
        with pytest.raises(BodyTooLargeError, match="registration"):
            await asyncio.wait_for(register_client(http, meta, "http://127.0.0.1:1/callback", None, "gh"),
                                   TIMEOUT_S)
