"""End to end through the real CLI: project-server approval, the environment a stdio server sees, and the
`mcp call` / `mcp tools` exit codes — `python -m mini_claude` subprocesses, the `anthropic` SDK against the mock
model over loopback, real MCP servers.

The print-mode basics (edit chain, failing and denied tools, missing key, --version, demo) live in
tests/cli/test_cli_integration.py.
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from mini_claude.models.mock_server import MockModelServer
from mini_claude.models.scenario import parse_scenario
from tests.helpers import anthropic_env, clean_env
from tests.helpers import run_cli as _cli


def _mock(turns: list[dict[str, Any]]) -> MockModelServer:
    return MockModelServer(parse_scenario({"turns": turns}))


def _tool(name: str, **args: Any) -> dict[str, Any]:
    return {"content": [{"type": "tool_use", "name": name, "input": args}]}


def _say(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}]}


MARKER_SERVER = textwrap.dedent("""
    import json, os, sys
    from pathlib import Path
    Path(os.environ["MARKER"]).write_text(str(os.getpid()))
    for line in sys.stdin:
        msg = json.loads(line)
        if "id" not in msg:
            continue
        m = msg.get("method")
        if m == "initialize":
            result = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                      "serverInfo": {"name": "marker", "version": "1"}}
        elif m == "tools/list":
            result = {"tools": [{"name": "env_keys", "inputSchema": {"type": "object"},
                                 "annotations": {"readOnlyHint": True}}]}
        elif m == "tools/call":
            result = {"content": [{"type": "text", "text": " ".join(sorted(os.environ))}]}
        else:
            result = {}
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
""")


def _project_with_marker_server(tmp_path: Path, arg: str = "v1") -> tuple[Path, Path]:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    server = tmp_path / "marker_server.py"
    server.write_text(MARKER_SERVER)
    marker = tmp_path / "marker"
    config = {"mcpServers": {"marker": {"command": sys.executable, "args": [str(server), arg],
                                        "env": {"MARKER": str(marker), "OWN_VAR": "own"}}}}
    (work / ".mcp.json").write_text(json.dumps(config))
    return work, marker


def test_project_server_needs_approval_and_reasks_after_edit(tmp_path: Path) -> None:
    work, marker = _project_with_marker_server(tmp_path)
    env = clean_env(tmp_path)
    proc = _cli(["mcp", "list", "--json"], cwd=work, env=env)
    assert proc.returncode == 0, proc.stderr
    [entry] = json.loads(proc.stdout)
    assert entry["status"] == "needs-approval"
    assert "enabledMcpjsonServers" in entry["error"] and "--trust-project-mcp" in entry["error"]
    assert not marker.exists()

    from mini_claude.mcp.approval import ApprovalStore
    from mini_claude.mcp.config import load_mcp_config

    def approve() -> None:
        loaded = load_mcp_config(cwd=work, home=Path(env["HOME"]), env=env)
        ApprovalStore.default(env).record(work, loaded.servers["marker"], "approved")

    approve()
    proc = _cli(["mcp", "list", "--json"], cwd=work, env=env)
    assert json.loads(proc.stdout)[0]["status"] == "ready", proc.stdout + proc.stderr
    assert marker.exists()
    marker.unlink()

    _project_with_marker_server(tmp_path, arg="v2")  # the command line changed: ask again
    proc = _cli(["mcp", "list", "--json"], cwd=work, env=env)
    assert json.loads(proc.stdout)[0]["status"] == "needs-approval"
    assert not marker.exists()


def test_stdio_server_does_not_see_agent_credentials(tmp_path: Path) -> None:
    work, _marker = _project_with_marker_server(tmp_path)
    turns = [_tool("mcp__marker__env_keys"), _say("keys: {{last_tool_result}}")]
    with _mock(turns) as mock:
        url = mock.start()
        env = anthropic_env(tmp_path, url, OPENAI_API_KEY="sk-test-not-secret")
        proc = _cli(["-p", "--trust-project-mcp", "--yolo", "show env"], cwd=work, env=env)
    assert proc.returncode == 0, proc.stderr
    keys = proc.stdout.split()
    assert "OWN_VAR" in keys and "PATH" in keys
    assert "ANTHROPIC_API_KEY" not in keys and "OPENAI_API_KEY" not in keys


@pytest.mark.parametrize("args,code", [
    (["call", "demo", "add", '{"a": 17, "b": 25}'], 0),
    (["call", "demo", "add", '{"a": "x"}'], 1),
    (["call", "demo", "add", "not json"], 3),
    (["call", "nope", "add", "{}"], 3),
])
def test_mcp_call_exit_codes(tmp_path: Path, args: list[str], code: int) -> None:
    config = json.dumps({"mcpServers": {"demo": {"command": sys.executable,
                                                 "args": ["-m", "mini_claude.mcp.demo_server"]}}})
    proc = _cli(["mcp", *args, "--mcp-config", config], cwd=tmp_path, env=clean_env(tmp_path))
    assert proc.returncode == code, proc.stdout + proc.stderr
    if code == 0:
        assert proc.stdout.strip() == "42"


def test_unreachable_server_exits_2(tmp_path: Path) -> None:
    config = json.dumps({"mcpServers": {"gone": {"command": "/nonexistent/mcp-server"}}})
    proc = _cli(["mcp", "tools", "gone", "--mcp-config", config], cwd=tmp_path, env=clean_env(tmp_path))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "not found" in proc.stderr.lower() or "no such file" in proc.stderr.lower()
