"""McpManager states beyond ready/failed: `needs-auth` when a login is needed (others unaffected), AuthError →
`failed` with its message, and what the model is told when it calls a tool whose server went down mid-session
(`explain_unavailable`, through the real agent loop and the mock model server)."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

import mini_claude.mcp.healing as healing_module
from mini_claude.agent.loop import Agent
from mini_claude.cli.terminal.status import server_line
from mini_claude.errors import AuthError, AuthRequiredError
from mini_claude.mcp.config import ServerConfig, load_mcp_config
from mini_claude.mcp.connect import build_transport
from mini_claude.mcp.manager import McpManager, ServerStatus
from mini_claude.mcp.server_state import NEEDS_LOGIN_TEXT
from mini_claude.mcp.transports.base import Transport
from mini_claude.models.mock_server import MockModelServer
from mini_claude.models.scenario import parse_scenario
from mini_claude.permissions import PermissionGate, PermissionMode, RuleSet
from mini_claude.tools.base import ToolContext
from mini_claude.tools.mcp_tool import McpToolAdapters
from tests.agent.agent_helpers import make_model, say, tool

pytestmark = pytest.mark.timeout(30)

ROOT = Path(__file__).resolve().parents[2]
PROBE = ROOT / "tests" / "mcp" / "servers" / "probe_server.py"
ENV = {"PATH": "/usr/bin:/bin"}


class _AuthLayerSays:
    """Stands in for the OAuth layer of an HTTP transport: connecting raises what the provider would raise
    (no stored token and no interactive login → AuthRequiredError; a refused grant → AuthError)."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    async def start(self) -> None:
        raise self.error

    async def send(self, message: dict[str, Any]) -> None:
        raise self.error

    async def receive(self) -> Any:
        raise self.error

    async def close(self) -> None:
        pass

    def diagnostics(self) -> str:
        return ""


AUTH_ERRORS: dict[str, Exception] = {
    "locked": AuthRequiredError("", server="locked"),
    "locked-msg": AuthRequiredError("no token for https://auth.example; run `mini-claude mcp login locked-msg`",
                                    server="locked-msg"),
    "denied": AuthError("the token endpoint refused the grant (invalid_client): check oauth.clientId",
                        server="denied"),
}


def factory(cfg: ServerConfig, env: Mapping[str, str]) -> Transport:
    if cfg.name in AUTH_ERRORS:
        return _AuthLayerSays(AUTH_ERRORS[cfg.name])
    return build_transport(cfg, env)


def configs(tmp_path: Path) -> list[ServerConfig]:
    servers: dict[str, Any] = {name: {"type": "http", "url": f"https://{name}.example/mcp"} for name in AUTH_ERRORS}
    servers["probe"] = {"command": sys.executable, "args": [str(PROBE)]}
    loaded = load_mcp_config(cwd=tmp_path, home=tmp_path, env=ENV, strict=True,
                             extra=[json.dumps({"mcpServers": servers})])
    assert not loaded.errors
    return list(loaded.servers.values())


async def test_needs_auth_and_auth_errors_leave_the_others_working(tmp_path: Path) -> None:
    manager = McpManager(configs(tmp_path), env=ENV, transport_factory=factory, startup_timeout=10)
    manager.start()
    try:
        await manager.wait_started()
        states = manager.states
        assert states["locked"].status is ServerStatus.NEEDS_AUTH
        assert states["locked"].error == NEEDS_LOGIN_TEXT.format(name="locked")
        assert states["locked"].error == "needs a login: run `mini-claude mcp login locked` (or `/mcp login locked` in the REPL)"
        assert states["locked-msg"].status is ServerStatus.NEEDS_AUTH
        assert states["locked-msg"].error == AUTH_ERRORS["locked-msg"].message
        assert states["denied"].status is ServerStatus.FAILED
        assert states["denied"].error == AUTH_ERRORS["denied"].message
        # /mcp and the startup lines show it (cli.terminal.status.server_line)
        assert server_line(states["locked"]) == ("locked: needs auth (needs a login: run `mini-claude mcp login "
                                                 "locked` (or `/mcp login locked` in the REPL))")
        # their tools are absent; the other server is unaffected
        assert states["probe"].status is ServerStatus.READY, states["probe"].error
        names = {t.name for t in manager.tools()}
        assert names and all(n.startswith("mcp__probe__") for n in names)
        result = await manager.call_tool("probe", "echo", {"text": "fine"})
        assert not result.is_error
    finally:
        await manager.aclose()


async def test_model_calling_a_tool_of_a_failed_server_is_told_why(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # a probe server that cannot come back once `gone` exists: its restarts fail until self-healing gives up
    monkeypatch.setattr(healing_module, "restart_backoff_s", lambda _n: 0.0)
    gone = tmp_path / "gone"
    script = f'if [ -e "{gone}" ]; then echo "fatal: gone" >&2; exit 3; fi; exec "{sys.executable}" "{PROBE}"'
    loaded = load_mcp_config(cwd=tmp_path, home=tmp_path, env=ENV, strict=True, extra=[json.dumps(
        {"mcpServers": {"probe": {"command": "sh", "args": ["-c", script]}}})])
    manager = McpManager(loaded.servers.values(), env=ENV, startup_timeout=10)
    manager.start()
    server = MockModelServer(parse_scenario({"turns": [
        tool("mcp__probe__crash"),
        tool("mcp__probe__echo", text="again"),
        tool("mcp__nobody__echo", text="x"),
        say("done"),
    ]}, source="test"))
    url = server.start()
    try:
        await manager.wait_started()
        gone.touch()
        assert manager.explain_unavailable("mcp__probe__echo") is None  # callable: not for us to explain
        gate = PermissionGate(PermissionMode.parse("bypassPermissions"), RuleSet.from_strings(), ask=None,
                              cwd=tmp_path, server_of=manager.server_of)
        agent = Agent(model=make_model(url), tools=McpToolAdapters(manager), gate=gate,
                      ctx=ToolContext(cwd=tmp_path, spill_dir=tmp_path / "spill"), system="test",
                      explain_unknown=manager.explain_unavailable)
        outcome = await agent.run("go")
        assert outcome.text == "done"
        results = [b for m in agent.history if m["role"] == "user" and isinstance(m["content"], list)
                   for b in m["content"] if b.get("type") == "tool_result"]
        crashed, after, unknown = (json.dumps(r["content"]) for r in results)
        assert "exit" in crashed.lower()
        assert manager.states["probe"].status is ServerStatus.FAILED
        # the call waited for the restarts, which failed until it gave up: told why
        assert "not available" in after and "fatal: gone" in after and "gave up after 5 restarts" in after
        assert (manager.explain_unavailable("mcp__probe__echo") or "").startswith(
            "MCP server 'probe' is not available: server exited")
        assert "unknown tool 'mcp__nobody__echo'" in unknown
        assert manager.explain_unavailable("mcp__nobody__echo") is None
    finally:
        server.stop()
        await manager.aclose()
