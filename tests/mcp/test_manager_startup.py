"""McpManager startup, reported: a stdio server that hangs or dies at startup is shown with what it said (its
transport's diagnostics: the stderr tail, or stdout when stderr is empty) and its exit code; a ready server carries
how long its start took (`ServerState.startup_s`), set before `on_change` announces it. Real subprocess servers,
exact strings."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from mini_claude.cli.terminal.status import server_line, state_record
from mini_claude.mcp.config import ServerConfig, load_mcp_config
from mini_claude.mcp.manager import McpManager, ServerState, ServerStatus
from tests.helpers import assert_pid_gone, read_pidfile

pytestmark = pytest.mark.timeout(30)

ROOT = Path(__file__).resolve().parents[2]
FAULTY = ROOT / "tests" / "mcp" / "servers" / "faulty_server.py"
ENV = {"PATH": "/usr/bin:/bin"}
PINNED = "2025-06-18"  # pinned: no era probe, so the failure is met by `initialize` itself

# says two lines on stderr, leaves its pid behind, then never answers anything
WAITS_FOR_DB = ("import os, sys, time\n"
                "sys.stderr.write('connecting to db:5432\\nwaiting for database…\\n'); sys.stderr.flush()\n"
                "open(sys.argv[1], 'w').write(str(os.getpid()))\n"
                "time.sleep(120)\n")
# the same, but it prints a banner on stdout after its stderr line: the stderr line is still the one shown
BANNER_THEN_WAITS = ("import sys, time\n"
                     "sys.stderr.write('waiting for database…\\n'); sys.stderr.flush()\n"
                     "print('Welcome to the db server v2', flush=True)\n"
                     "time.sleep(120)\n")
USAGE_ON_STDOUT = "print('usage: server --port N'); raise SystemExit(2)"


def configs(tmp_path: Path, servers: dict[str, Any]) -> list[ServerConfig]:
    loaded = load_mcp_config(cwd=tmp_path, home=tmp_path, env=ENV, strict=True,
                             extra=[json.dumps({"mcpServers": servers})])
    assert not loaded.errors
    return list(loaded.servers.values())


async def test_a_server_that_hangs_at_startup_is_shown_with_its_stderr_tail(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    servers = {"db": {"command": sys.executable, "args": ["-c", WAITS_FOR_DB, str(pidfile)]},
               "ok": {"command": sys.executable, "args": [str(FAULTY)]}}
    manager = McpManager(configs(tmp_path, servers), env={**ENV, "MCP_TIMEOUT": "2000"})
    manager.start()
    try:
        await manager.wait_started()
        db, ok = manager.states["db"], manager.states["ok"]
        assert (db.status, db.error) == (
            ServerStatus.FAILED,
            f"did not start within 2s; stderr: waiting for database… (raise MCP_TIMEOUT, in ms, or check "
            f"`{sys.executable}` in --mcp-config)")
        assert db.startup_s is None
        assert server_line(db) == f"db: failed ({db.error})"
        assert ok.status is ServerStatus.READY  # the hung one cost only itself
        pid = read_pidfile(pidfile)
    finally:
        await manager.aclose()
    assert_pid_gone(pid)


async def test_a_crash_at_startup_shows_exit_code_and_stderr(tmp_path: Path) -> None:
    servers = {"crash": {"command": sys.executable, "args": [str(FAULTY), "--mode", "crash_at_start"],
                         "protocolVersion": PINNED},
               "usage": {"command": sys.executable, "args": ["-c", USAGE_ON_STDOUT], "protocolVersion": PINNED}}
    manager = McpManager(configs(tmp_path, servers), env=ENV, startup_timeout=10)
    manager.start()
    try:
        await manager.wait_started()
        crash, usage = manager.states["crash"], manager.states["usage"]
    finally:
        await manager.aclose()
    assert (crash.status, crash.error) == (
        ServerStatus.FAILED,
        "server exited (exit code 3); stderr: fatal: cannot load config (check mcpServers.crash in --mcp-config)")
    # nothing on stderr: what it printed on stdout (not JSON, so not a message) is the clue
    assert (usage.status, usage.error) == (
        ServerStatus.FAILED,
        "server exited (exit code 2); output: usage: server --port N (check mcpServers.usage in --mcp-config)")


async def test_startup_time_is_measured_and_shown(tmp_path: Path) -> None:
    announced: list[tuple[ServerStatus, float | None]] = []

    def on_change(state: ServerState) -> None:
        announced.append((state.status, state.startup_s))

    servers = {"ok": {"command": sys.executable, "args": [str(FAULTY)]}}
    manager = McpManager(configs(tmp_path, servers), env=ENV, startup_timeout=10, on_change=on_change)
    manager.start()
    try:
        await manager.wait_started()
        state = manager.states["ok"]
        assert state.status is ServerStatus.READY
        assert state.startup_s is not None and 0 < state.startup_s < 10
        # the announcement of readiness already carries the time
        assert announced == [(ServerStatus.READY, state.startup_s)]
        assert server_line(state) == f"ok: ready (1 tool) · started in {state.startup_s:.2f}s"
        assert state_record(state)["startup_s"] == round(state.startup_s, 3)
        # a restart forgets the old time and measures again
        restarted = await manager.restart("ok")
        assert restarted.startup_s is not None and restarted.startup_s > 0
        assert announced[-2:] == [(ServerStatus.STARTING, None), (ServerStatus.READY, restarted.startup_s)]
    finally:
        await manager.aclose()


async def test_stderr_is_shown_as_stderr_even_when_stdout_said_more_after_it(tmp_path: Path) -> None:
    servers = {"db": {"command": sys.executable, "args": ["-c", BANNER_THEN_WAITS]}}
    manager = McpManager(configs(tmp_path, servers), env={**ENV, "MCP_TIMEOUT": "1500"})
    manager.start()
    try:
        await manager.wait_started()
        db = manager.states["db"]
        assert (db.status, db.error) == (
            ServerStatus.FAILED,
            f"did not start within 1.5s; stderr: waiting for database… (raise MCP_TIMEOUT, in ms, or check "
            f"`{sys.executable}` in --mcp-config)")
    finally:
        await manager.aclose()
