"""End to end through the real CLI: the `anthropic` SDK against the mock model over loopback, real MCP servers.

Each test runs `python -m mini_claude` as a subprocess with its own HOME, state dir and working directory.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from mini_claude.models.mock_server import MockModelServer
from mini_claude.models.scenario import parse_scenario

ROOT = Path(__file__).resolve().parents[2]


def _env(tmp_path: Path, url: str | None = None, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ANTHROPIC_", "OPENAI_", "MINI_CLAUDE_", "MCP_"))}
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env.update(HOME=str(home), MINI_CLAUDE_STATE_DIR=str(tmp_path / "state"), PYTHONPATH=str(ROOT))
    if url:
        env.update(ANTHROPIC_BASE_URL=url, ANTHROPIC_API_KEY="test-key-not-secret")
    env.update(extra)
    return env


def _cli(args: list[str], *, cwd: Path, env: dict[str, str], timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mini_claude", *args], cwd=cwd, env=env, text=True,
                          capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL)


def _mock(turns: list[dict[str, Any]]) -> MockModelServer:
    return MockModelServer(parse_scenario({"turns": turns}))


def _last_tool_results(request: dict[str, Any]) -> list[dict[str, Any]]:
    last = request["body"]["messages"][-1]
    assert last["role"] == "user"
    return [b for b in last["content"] if b.get("type") == "tool_result"]


def _tool(name: str, **args: Any) -> dict[str, Any]:
    return {"content": [{"type": "tool_use", "name": name, "input": args}]}


def _say(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}]}


def test_read_edit_read_chain_leaves_expected_bytes(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "a.txt").write_bytes(b"alpha\r\nbeta\n")
    turns = [_tool("read_file", path="a.txt"),
             _tool("edit_file", path="a.txt", old_string="beta", new_string="gamma"),
             _tool("read_file", path="a.txt"),
             _say("done: {{last_tool_result}}")]
    with _mock(turns) as mock:
        url = mock.start()
        proc = _cli(["-p", "--allowedTools", "Edit", "edit a.txt"], cwd=work, env=_env(tmp_path, url))
        requests = mock.requests
    assert proc.returncode == 0, proc.stderr
    assert (work / "a.txt").read_bytes() == b"alpha\r\ngamma\n"
    assert proc.stdout.startswith("done:") and "gamma" in proc.stdout
    assert "→ read_file(" not in proc.stdout and "→ edit_file(" in proc.stderr
    assert len(requests) == 4
    assert not any(r.get("is_error") for req in requests[1:] for r in _last_tool_results(req))


def test_failing_and_denied_tools_yield_is_error_results(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    turns = [{"content": [{"type": "tool_use", "name": "read_file", "input": {"path": "missing.txt"}},
                          {"type": "tool_use", "name": "bash", "input": {"command": "touch pwned"}},
                          {"type": "tool_use", "name": "no_such_tool", "input": {}}]},
             _say("ok")]
    with _mock(turns) as mock:
        url = mock.start()
        proc = _cli(["-p", "go"], cwd=work, env=_env(tmp_path, url))
        requests = mock.requests
    assert proc.returncode == 0, proc.stderr
    assert not (work / "pwned").exists()
    results = _last_tool_results(requests[1])
    assert [r.get("is_error") for r in results] == [True, True, True]
    ids = [b["id"] for b in requests[1]["body"]["messages"][-2]["content"] if b["type"] == "tool_use"]
    assert [r["tool_use_id"] for r in results] == ids
    denial = json.dumps(results[1]["content"])
    assert "--yolo" in denial and "permissions.allow" in denial


def test_no_key_is_one_clear_line(tmp_path: Path) -> None:
    proc = _cli(["-p", "hi"], cwd=tmp_path, env=_env(tmp_path))
    assert proc.returncode != 0
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "ANTHROPIC_API_KEY" in lines[0] and "OPENAI_API_KEY" in lines[0]


def test_version_is_fast_and_light(tmp_path: Path) -> None:
    times = []
    for _ in range(3):
        began = time.perf_counter()
        proc = _cli(["--version"], cwd=tmp_path, env=_env(tmp_path))
        times.append(time.perf_counter() - began)
        assert proc.returncode == 0 and "mini-claude" in proc.stdout
    assert sorted(times)[1] < 1.0, times
    probe = ("import sys, mini_claude.cli.main; heavy = {'anthropic', 'openai', 'httpx', 'rich', 'prompt_toolkit'};"
             "print(sorted(heavy & set(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=30)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_demo_shows_the_mcp_add_transcript(tmp_path: Path) -> None:
    proc = _cli(["demo"], cwd=tmp_path, env=_env(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert '→ mcp__demo__add({"a":17,"b":25})' in proc.stdout
    assert "17 + 25 = 42" in proc.stdout
    assert "→ read_file(" in proc.stdout


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
    env = _env(tmp_path)
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
        env = _env(tmp_path, url, OPENAI_API_KEY="sk-test-not-secret")
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
    proc = _cli(["mcp", *args, "--mcp-config", config], cwd=tmp_path, env=_env(tmp_path))
    assert proc.returncode == code, proc.stdout + proc.stderr
    if code == 0:
        assert proc.stdout.strip() == "42"


def test_unreachable_server_exits_2(tmp_path: Path) -> None:
    config = json.dumps({"mcpServers": {"gone": {"command": "/nonexistent/mcp-server"}}})
    proc = _cli(["mcp", "tools", "gone", "--mcp-config", config], cwd=tmp_path, env=_env(tmp_path))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "not found" in proc.stderr.lower() or "no such file" in proc.stderr.lower()
