"""Qualified names and routing for awkward server/tool names, a server crashing mid-session, plan mode for MCP
tools, and that no server process outlives the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mini_claude.mcp.config import load_mcp_config
from mini_claude.mcp.manager import McpManager, ServerStatus
from mini_claude.mcp.naming import ToolNameTable, qualify_tool_name
from mini_claude.permissions.gate import PLAN_MODE_TEXT
from mini_claude.tools.mcp_tool import McpToolAdapters
from tests.helpers import assert_pid_gone
from tests.integration.conftest import Cli, answer, probe_entry, result_text, tool_results, tool_use
from tests.peers import peer_command

pytestmark = pytest.mark.timeout(90)

AWKWARD = {"my__srv": ("echo",), "dot.srv": ("do.thing", "echo"), "plain": ("a__b",)}


def _awkward_config(cli: Cli) -> str:
    return cli.config_file({server: probe_entry(*[a for t in tools if t != "echo" for a in ("--tool", t)])
                            for server, tools in AWKWARD.items()})


def test_awkward_names_get_the_naming_module_names_and_route(cli: Cli) -> None:
    config = _awkward_config(cli)
    expected = {(s, t): qualify_tool_name(s, t) for s, tools in AWKWARD.items() for t in tools}
    assert expected[("plain", "a__b")] == "mcp__plain__a__b"
    assert expected[("my__srv", "echo")] != "mcp__my__srv__echo"  # "__" in a server name is hashed
    for (server, _tool), name in expected.items():
        rows = cli.run("mcp", "tools", server, "--json", "--mcp-config", config).json()
        assert name in {row["qualified_name"] for row in rows}

    calls = list(expected.items())
    turns = [tool_use(name, {"text": f"via-{i}"}) for i, (_pair, name) in enumerate(calls)]
    mock = cli.mock([*turns, answer("ok")])
    r = cli.run("-p", "go", "--mcp-config", config, "--yolo")
    assert r.rc == 0, r.stderr
    offered = {t["name"] for t in mock.requests[0]["body"]["tools"]}
    assert set(expected.values()) <= offered
    results = tool_results(mock)
    assert len(results) == len(calls)
    for i, ((_server, tool), _name) in enumerate(calls):
        assert not results[i].get("is_error"), results[i]
        assert result_text(results[i]) == f"probe-echo:{tool}:via-{i}"


async def test_manager_routes_awkward_names(tmp_path: Path) -> None:
    servers = {s: probe_entry(*[a for t in tools if t != "echo" for a in ("--tool", t)])
               for s, tools in AWKWARD.items()}
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    loaded = load_mcp_config(cwd=tmp_path, home=tmp_path, env=env, extra=[json.dumps({"mcpServers": servers})],
                             strict=True)
    manager = McpManager(loaded.servers.values(), env=env, startup_timeout=10)
    manager.start()
    try:
        await manager.wait_started()
        table = ToolNameTable((s, t.name) for s in AWKWARD for t in manager.states[s].tools)
        entries = {e.qualified_name: e for e in manager.tools()}
        for server, tools in AWKWARD.items():
            for tool in tools:
                name = table.qualified(server, tool)
                assert manager.server_of(name) == server
                assert (entries[name].server, entries[name].tool.name) == (server, tool)
                result = await manager.call_tool(server, entries[name].tool.name, {"text": "x"})
                assert result.content[0]["text"] == f"probe-echo:{tool}:x"
    finally:
        await manager.aclose()


def test_server_crash_mid_session(cli: Cli) -> None:
    config = cli.config_file({"a": probe_entry(), "b": probe_entry()})
    mock = cli.mock([
        tool_use("mcp__a__crash"),
        tool_use("mcp__b__echo", {"text": "still-here"}),
        tool_use("mcp__a__echo", {"text": "again"}),
        answer("b said {{last_tool_result}}"),
    ])
    r = cli.run("-p", "go", "--mcp-config", config, "--yolo")
    assert r.rc == 0, r.stderr
    crash, survivor, after = tool_results(mock)
    assert crash.get("is_error") is True
    text = result_text(crash)
    assert "'a'" in text or " a" in text
    assert "exit" in text.lower() or "lost" in text.lower() or "crash" in text.lower(), text
    assert not survivor.get("is_error") and result_text(survivor) == "probe-echo:echo:still-here"
    # a's tools stay offered while it restarts in the background; the next call to it waits and gets through
    later_tools = {t["name"] for t in mock.requests[1]["body"]["tools"]}
    assert {"mcp__b__echo", "mcp__a__echo"} <= later_tools
    assert not after.get("is_error") and result_text(after) == "probe-echo:echo:again"


async def test_manager_marks_crashed_server_failed(tmp_path: Path) -> None:
    from mini_claude.tools.base import ToolContext

    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    servers = {"a": probe_entry(), "b": probe_entry()}
    loaded = load_mcp_config(cwd=tmp_path, home=tmp_path, env=env, extra=[json.dumps({"mcpServers": servers})],
                             strict=True)
    manager = McpManager(loaded.servers.values(), env=env, startup_timeout=10)
    manager.start()
    try:
        await manager.wait_started()
        adapters = {a.name: a for a in McpToolAdapters(manager)()}
        ctx = ToolContext(cwd=tmp_path, spill_dir=tmp_path / "spill")
        result = await adapters["mcp__a__crash"].run({}, ctx)
        assert result.is_error
        assert "exit" in json.dumps(result.content).lower()
        assert manager.states["a"].status is ServerStatus.READY  # restarting in the background
        assert manager.states["a"].lost and "connection lost" in manager.states["a"].lost
        assert manager.states["b"].status is ServerStatus.READY
        ok = await adapters["mcp__b__echo"].run({"text": "t"}, ctx)
        assert not ok.is_error
        assert {a.name for a in manager.tools()} == set(adapters)  # a's tools still offered
        again = await adapters["mcp__a__echo"].run({"text": "t"}, ctx)  # waits for the restart
        assert not again.is_error and manager.states["a"].restarts == 1
    finally:
        await manager.aclose()


def _pids(path: Path) -> list[int]:
    return [int(x) for x in path.read_text().split()] if path.exists() else []


@pytest.mark.parametrize("outcome", ["answer", "model-error", "crash"])
def test_no_server_survives_the_cli(cli: Cli, outcome: str) -> None:
    pidfile = cli.tmp / "pids"
    everything = peer_command("PEER_EVERYTHING")
    servers = {
        "a": probe_entry("--pidfile", str(pidfile)),
        "b": probe_entry("--pidfile", str(pidfile)),
        "slow": probe_entry("--hang", "--pidfile", str(pidfile)),  # fails at MCP_TIMEOUT, must still be reaped
        # server-everything keeps running on stdin EOF: shutdown must escalate
        "everything": {"command": "/bin/sh", "args": ["-c", f'echo $$ >> "{pidfile}"; exec "$0" "$@"',
                                                       *everything]},
    }
    config = cli.config_file(servers)
    turns = {
        "answer": [tool_use("mcp__a__echo", {"text": "x"}), answer("fine")],
        "model-error": [tool_use("mcp__a__echo", {"text": "x"}),
                        {"error": {"status": 400, "message": "bad request"}}],
        "crash": [tool_use("mcp__b__crash"), answer("fine")],
    }[outcome]
    cli.mock(turns)
    r = cli.run("-p", "go", "--mcp-config", config, "--yolo", env={"MCP_TIMEOUT": "1000"})
    assert (r.rc == 0) == (outcome != "model-error"), r.stderr
    # regression: aclose() cancelled the close() of lost servers, so asyncio reaped them behind our back
    assert "Unknown child process" not in r.stderr
    pids = _pids(pidfile)
    assert len(pids) == 4, pids
    for pid in pids:
        assert_pid_gone(pid, within_s=2.0)


def test_plan_mode_runs_read_only_mcp_tools_only(cli: Cli) -> None:
    config = cli.config_file({"p": probe_entry()})
    mock = cli.mock([
        tool_use("mcp__p__peek"),
        tool_use("mcp__p__poke"),
        answer("poke: {{last_tool_result_is_error}}"),
    ])
    # an allow rule does not lift plan mode's read-only restriction; a read-only MCP tool still needs one (its
    # readOnlyHint is a claim, not a grant: tests/permissions/test_plan_mode.py)
    r = cli.run("-p", "plan it", "--mcp-config", config, "--plan", "--allowedTools", "mcp__p__poke mcp__p__peek")
    assert r.rc == 0 and "denied on the way" in r.stderr, r.stderr  # answered; a call was denied on the way
    peek, poke = tool_results(mock)
    assert not peek.get("is_error") and result_text(peek) == "peeked"
    assert poke.get("is_error") is True
    assert "plan mode" in result_text(poke) and PLAN_MODE_TEXT[:40] in result_text(poke)
    assert r.stdout.strip() == "poke: true"


def test_allow_rule_without_yolo(cli: Cli) -> None:
    config = cli.config_file({"p": probe_entry()})
    mock = cli.mock([tool_use("mcp__p__poke"), tool_use("mcp__p__echo", {"text": "t"}), answer("done")])
    r = cli.run("-p", "x", "--mcp-config", config, "--allowedTools", "mcp__p__poke")
    assert r.rc == 0 and "denied on the way" in r.stderr, r.stderr  # answered; a call was denied on the way
    poke, echo = tool_results(mock)
    assert not poke.get("is_error") and result_text(poke) == "poked"
    assert echo.get("is_error") is True  # not allowed, and -p cannot ask



async def test_aclose_stops_a_lost_but_living_server(tmp_path: Path) -> None:
    """Regression: aclose() cancelled the pending close() of a server whose connection was lost, so a process
    that closed its stdout but kept running outlived aclose()."""
    from mini_claude.tools.base import ToolContext

    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    pidfile = tmp_path / "pid"
    servers = {"v": probe_entry("--pidfile", str(pidfile))}
    loaded = load_mcp_config(cwd=tmp_path, home=tmp_path, env=env, extra=[json.dumps({"mcpServers": servers})],
                             strict=True)
    manager = McpManager(loaded.servers.values(), env=env, startup_timeout=10)
    manager.start()
    try:
        await manager.wait_started()
        (pid,) = _pids(pidfile)
        adapters = {a.name: a for a in McpToolAdapters(manager)()}
        result = await adapters["mcp__v__vanish"].run({}, ToolContext(cwd=tmp_path, spill_dir=tmp_path / "s"))
        assert result.is_error and "stdout" in json.dumps(result.content)
        assert manager.states["v"].lost is not None  # lost; restarting in the background
    finally:
        await manager.aclose()
    assert_pid_gone(pid, within_s=0.3)
