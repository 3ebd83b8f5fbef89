"""How server states read on the terminal: `mini-claude mcp list` (text and `--json`) and the REPL's `/mcp` show a
ready server's startup time, and a server that hung at startup with the last line of its stderr. Real CLI
subprocesses and real stdio servers."""

from __future__ import annotations

import io
import json
import re
import sys
from pathlib import Path

import pytest

from mini_claude.cli.mcp.panel import mcp_command
from mini_claude.cli.terminal.render import TerminalUI
from mini_claude.mcp.config import load_mcp_config
from mini_claude.mcp.manager import McpManager, ServerStatus
from mini_claude.tools.mcp_tool import McpToolAdapters
from mini_claude.tools.tool_search import DeferredTools
from tests.helpers import ROOT, clean_env, run_cli

pytestmark = pytest.mark.timeout(60)

FAULTY = ROOT / "tests" / "mcp" / "servers" / "faulty_server.py"
WAITS_FOR_DB = ("import sys, time\n"
                "sys.stderr.write('waiting for database…\\n'); sys.stderr.flush()\n"
                "time.sleep(120)\n")
SERVERS = {"ok": {"command": sys.executable, "args": [str(FAULTY)]},
           "db": {"command": sys.executable, "args": ["-c", WAITS_FOR_DB]}}
DB_ERROR = (f"did not start within 2s; stderr: waiting for database… (raise MCP_TIMEOUT, in ms, or check "
            f"`{sys.executable}` in --mcp-config)")


def test_mcp_list_shows_startup_time_and_the_stderr_of_a_hung_server(tmp_path: Path) -> None:
    env = clean_env(tmp_path, MCP_TIMEOUT="2000")
    config = json.dumps({"mcpServers": SERVERS})
    text = run_cli(["mcp", "list", "--mcp-config", config], cwd=tmp_path, env=env)
    assert text.returncode == 0, text.stderr
    ok_line, db_line = text.stdout.splitlines()
    tokens = re.fullmatch(r"ok  ready           1 tool · started in \d+\.\d\ds · ~(\d+) tokens", ok_line)
    assert tokens, ok_line
    assert db_line == f"db  failed          {DB_ERROR}"

    listed = run_cli(["mcp", "list", "--json", "--mcp-config", config], cwd=tmp_path, env=env)
    assert listed.returncode == 0, listed.stderr
    rows = {row["name"]: row for row in json.loads(listed.stdout)}
    assert isinstance(rows["ok"]["startup_s"], float) and 0 < rows["ok"]["startup_s"] < 2
    assert (rows["ok"]["tool_tokens"], rows["ok"]["deferred"]) == (int(tokens.group(1)), False)
    assert (rows["db"]["status"], rows["db"]["error"], rows["db"]["startup_s"]) == ("failed", DB_ERROR, None)


def test_mcp_list_says_which_servers_tools_are_deferred(tmp_path: Path) -> None:
    """The same setting a session would use: `true` defers every server's tools except an `alwaysLoad` one's."""
    config = json.dumps({"mcpServers": {"ok": SERVERS["ok"], "pinned": {**SERVERS["ok"], "alwaysLoad": True}}})
    env = clean_env(tmp_path, MINI_CLAUDE_TOOL_SEARCH="true")
    listed = run_cli(["mcp", "list", "--json", "--mcp-config", config], cwd=tmp_path, env=env)
    assert listed.returncode == 0, listed.stderr
    rows = {row["name"]: row for row in json.loads(listed.stdout)}
    assert (rows["ok"]["deferred"], rows["pinned"]["deferred"]) == (True, False)
    assert rows["ok"]["tool_tokens"] > 0 and rows["pinned"]["tool_tokens"] > 0
    text = run_cli(["mcp", "list", "--mcp-config", config], cwd=tmp_path, env=env)
    ok_line, pinned_line = sorted(text.stdout.splitlines())
    assert ok_line.endswith(f"· ~{rows['ok']['tool_tokens']} tokens, deferred"), ok_line
    assert pinned_line.endswith(f"· ~{rows['pinned']['tool_tokens']} tokens"), pinned_line


def test_mcp_get_shows_startup_time(tmp_path: Path) -> None:
    config = json.dumps({"mcpServers": {"ok": SERVERS["ok"]}})
    r = run_cli(["mcp", "get", "ok", "--mcp-config", config], cwd=tmp_path, env=clean_env(tmp_path))
    assert r.returncode == 0, r.stderr
    assert re.search(r"^  status: ready — 1 tool · started in \d+\.\d\ds$", r.stdout, re.M), r.stdout


async def test_slash_mcp_shows_startup_time(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    loaded = load_mcp_config(cwd=tmp_path, home=tmp_path, env=env, strict=True,
                             extra=[json.dumps({"mcpServers": {"ok": SERVERS["ok"]}})])
    manager = McpManager(loaded.servers.values(), env=env, startup_timeout=10)
    manager.start()
    try:
        await manager.wait_started()
        state = manager.states["ok"]
        assert state.status is ServerStatus.READY and state.startup_s is not None
        out = io.StringIO()
        await mcp_command(manager, "", TerminalUI(out=out, err=out), out=out)
        deferred = DeferredTools(McpToolAdapters(manager), setting="true", context_tokens=200_000)
        tokens = deferred.budget()["ok"].tokens
        panel = io.StringIO()
        await mcp_command(manager, "", TerminalUI(out=panel, err=panel), out=panel, deferred=deferred)
    finally:
        await manager.aclose()
    assert out.getvalue().splitlines() == [
        f"  ok: ready (1 tool) · started in {state.startup_s:.2f}s",
        "    stdio · protocol 2025-11-25 · 1 tool · 0 restarts",
        "  actions: /mcp | /mcp login NAME | /mcp logout NAME | /mcp accept NAME | /mcp reconnect NAME | "
        "/mcp enable NAME | /mcp disable NAME | /mcp tools NAME | /mcp log NAME | /mcp enable|disable NAME/TOOL "
        "[-s user|project|local] (no NAME: a picker)"]
    assert panel.getvalue().splitlines()[1] == f"    stdio · protocol 2025-11-25 · 1 tool (~{tokens} tokens, deferred) · 0 restarts"
