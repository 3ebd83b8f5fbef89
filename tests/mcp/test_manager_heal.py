"""Self-healing: a stdio server that exits after it was ready is restarted by the next call that needs it, after a
backoff; the call that was in flight fails with the reason and is never replayed; after `MAX_RESTARTS_IN_A_ROW`
failed restarts it stays failed and says so. Real processes (the probe server)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

import mini_claude.mcp.manager as manager_module
from mini_claude.errors import TransportError
from mini_claude.mcp.manager import McpManager, ServerStatus
from mini_claude.mcp.server_state import MAX_RESTARTS_IN_A_ROW, restart_backoff_s
from tests.helpers import assert_pid_gone, eventually, server_configs, server_env

pytestmark = pytest.mark.timeout(60)

ROOT = Path(__file__).resolve().parents[2]
PROBE = ROOT / "tests" / "mcp" / "servers" / "probe_server.py"


def _pids(path: Path) -> list[int]:
    return [int(line) for line in path.read_text().split()] if path.exists() else []


def test_backoff_doubles_up_to_thirty_seconds() -> None:
    assert [restart_backoff_s(n) for n in range(7)] == [1, 2, 4, 8, 16, 30, 30]


async def test_an_exited_server_is_restarted_by_the_next_call_after_the_backoff(tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    manager = McpManager(server_configs(tmp_path, {"probe": {"command": sys.executable,
                                                       "args": [str(PROBE), "--pidfile", str(pidfile)]}}),
                         env=server_env(tmp_path))
    manager.start()
    try:
        await manager.wait_started()
        state = manager.states["probe"]
        with pytest.raises(TransportError) as in_flight:
            await manager.call_tool("probe", "crash", {})
        assert "exit" in str(in_flight.value).lower() or "lost" in str(in_flight.value).lower()
        assert state.status is ServerStatus.FAILED and state.restart_after is not None
        [first] = _pids(pidfile)
        assert_pid_gone(first, within_s=5)
        with pytest.raises(TransportError, match=r"restarting it in \ds"):  # inside the backoff: not yet
            await manager.call_tool("probe", "echo", {"text": "too soon"})
        assert len(_pids(pidfile)) == 1  # the crash call was never replayed, nothing restarted yet
        restart_at = state.restart_after
        await eventually(lambda: time.monotonic() >= restart_at, "the backoff to pass", within_s=3)
        result = await manager.call_tool("probe", "echo", {"text": "back"})
        assert result.content[0]["text"].endswith("back")
        assert state.status is ServerStatus.READY and state.restarts == 1 and state.crashes_in_a_row == 0
        assert len(_pids(pidfile)) == 2
    finally:
        await manager.aclose()


async def test_it_gives_up_after_five_restarts_in_a_row(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(manager_module, "restart_backoff_s", lambda _n: 0.0)
    broken = tmp_path / "broken"
    script = f'if [ -e "{broken}" ]; then echo "fatal: config gone" >&2; exit 3; fi; exec "{sys.executable}" "{PROBE}"'
    manager = McpManager(server_configs(tmp_path, {"flaky": {"command": "sh", "args": ["-c", script]}}),
                         env=server_env(tmp_path))
    manager.start()
    try:
        await manager.wait_started()
        state = manager.states["flaky"]
        broken.touch()
        with pytest.raises(TransportError):
            await manager.call_tool("flaky", "crash", {})
        for attempt in range(1, MAX_RESTARTS_IN_A_ROW + 1):
            with pytest.raises(TransportError) as failed:
                await manager.call_tool("flaky", "echo", {"text": "x"})
            assert state.restarts == attempt
            assert "fatal: config gone" in str(failed.value) or "fatal: config gone" in (state.error or "")
        assert state.status is ServerStatus.FAILED and "gave up after 5 restarts in a row" in (state.error or "")
        with pytest.raises(TransportError, match="gave up after 5 restarts in a row"):
            await manager.call_tool("flaky", "echo", {"text": "x"})
        assert state.restarts == MAX_RESTARTS_IN_A_ROW  # no sixth try
        broken.unlink()
        await manager.restart("flaky")  # the user fixes it and reconnects by hand
        assert state.status is ServerStatus.READY
    finally:
        await manager.aclose()


async def test_a_server_that_dies_after_every_restart_is_given_up(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(manager_module, "restart_backoff_s", lambda _n: 0.0)
    manager = McpManager(server_configs(tmp_path, {"probe": {"command": sys.executable, "args": [str(PROBE)]}}),
                         env=server_env(tmp_path))
    manager.start()
    try:
        await manager.wait_started()
        state = manager.states["probe"]
        for _ in range(MAX_RESTARTS_IN_A_ROW + 1):  # it comes back every time, and dies at the next call
            with pytest.raises(TransportError):
                await manager.call_tool("probe", "crash", {})
        assert state.restarts == MAX_RESTARTS_IN_A_ROW and state.restart_after is None
        assert "gave up after 5 restarts in a row" in (state.error or "")
    finally:
        await manager.aclose()


async def test_enable_lifts_only_the_per_project_switch(tmp_path: Path) -> None:
    from mini_claude.errors import ConfigError

    servers = server_configs(tmp_path, {"probe": {"command": sys.executable, "args": [str(PROBE)]},
                                        "off": {"command": sys.executable, "args": [str(PROBE)], "disabled": True}})
    manager = McpManager(servers, env=server_env(tmp_path))
    manager.start()
    try:
        await manager.wait_started()
        await manager.set_enabled("probe", False)
        assert manager.states["probe"].status is ServerStatus.DISABLED
        assert (await manager.set_enabled("probe", True)).status is ServerStatus.READY
        with pytest.raises(ConfigError, match="stays off"):
            await manager.set_enabled("off", True)
    finally:
        await manager.aclose()
