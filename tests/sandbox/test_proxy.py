"""The domain proxy with real sockets: an allowed host is reached (CONNECT and plain HTTP), a refused one gets 403
and never a connection; and through a real sandbox, a command reaches an allowed loopback upstream only."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from mini_claude.sandbox.bwrap import find_bwrap
from mini_claude.sandbox.proxy import DomainProxy, domain_allowed
from mini_claude.tools.base import ToolContext
from mini_claude.tools.shell import BashTool
from tests.sandbox.conftest import make_sandbox

pytestmark = pytest.mark.timeout(30)


class Upstream:
    """A loopback server that records what it receives and answers like a tiny HTTP server."""

    def __init__(self) -> None:
        self.received: list[bytes] = []
        self.port = 0
        self._server: asyncio.AbstractServer | None = None

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        data = await reader.readuntil(b"\r\n\r\n")
        self.received.append(data)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 8\r\nConnection: close\r\n\r\nupstream")
        await writer.drain()
        writer.close()

    async def close(self) -> None:
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()


@pytest.fixture
async def upstream() -> AsyncIterator[Upstream]:
    server = Upstream()
    await server.start()
    yield server
    await server.close()


async def exchange(port: int, request: bytes) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(request)
    await writer.drain()
    data = await asyncio.wait_for(reader.read(4096), 5)
    if data.startswith(b"HTTP/1.1 200 Connection established"):  # a tunnel: now speak to the upstream
        writer.write(b"GET /inside HTTP/1.1\r\nHost: x\r\n\r\n")
        await writer.drain()
        data += await asyncio.wait_for(reader.read(4096), 5)
    writer.close()
    return data


def test_domain_entries() -> None:
    allowed = ("example.com", "*.github.com")
    assert domain_allowed("example.com", allowed) and domain_allowed("EXAMPLE.com.", allowed)
    assert not domain_allowed("sub.example.com", allowed) and not domain_allowed("example.com.evil", allowed)
    assert domain_allowed("api.github.com", allowed) and not domain_allowed("github.com", allowed)
    assert not domain_allowed("evilgithub.com", allowed)


async def test_connect_to_an_allowed_host_is_tunnelled(upstream: Upstream) -> None:
    proxy = DomainProxy(["localhost"])
    port = await proxy.start_tcp()
    try:
        reply = await exchange(port, f"CONNECT localhost:{upstream.port} HTTP/1.1\r\n\r\n".encode())
    finally:
        await proxy.close()
    assert reply.startswith(b"HTTP/1.1 200 Connection established") and reply.endswith(b"upstream")
    assert upstream.received == [b"GET /inside HTTP/1.1\r\nHost: x\r\n\r\n"]


async def test_plain_http_is_rewritten_for_the_origin(upstream: Upstream) -> None:
    proxy = DomainProxy(["localhost"])
    port = await proxy.start_tcp()
    try:
        reply = await exchange(port, f"GET http://localhost:{upstream.port}/p?q=1 HTTP/1.1\r\nHost: localhost\r\n"
                                     "Proxy-Authorization: Basic x\r\nConnection: keep-alive\r\n\r\n".encode())
    finally:
        await proxy.close()
    assert reply.endswith(b"upstream")
    [request] = upstream.received
    assert request.startswith(b"GET /p?q=1 HTTP/1.1\r\n") and b"Proxy-Authorization" not in request
    assert b"Connection: close" in request and b"keep-alive" not in request


async def test_a_refused_host_gets_403_and_no_connection(upstream: Upstream) -> None:
    proxy = DomainProxy(["example.com"])
    port = await proxy.start_tcp()
    try:
        tunnel = await exchange(port, f"CONNECT 127.0.0.1:{upstream.port} HTTP/1.1\r\n\r\n".encode())
        plain = await exchange(port, f"GET http://localhost:{upstream.port}/ HTTP/1.1\r\n\r\n".encode())
    finally:
        await proxy.close()
    assert tunnel.startswith(b"HTTP/1.1 403") and b"not in sandbox.network.allowedDomains" in tunnel
    assert plain.startswith(b"HTTP/1.1 403")
    assert upstream.received == [] and proxy.refused == ["127.0.0.1", "localhost"]


@pytest.mark.skipif(find_bwrap() is None or shutil.which("curl") is None, reason="needs bubblewrap and curl")
async def test_a_sandboxed_command_reaches_only_allowed_domains(place: dict[str, Path], upstream: Upstream) -> None:
    sandbox = make_sandbox(place, allowed_domains=("localhost",))
    tool = BashTool()
    tool.sandbox = sandbox
    ctx = ToolContext(cwd=place["work"], spill_dir=place["state"] / "spill")
    try:
        allowed = await tool.run({"command": f"curl -sS -m 5 http://localhost:{upstream.port}/a"}, ctx)
        refused = await tool.run({"command": f"curl -sS -m 5 http://127.0.0.1:{upstream.port}/b"}, ctx)
        direct = await tool.run({"command": f"curl -sS -m 5 --noproxy '*' http://127.0.0.1:{upstream.port}/c"}, ctx)
    finally:
        await sandbox.aclose()
    assert not allowed.is_error and allowed.as_text() == "upstream"
    assert "not in sandbox.network.allowedDomains" in refused.as_text()
    assert direct.is_error and "[sandbox]" in direct.as_text() and "localhost" in direct.as_text()
    assert [r.split(b"\r\n")[0] for r in upstream.received] == [b"GET /a HTTP/1.1"]
