"""`type: http` and `type: sse` servers through the config → manager → agent-facing tools path, over loopback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mini_claude.mcp.config import load_mcp_config
from mini_claude.mcp.manager import McpManager, ServerStatus
from mini_claude.tools.base import ToolContext
from tests.mcp.test_http_transport import running_peer

pytestmark = pytest.mark.timeout(60)


@pytest.mark.parametrize("variable,kind,path", [
    ("PEER_EVERYTHING_HTTP", "http", "/mcp"),
    ("PEER_EVERYTHING_SSE", "sse", "/sse"),
    ("PEER_MCPSERVER_V2_HTTP", "http", "/mcp"),
])
async def test_remote_server_tools_reach_the_agent(tmp_path: Path, variable: str, kind: str, path: str) -> None:
    with running_peer(variable) as (port, _proc):
        entry = {"type": kind, "url": f"http://127.0.0.1:{port}{path}"}
        config = load_mcp_config(cwd=tmp_path, home=tmp_path, env={}, strict=True,
                                 extra=[json.dumps({"mcpServers": {"remote": entry}})])
        assert not config.errors
        manager = McpManager(config.servers.values(), env={"PATH": "/usr/bin:/bin"}, startup_timeout=20)
        manager.start()
        try:
            await manager.wait_started()
            state = manager.states["remote"]
            assert state.status is ServerStatus.READY, state.error
            tools = {t.name: t for t in manager.tools()}
            name = "mcp__remote__echo" if "mcp__remote__echo" in tools else "mcp__remote__add"
            args = {"message": "over the wire"} if name.endswith("echo") else {"a": 17, "b": 25}
            result = await tools[name].run(args, ToolContext(cwd=tmp_path, spill_dir=tmp_path / "spill"))
            assert not result.is_error, result.as_text()
            assert ("over the wire" if name.endswith("echo") else "42") in result.as_text()
        finally:
            await manager.aclose()
