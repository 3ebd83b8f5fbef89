"""`type: http` and `type: sse` servers through the config → manager → agent-facing tools path, over loopback.

The real peers (server-everything in `streamableHttp` and `sse` modes, the demo_server.py peer on FastMCP v1 and
MCPServer v2 over Streamable HTTP) do over HTTP what they do over stdio: tools, progress, a sampling and an
elicitation round trip (handlers registered through `McpManager(client_setup=...)`), and server-initiated
notifications (`tools/list_changed`, `notifications/message`). Helpers here are shared with test_remote_recovery.py.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from mini_claude.mcp.client import McpClient
from mini_claude.mcp.config import ServerConfig, load_mcp_config
from mini_claude.mcp.manager import McpManager, ServerStatus
from mini_claude.tools.base import ToolContext
from mini_claude.tools.mcp_tool import McpToolAdapter, McpToolAdapters
from tests.mcp.test_http_transport import running_peer

pytestmark = pytest.mark.timeout(30)

STARTUP_S = 15.0
WAIT_S = 8.0  # any "eventually" below (tools appearing after list_changed, a notification arriving)

# variable, config type, path, flavour ("everything" or "demo"), pinned protocolVersion (None: automatic)
PEERS = [
    ("PEER_EVERYTHING_HTTP", "http", "/mcp", "everything", None),
    ("PEER_EVERYTHING_SSE", "sse", "/sse", "everything", None),
    ("PEER_FASTMCP_V1_HTTP", "http", "/mcp", "demo", None),
    ("PEER_MCPSERVER_V2_HTTP", "http", "/mcp", "demo", None),  # mcp 2.x speaks 2026-07-28: the modern era
    ("PEER_MCPSERVER_V2_HTTP", "http", "/mcp", "demo", "2025-11-25"),
]
PEER_IDS = ["everything-http", "everything-sse", "fastmcp-v1-http", "mcpserver-v2-http", "mcpserver-v2-http-legacy"]


@dataclass
class Seen:
    """What the server sent us: server → client requests and notifications, in order."""

    requests: list[tuple[str, Any]] = field(default_factory=list)
    notifications: list[tuple[str, Any]] = field(default_factory=list)

    def setup(self, _cfg: ServerConfig, client: McpClient) -> None:
        async def sample(params: Any) -> dict[str, Any]:
            self.requests.append(("sampling/createMessage", params))
            return {"role": "assistant", "content": {"type": "text", "text": "sampled-by-test"},
                    "model": "test-model", "stopReason": "endTurn"}

        async def elicit(params: Any) -> dict[str, Any]:
            self.requests.append(("elicitation/create", params))
            schema = params.get("requestedSchema", {}) if isinstance(params, dict) else {}
            content = {key: prop["default"] for key, prop in schema.get("properties", {}).items()
                       if isinstance(prop, dict) and "default" in prop}
            content.update({"name": "Ada", "ok": True, "note": "from-test"})
            content = {k: v for k, v in content.items() if k in schema.get("properties", {})}
            return {"action": "accept", "content": content}

        client.set_request_handler("sampling/createMessage", sample)
        client.set_request_handler("elicitation/create", elicit)
        for method in ("notifications/message", "notifications/tools/list_changed"):
            client.on_notification(method, lambda m, p: self.notifications.append((m, p)))


def server_config(tmp_path: Path, kind: str, url: str, name: str = "remote", *,
                  protocol_version: str | None = None) -> list[ServerConfig]:
    entry: dict[str, Any] = {"type": kind, "url": url}
    if protocol_version is not None:
        entry["protocolVersion"] = protocol_version
    config = load_mcp_config(cwd=tmp_path, home=tmp_path, env={}, strict=True,
                             extra=[json.dumps({"mcpServers": {name: entry}})])
    assert not config.errors
    return list(config.servers.values())


@asynccontextmanager
async def started_manager(servers: list[ServerConfig], *, setup: Callable[[ServerConfig, McpClient], None] | None
                          = None, startup_timeout: float = STARTUP_S, **options: Any) -> AsyncIterator[McpManager]:
    manager = McpManager(servers, env={"PATH": "/usr/bin:/bin"}, startup_timeout=startup_timeout,
                         client_setup=setup, **options)
    manager.start()
    try:
        await manager.wait_started()
        yield manager
    finally:
        began = time.monotonic()
        await manager.aclose()
        assert time.monotonic() - began < 10


async def eventually(predicate: Callable[[], bool], what: str, timeout_s: float = WAIT_S) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


def adapters(manager: McpManager) -> dict[str, McpToolAdapter]:
    return {t.name: t for t in McpToolAdapters(manager)()}


def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path, spill_dir=tmp_path / "spill")


@pytest.mark.parametrize("variable,kind,path,flavour,pin", PEERS, ids=PEER_IDS)
async def test_features_work_over_http_as_over_stdio(tmp_path: Path, variable: str, kind: str, path: str,
                                                     flavour: str, pin: str | None) -> None:
    seen = Seen()
    with running_peer(variable) as (port, _proc):
        servers = server_config(tmp_path, kind, f"http://127.0.0.1:{port}{path}", protocol_version=pin)
        async with started_manager(servers, setup=seen.setup) as manager:
            state = manager.states["remote"]
            assert state.status is ServerStatus.READY, state.error
            assert state.client is not None
            if pin is not None:
                assert state.client.protocol_version == pin
            if flavour == "everything":
                await _everything_features(manager, seen, tmp_path)
            else:
                await _demo_features(manager, seen, tmp_path)


async def _everything_features(manager: McpManager, seen: Seen, tmp_path: Path) -> None:
    # declaring sampling + elicitation makes server-everything register their tools after `initialized`, each
    # announced by a server-initiated tools/list_changed, which the manager follows by re-listing
    wanted = {"mcp__remote__trigger-sampling-request", "mcp__remote__trigger-elicitation-request"}
    await eventually(lambda: wanted <= set(adapters(manager)), "the capability tools after list_changed")
    assert any(m == "notifications/tools/list_changed" for m, _ in seen.notifications)

    progress: list[tuple[float, float | None]] = []
    result = await manager.call_tool("remote", "trigger-long-running-operation", {"duration": 0.3, "steps": 3},
                                     on_progress=lambda p, t, _m: progress.append((p, t)))
    assert not result.is_error
    assert progress == [(1.0, 3.0), (2.0, 3.0), (3.0, 3.0)]

    tools = adapters(manager)
    sampled = await tools["mcp__remote__trigger-sampling-request"].run({"prompt": "hi there"}, ctx(tmp_path))
    assert not sampled.is_error, sampled.as_text()
    assert "sampled-by-test" in sampled.as_text()
    (_method, params), = [r for r in seen.requests if r[0] == "sampling/createMessage"]
    assert "hi there" in json.dumps(params)

    elicited = await tools["mcp__remote__trigger-elicitation-request"].run({}, ctx(tmp_path))
    assert not elicited.is_error, elicited.as_text()
    assert "Name: Ada" in elicited.as_text() and "Favorite Integer: 42" in elicited.as_text()

    # a notification the server sends on its own (not tied to a request): simulated logging starts at once
    before = len([n for n in seen.notifications if n[0] == "notifications/message"])
    toggled = await manager.call_tool("remote", "toggle-simulated-logging", {})
    assert not toggled.is_error
    await eventually(lambda: len([n for n in seen.notifications if n[0] == "notifications/message"]) > before,
                     "a notifications/message from the server")
    await manager.call_tool("remote", "toggle-simulated-logging", {})  # stop it


async def _demo_features(manager: McpManager, seen: Seen, tmp_path: Path) -> None:
    tools = adapters(manager)
    assert {"mcp__remote__echo", "mcp__remote__add", "mcp__remote__slow", "mcp__remote__ask_llm",
            "mcp__remote__ask_user"} <= set(tools)
    added = await manager.call_tool("remote", "add", {"a": 40, "b": 2})
    assert added.structured_content == {"result": 42}

    progress: list[tuple[float, float | None, str | None]] = []
    result = await manager.call_tool("remote", "slow", {"steps": 3, "delay": 0.05},
                                     on_progress=lambda p, t, m: progress.append((p, t, m)))
    assert not result.is_error
    assert [p[:2] for p in progress] == [(1.0, 3.0), (2.0, 3.0), (3.0, 3.0)]
    # `slow` also logs each step: notifications/message from the server. In the 2026-07-28 era a server sends
    # log messages only to a request that opted in (`_meta` "io.modelcontextprotocol/logLevel"), and we do not.
    logged = [p.get("data") for m, p in seen.notifications if m == "notifications/message"]
    client = manager.states["remote"].client
    assert client is not None
    if client.protocol_version == "2026-07-28":
        # and the demo peer's sampling / elicitation use the SDK's legacy back-channel API, which mcp 2.x refuses
        # in this era ("no back-channel for server-initiated requests"): the legacy-pinned case covers them
        return
    assert "step 3/3" in json.dumps(logged)

    sampled = await tools["mcp__remote__ask_llm"].run({"prompt": "hi there"}, ctx(tmp_path))
    assert not sampled.is_error, sampled.as_text()
    assert sampled.as_text().strip() == "sampled-by-test"

    elicited = await tools["mcp__remote__ask_user"].run({"question": "go?"}, ctx(tmp_path))
    assert not elicited.is_error, elicited.as_text()
    assert "accepted: ok=True note='from-test'" in elicited.as_text()
    assert [m for m, _ in seen.requests] == ["sampling/createMessage", "elicitation/create"]
