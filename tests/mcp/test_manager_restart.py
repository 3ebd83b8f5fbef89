"""McpManager.restart: a ready stdio server is replaced by a new process (the old one gone), a failed one comes back
once its cause is fixed, a needs-auth HTTP server becomes ready after a login (against the loopback mock OAuth
server), a start in flight is replaced without leaking a process, a cancelled caller leaves the start running,
and names that may not restart are refused with a clear ConfigError."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

import pytest

from mini_claude.errors import ConfigError
from mini_claude.mcp.auth import TokenStore, login
from mini_claude.mcp.manager import McpManager, ServerState, ServerStatus
from tests.helpers import assert_pid_gone, server_configs, server_env
from tests.mcp.auth.mock_oauth import HeadlessAuthorizer, MockOAuth

pytestmark = pytest.mark.timeout(30)

ROOT = Path(__file__).resolve().parents[2]
PROBE = ROOT / "tests" / "mcp" / "servers" / "probe_server.py"


def _pids(path: Path, count: int, within_s: float = 5.0) -> list[int]:
    """The pids the probe server appended to `path`, waiting until there are `count` of them."""
    deadline = time.monotonic() + within_s
    while True:
        pids = [int(line) for line in path.read_text().split()] if path.exists() else []
        if len(pids) >= count or time.monotonic() >= deadline:
            return pids
        time.sleep(0.01)


async def test_restart_ready_stdio_server_replaces_the_process(tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    changes: list[tuple[str, ServerStatus]] = []
    manager = McpManager(server_configs(tmp_path, {"probe": {"command": sys.executable,
                                                       "args": [str(PROBE), "--pidfile", str(pidfile)]}}),
                         env=server_env(tmp_path), on_change=lambda s: changes.append((s.name, s.status)))
    manager.start()
    try:
        await manager.wait_started()
        assert manager.states["probe"].status is ServerStatus.READY
        [first] = _pids(pidfile, 1)
        changes.clear()

        state = await manager.restart("probe")

        assert isinstance(state, ServerState) and state is manager.states["probe"]
        assert state.status is ServerStatus.READY and state.client is not None
        assert "echo" in [t.name for t in state.tools]
        assert changes == [("probe", ServerStatus.STARTING), ("probe", ServerStatus.READY)]
        pids = _pids(pidfile, 2)
        assert len(pids) == 2 and pids[1] != first
        assert_pid_gone(first, within_s=5)
        assert "mcp__probe__echo" in [t.name for t in manager.tools()]
        result = await manager.call_tool("probe", "echo", {"text": "again"})
        assert "again" in json.dumps(result.content) and not result.is_error
    finally:
        await manager.aclose()
    assert_pid_gone(pids[1], within_s=5)


async def test_restart_failed_server_after_its_cause_is_fixed(tmp_path: Path) -> None:
    script = tmp_path / "server.sh"  # missing at first: the server fails
    manager = McpManager(server_configs(tmp_path, {"late": {"command": str(script)}}), env=server_env(tmp_path))
    manager.start()
    try:
        await manager.wait_started()
        assert manager.states["late"].status is ServerStatus.FAILED
        script.write_text(f"#!/bin/sh\nexec {sys.executable} {PROBE}\n")
        script.chmod(0o755)
        state = await manager.restart("late")
        assert state.status is ServerStatus.READY, state.error
        assert state.error is None and state.tools
    finally:
        await manager.aclose()


async def test_restart_needs_auth_server_after_login(tmp_path: Path) -> None:
    mock = MockOAuth().start()
    try:
        env = server_env(tmp_path)
        servers = server_configs(tmp_path, {"remote": {"type": "http", "url": mock.mcp_url},
                                      "probe": {"command": sys.executable, "args": [str(PROBE)]}})
        manager = McpManager(servers, env=env)
        manager.start()
        try:
            await manager.wait_started()
            remote = manager.states["remote"]
            assert remote.status is ServerStatus.NEEDS_AUTH
            assert "mini-claude mcp login remote" in (remote.error or "")
            probe_client = manager.states["probe"].client

            await login(remote.config, env, HeadlessAuthorizer(), store=TokenStore.default(env))
            state = await manager.restart("remote")

            assert state.status is ServerStatus.READY, state.error
            assert [t.name for t in state.tools] == ["whoami"]
            assert "mcp__remote__whoami" in [t.name for t in manager.tools()]
            result = await manager.call_tool("remote", "whoami", {})
            assert "ok" in json.dumps(result.content)
            assert manager.states["probe"].client is probe_client  # the others are untouched
        finally:
            await manager.aclose()
    finally:
        mock.stop()


async def test_restart_while_starting_leaves_one_process(tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    manager = McpManager(server_configs(tmp_path, {"probe": {"command": sys.executable,
                                                       "args": [str(PROBE), "--pidfile", str(pidfile)]}}),
                         env=server_env(tmp_path))
    manager.start()
    try:
        state = await manager.restart("probe")  # the first start is still in flight
        assert state.status is ServerStatus.READY
        await manager.wait_started()
        pids = _pids(pidfile, 1)
        live = pids[-1]
        for pid in pids[:-1]:
            assert_pid_gone(pid, within_s=5)
    finally:
        await manager.aclose()
    assert_pid_gone(live, within_s=5)


async def test_cancelled_caller_leaves_the_start_running(tmp_path: Path) -> None:
    manager = McpManager(server_configs(tmp_path, {"probe": {"command": sys.executable, "args": [str(PROBE)]}}),
                         env=server_env(tmp_path))
    manager.start()
    try:
        await manager.wait_started()
        first = manager._tasks["probe"]
        caller = asyncio.ensure_future(manager.restart("probe"))
        # cancel while the new start is in flight (not before restart() began, not after it finished)
        async with asyncio.timeout(10):
            while manager._tasks.get("probe") in (None, first) or manager._tasks["probe"].done():
                assert not caller.done(), "restart() finished before the test could cancel it"
                await asyncio.sleep(0.001)
        caller.cancel()
        with pytest.raises(asyncio.CancelledError):
            await caller
        await manager.wait_started(timeout=10)
        assert manager.states["probe"].status is ServerStatus.READY
    finally:
        await manager.aclose()


async def test_restart_refuses_unknown_and_held_servers(tmp_path: Path) -> None:
    servers = server_configs(tmp_path, {"off": {"command": "true", "disabled": True},
                                  "held": {"command": "true"}})
    manager = McpManager(servers, env=server_env(tmp_path),
                         held={"held": (ServerStatus.NEEDS_APPROVAL, "approve it in enabledMcpjsonServers")})
    try:
        with pytest.raises(ConfigError, match=r"no MCP server named 'nope' \(configured: held, off\)"):
            await manager.restart("nope")
        with pytest.raises(ConfigError, match="'off' is disabled"):
            await manager.restart("off")
        with pytest.raises(ConfigError, match="'held' is needs approval: approve it in enabledMcpjsonServers"):
            await manager.restart("held")
        assert manager.states["held"].status is ServerStatus.NEEDS_APPROVAL
    finally:
        await manager.aclose()
