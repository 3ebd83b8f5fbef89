"""Five servers at once (three real third-party peers, one that hangs in initialize, one whose command does not
exist): the prompt is answered with the working servers' tools, the broken ones are `failed` with reasons that
say what to change, and startup is parallel (every server is written to before any answers: a barrier, no clock)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import ROOT, Cli, answer, probe_entry, result_text, tool_results, tool_use
from tests.peers import peer_command

pytestmark = pytest.mark.timeout(90)

MCP_TIMEOUT_MS = 6000  # a Python peer can take 3 s to start on a loaded 2-core machine
BARRIER = ROOT / "tests" / "mcp" / "servers" / "barrier_proxy.py"


def _peer(name: str, *extra: str) -> dict[str, Any]:
    argv = peer_command(name)
    return {"command": argv[0], "args": [*argv[1:], *extra]}


def _working(fs_root: Path) -> dict[str, Any]:
    fs = peer_command("PEER_FILESYSTEM")
    return {
        "everything": _peer("PEER_EVERYTHING"),
        # our own directory instead of the peer's default root
        "filesystem": {"command": fs[0], "args": [*fs[1:-1], str(fs_root)]},
        "time": _peer("PEER_TIME"),
    }


def _behind_barrier(servers: dict[str, Any], folder: Path) -> dict[str, Any]:
    """Each server behind barrier_proxy.py: none starts (so none answers) until the host has written to all."""
    folder.mkdir()
    return {name: {**entry, "command": sys.executable,
                   "args": [str(BARRIER), str(folder), name, str(len(servers)), "--", entry["command"], *entry["args"]]}
            for name, entry in servers.items()}


def _broken(tmp: Path) -> dict[str, Any]:
    return {
        "hang": probe_entry("--hang", "--pidfile", str(tmp / "hang.pid")),
        "missing": {"command": str(tmp / "no-such-mcp-server-binary"), "args": []},
    }


def test_five_servers_prompt_status_and_parallel_startup(cli: Cli) -> None:
    fs_root = cli.tmp / "fsroot"
    fs_root.mkdir()
    env = {"MCP_TIMEOUT": str(MCP_TIMEOUT_MS)}
    working = _working(fs_root)
    all_servers = {**working, **_broken(cli.tmp)}
    config = cli.config_file(all_servers, "five.json")

    # -- the prompt, through the agent ----------------------------------------------------------------------------
    mock = cli.mock([
        tool_use("mcp__everything__echo", {"message": "hello-from-five"}),
        {**tool_use("mcp__time__get_current_time", {"timezone": "UTC"}),
         "expect_tool_result_contains": "hello-from-five"},
        answer("echo and time said: {{last_tool_result}}"),
    ])
    run = cli.run("-p", "use the tools", "--mcp-config", config, "--yolo", env=env)
    assert run.rc == 0, run.stderr
    results = tool_results(mock)
    assert len(results) == 2
    assert not any(r.get("is_error") for r in results), results
    assert "hello-from-five" in result_text(results[0])
    time_text = result_text(results[1])
    assert "UTC" in time_text or "datetime" in time_text
    assert run.stdout.startswith("echo and time said: ")
    assert time_text.strip()[:20] in run.stdout
    # the failures are reported on stderr, the answer is not blocked by them
    assert "hang" in run.stderr and "missing" in run.stderr
    # the tools offered to the model: the working servers' only
    offered = {t["name"] for t in mock.requests[0]["body"]["tools"]}
    assert "mcp__everything__echo" in offered and "mcp__time__get_current_time" in offered
    assert any(n.startswith("mcp__filesystem__") for n in offered)
    assert not any(n.startswith(("mcp__hang__", "mcp__missing__")) for n in offered)

    # -- `mcp list --json` with all five: failed ones with reasons; wall time ≈ MCP_TIMEOUT, not a sum ---------
    listed = cli.run("mcp", "list", "--json", "--mcp-config", config, env=env)
    assert listed.rc == 0, listed.stderr
    rows = {row["name"]: row for row in listed.json()}
    assert set(rows) == set(all_servers)
    for row in rows.values():
        assert set(row) >= {"name", "status", "tools", "error", "source"}
    for name in working:
        assert rows[name]["status"] == "ready", rows[name]
        assert rows[name]["tools"] > 0 and rows[name]["error"] is None
    assert rows["missing"]["status"] == "failed"
    assert "not found" in rows["missing"]["error"].lower() or "no such file" in rows["missing"]["error"].lower()
    assert "no-such-mcp-server-binary" in rows["missing"]["error"]
    assert rows["hang"]["status"] == "failed"
    assert "MCP_TIMEOUT" in rows["hang"]["error"]
    assert rows["hang"]["tools"] is None and rows["missing"]["tools"] is None
    with_hang_s = listed.seconds

    # -- each working server alone, then the three together -------------------------------------------------------
    alone = {}
    for name, entry in working.items():
        r = cli.run("mcp", "list", "--json", "--mcp-config", json.dumps({"mcpServers": {name: entry}}), env=env)
        assert r.rc == 0 and r.json()[0]["status"] == "ready", r.stdout + r.stderr
        alone[name] = r.seconds
    # Parallel startup, proved by a barrier instead of by comparing wall times taken at different moments (which
    # the other CI worker's load decides): each server sees nothing until the host has written to all three, so a
    # host that waited for one server's answer before starting the next would leave the first silent until
    # MCP_TIMEOUT failed it.
    barrier = cli.tmp / "barrier"
    together = cli.run("mcp", "list", "--json", "--mcp-config",
                       json.dumps({"mcpServers": _behind_barrier(working, barrier)}), env=env)
    assert together.rc == 0, together.stderr
    assert all(row["status"] == "ready" for row in together.json()), together.stdout + together.stderr
    assert sorted(p.name for p in barrier.iterdir()) == sorted(working)
    print(f"\nstartup (wall s): alone={ {k: round(v, 2) for k, v in alone.items()} } "
          f"together={together.seconds:.2f} with-hang={with_hang_s:.2f}")
    # With the hanging server: bounded by MCP_TIMEOUT, plus a little.
    assert MCP_TIMEOUT_MS / 1000 - 0.2 <= with_hang_s < MCP_TIMEOUT_MS / 1000 + max(alone.values()) + 2.0


def test_missing_command_and_hang_reasons_in_mcp_get(cli: Cli) -> None:
    config = cli.config_file(_broken(cli.tmp))
    got = cli.run("mcp", "get", "missing", "--json", "--mcp-config", config, env={"MCP_TIMEOUT": "1000"})
    assert got.rc == 0
    info = got.json()
    assert info["status"] == "failed"
    assert "no-such-mcp-server-binary" in info["error"]
    called = cli.run("mcp", "call", "hang", "echo", "{}", "--mcp-config", config, env={"MCP_TIMEOUT": "1000"})
    assert called.rc == 2
    assert "MCP_TIMEOUT" in called.stderr


@pytest.mark.parametrize("value", ["0", "junk"])
def test_bad_mcp_timeout_falls_back_to_default(cli: Cli, value: str) -> None:
    config = cli.config_file({"p": probe_entry()})
    r = cli.run("mcp", "list", "--json", "--mcp-config", config, env={"MCP_TIMEOUT": value})
    assert r.rc == 0 and r.json()[0]["status"] == "ready"
