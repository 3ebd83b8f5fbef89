"""A remote server killed and restarted on the same port mid-session: the call that was lost fails with a clear
message, and the next call recovers through the manager on a new session (real peers over loopback)."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from mini_claude.mcp.config import ServerConfig
from mini_claude.mcp.connect import build_transport
from mini_claude.mcp.manager import McpManager, ServerStatus
from mini_claude.mcp.transports.base import Transport
from tests.helpers import free_port
from tests.integration.test_remote_servers import adapters, ctx, server_config, started_manager
from tests.mcp.test_http_transport import kill_group, with_port
from tests.peers import peer_command

pytestmark = pytest.mark.timeout(30)

PORT_WAIT_S = 15.0
LOST_TEXT = "connection to the server was lost ("

ECHO = ("echo", {"message": "still there?"})
# (the Python SDK peer recovers in test_restart_between_calls_is_transparent; it starts slowly, so only there)
RECOVERY_PEERS = [
    ("PEER_EVERYTHING_HTTP", "http", "/mcp"),
    ("PEER_EVERYTHING_SSE", "sse", "/sse"),
]
RECOVERY_IDS = ["everything-http", "everything-sse"]


class Peer:
    """A peer process on a fixed port that can be killed and started again on that same port."""

    def __init__(self, variable: str) -> None:
        self.port = free_port()
        self.argv = with_port(peer_command(variable), self.port)
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + PORT_WAIT_S
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"{self.argv[0]} did not listen on port {self.port} (exit {self.proc.poll()})")
                time.sleep(0.05)

    def kill(self) -> None:
        if self.proc is not None:
            kill_group(self.proc)
            self.proc = None


@contextmanager
def peer(variable: str) -> Iterator[Peer]:
    p = Peer(variable)
    p.start()
    try:
        yield p
    finally:
        p.kill()


def _session_of(manager: McpManager) -> Any:
    client = manager.states["remote"].client
    assert client is not None
    return client, getattr(client.transport, "session_id", None)


@pytest.mark.parametrize("variable,kind,path", RECOVERY_PEERS, ids=RECOVERY_IDS)
async def test_killed_server_fails_the_call_clearly_then_recovers(tmp_path: Path, variable: str, kind: str,
                                                                  path: str) -> None:
    with peer(variable) as server:
        servers = server_config(tmp_path, kind, f"http://127.0.0.1:{server.port}{path}")
        async with started_manager(servers) as manager:
            state = manager.states["remote"]
            assert state.status is ServerStatus.READY, state.error
            echo = adapters(manager)["mcp__remote__echo"]
            assert not (await echo.run(*_echo(tmp_path))).is_error
            old_client, old_session = _session_of(manager)

            server.kill()
            began = time.monotonic()
            lost = await echo.run(*_echo(tmp_path))
            assert lost.is_error
            assert LOST_TEXT in lost.as_text() and "next call" in lost.as_text(), lost.as_text()
            assert time.monotonic() - began < 5  # fails at once, not at a deadline
            # still listed (it reconnects by itself), and the status line says why it is not connected
            assert state.status is ServerStatus.READY and state.lost
            assert "connection lost" in state.summary()
            assert "mcp__remote__echo" in adapters(manager)

            server.start()
            again = await adapters(manager)["mcp__remote__echo"].run(*_echo(tmp_path))
            assert not again.is_error, again.as_text()
            assert "still there?" in again.as_text()
            new_client, new_session = _session_of(manager)
            assert new_client is not old_client and state.lost is None and state.error is None
            if old_session is not None:
                assert new_session and new_session != old_session


async def test_in_flight_call_is_lost_and_the_next_one_recovers(tmp_path: Path) -> None:
    with peer("PEER_EVERYTHING_HTTP") as server:
        servers = server_config(tmp_path, "http", f"http://127.0.0.1:{server.port}/mcp")
        async with started_manager(servers) as manager:
            running = asyncio.Event()
            call = asyncio.ensure_future(manager.call_tool(
                "remote", "trigger-long-running-operation", {"duration": 10, "steps": 20},
                on_progress=lambda _p, _t, _m: running.set()))
            await asyncio.wait_for(running.wait(), 5)  # the server is working on it
            server.kill()
            with pytest.raises(Exception) as caught:
                await asyncio.wait_for(call, 8)
            assert LOST_TEXT in str(caught.value) and "next call" in str(caught.value), caught.value
            server.start()
            result = await manager.call_tool("remote", "echo", {"message": "back"})
            assert result.content == [{"type": "text", "text": "Echo: back"}]


@pytest.mark.parametrize("variable,pin", [
    ("PEER_MCPSERVER_V2_HTTP", "2025-11-25"),  # an unknown session gets HTTP 404, as the spec says
    ("PEER_EVERYTHING_HTTP", None),  # server-everything answers an unknown session with HTTP 400
], ids=["mcpserver-v2-http-404", "everything-http-400"])
async def test_restart_between_calls_is_transparent(tmp_path: Path, variable: str, pin: str | None) -> None:
    """The server restarted and forgot our session: the next calls reconnect (once, shared) and just work."""
    built: list[str] = []

    def factory(cfg: ServerConfig, env: Mapping[str, str]) -> Transport:
        built.append(cfg.name)
        return build_transport(cfg, env)

    with peer(variable) as server:
        servers = server_config(tmp_path, "http", f"http://127.0.0.1:{server.port}/mcp", protocol_version=pin)
        async with started_manager(servers, transport_factory=factory) as manager:
            _client, old_session = _session_of(manager)
            server.kill()
            server.start()
            results = await asyncio.gather(*[manager.call_tool("remote", "echo", {"message": f"m{i}"})
                                             for i in range(3)])
            assert [r.content[0]["text"].removeprefix("Echo: ") for r in results] == ["m0", "m1", "m2"]
            _client, new_session = _session_of(manager)
            assert new_session and new_session != old_session
            assert built == ["remote", "remote"]  # the three calls shared one reconnect


async def test_reconnect_that_still_cannot_reach_the_server_tries_again_next_call(tmp_path: Path) -> None:
    with peer("PEER_EVERYTHING_SSE") as server:
        servers = server_config(tmp_path, "sse", f"http://127.0.0.1:{server.port}/sse")
        async with started_manager(servers) as manager:
            state = manager.states["remote"]
            server.kill()
            for _ in range(2):  # the loss, then a reconnect that finds nobody: both clear, neither final
                with pytest.raises(Exception) as caught:
                    await manager.call_tool("remote", "echo", {"message": "x"})
                assert LOST_TEXT in str(caught.value), caught.value
            assert state.status is ServerStatus.READY and state.lost and state.error
            assert "reconnecting failed" in str(caught.value) and "try again on the next call" in str(caught.value)
            server.start()
            result = await manager.call_tool("remote", "echo", {"message": "y"})
            assert result.content == [{"type": "text", "text": "Echo: y"}]


def _echo(tmp_path: Path) -> tuple[dict[str, Any], Any]:
    return dict(ECHO[1]), ctx(tmp_path)
