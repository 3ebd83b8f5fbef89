"""Self-healing (issue 19): a stdio server that exits after it was ready is restarted in the background after a
backoff, its tools offered all along; a call that arrives meanwhile waits for the restart; the call in flight when
it died fails with the reason and is never replayed; after `MAX_RESTARTS_IN_A_ROW` restarts in a row it becomes
failed and says so. Real processes (the probe server); every wait is on a condition."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import mini_claude.mcp.healing as healing_module
from mini_claude.errors import TransportError
from mini_claude.mcp.manager import McpManager, ServerStatus
from mini_claude.mcp.server_state import MAX_RESTARTS_IN_A_ROW, restart_backoff_s
from tests.helpers import assert_pid_gone, eventually, server_configs, server_env

pytestmark = pytest.mark.timeout(60)

ROOT = Path(__file__).resolve().parents[2]
PROBE = ROOT / "tests" / "mcp" / "servers" / "probe_server.py"


def _pids(path: Path) -> list[int]:
    return [int(line) for line in path.read_text().split()] if path.exists() else []


def _calls(path: Path) -> list[str]:
    return [json.loads(line)["name"] for line in path.read_text().splitlines()] if path.exists() else []


def _probe(tmp_path: Path) -> McpManager:
    args = [str(PROBE), "--pidfile", str(tmp_path / "pids"), "--calls", str(tmp_path / "calls")]
    return McpManager(server_configs(tmp_path, {"probe": {"command": sys.executable, "args": args}}),
                      env=server_env(tmp_path))


def test_backoff_doubles_up_to_thirty_seconds() -> None:
    assert [restart_backoff_s(n) for n in range(7)] == [1, 2, 4, 8, 16, 30, 30]


async def test_an_exited_server_is_restarted_in_the_background_with_its_tools_still_offered(tmp_path: Path) -> None:
    manager = _probe(tmp_path)
    manager.start()
    try:
        await manager.wait_started()
        state = manager.states["probe"]
        offered = {entry.name for entry in manager.tools()}
        with pytest.raises(TransportError) as in_flight:
            await manager.call_tool("probe", "crash", {})
        assert "exited" in str(in_flight.value)  # the call in flight fails once, with the reason
        # still offered while it restarts: the model can go on calling it
        assert state.status is ServerStatus.READY and state.lost and "exited" in state.lost
        assert {entry.name for entry in manager.tools()} == offered
        assert "restarting" in state.summary()
        [first] = _pids(tmp_path / "pids")
        assert_pid_gone(first, within_s=5)
        # no call needed: it comes back by itself after its 1 s backoff
        await eventually(lambda: len(_pids(tmp_path / "pids")) == 2 and state.lost is None, "the restart",
                         within_s=15)
        assert state.status is ServerStatus.READY and state.restarts == 1 and state.client is not None
        result = await manager.call_tool("probe", "echo", {"text": "back"})
        assert result.content[0]["text"].endswith("back") and state.crashes_in_a_row == 0
        assert _calls(tmp_path / "calls") == ["crash", "echo"]  # the crash call was never replayed
    finally:
        await manager.aclose()


async def test_a_call_that_arrives_while_it_restarts_waits_for_it(tmp_path: Path) -> None:
    manager = _probe(tmp_path)
    manager.start()
    try:
        await manager.wait_started()
        state = manager.states["probe"]
        with pytest.raises(TransportError):
            await manager.call_tool("probe", "crash", {})
        assert state.lost is not None and state.restart_after is not None  # inside the backoff
        result = await manager.call_tool("probe", "echo", {"text": "waited"})
        assert result.content[0]["text"].endswith("waited")
        assert len(_pids(tmp_path / "pids")) == 2 and state.restarts == 1
        assert _calls(tmp_path / "calls") == ["crash", "echo"]
    finally:
        await manager.aclose()


async def test_it_gives_up_after_five_restarts_in_a_row(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(healing_module, "restart_backoff_s", lambda _n: 0.0)
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
        await eventually(lambda: state.status is ServerStatus.FAILED, "giving up", within_s=30)
        assert state.restarts == MAX_RESTARTS_IN_A_ROW
        assert "fatal: config gone" in (state.error or "") and "gave up after 5 restarts in a row" in (state.error or "")
        assert manager.tools() == []  # failed: its tools are no longer offered
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
    monkeypatch.setattr(healing_module, "restart_backoff_s", lambda _n: 0.0)
    manager = _probe(tmp_path)
    manager.start()
    try:
        await manager.wait_started()
        state = manager.states["probe"]
        for _ in range(MAX_RESTARTS_IN_A_ROW + 1):  # it comes back every time (the call waits), and dies again
            with pytest.raises(TransportError):
                await manager.call_tool("probe", "crash", {})
        assert state.status is ServerStatus.FAILED and state.restarts == MAX_RESTARTS_IN_A_ROW
        assert state.restart_after is None and "gave up after 5 restarts in a row" in (state.error or "")
        assert _calls(tmp_path / "calls") == ["crash"] * (MAX_RESTARTS_IN_A_ROW + 1)  # each sent once
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
