"""Ordering guarantees, not timing windows (issue 19): `tool_search` answers from the index as it is after every
`tools/list_changed` a server sent before (or right after) a call's result, and never from a partial index: it
waits, bounded, for servers still starting, and names those not ready. Real stdio servers; no sleeps."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from mini_claude.mcp.manager import McpManager, ServerStatus
from mini_claude.tools.base import ToolContext
from mini_claude.tools.mcp_tool import McpToolAdapters
from mini_claude.tools.tool_search import DeferredTools, ToolSearchTool
from tests.helpers import server_configs, server_env

pytestmark = pytest.mark.timeout(60)

ROOT = Path(__file__).resolve().parents[2]
CORPUS_SERVER = ROOT / "bench" / "corpus_server.py"
PINNING = ROOT / "tests" / "mcp" / "servers" / "pinning_server.py"
PROBE = ROOT / "tests" / "mcp" / "servers" / "probe_server.py"


def _tool(name: str, description: str) -> dict[str, Any]:
    return {"name": name, "description": description, "inputSchema": {"type": "object", "properties": {
        "where": {"type": "string", "description": "A city"}}}}


def _search(manager: McpManager) -> ToolSearchTool:
    return ToolSearchTool(DeferredTools(McpToolAdapters(manager), setting="true", context_tokens=200_000))


async def _ask(search: ToolSearchTool, query: str, tmp_path: Path) -> str:
    result = await search.run({"query": query}, ToolContext(cwd=tmp_path, spill_dir=tmp_path / "spill"))
    return result.as_text()


async def test_a_search_right_after_a_call_sees_the_list_changed_sent_after_its_result(tmp_path: Path) -> None:
    first, later = tmp_path / "first.json", tmp_path / "later.json"
    first.write_text(json.dumps({"tools": [_tool("lookup_weather", "Current weather for a city")]}))
    later.write_text(json.dumps({"tools": [_tool("book_flight", "Reserve a seat on an airline flight")]}))
    manager = McpManager(server_configs(tmp_path, {"travel": {
        "command": sys.executable, "args": [str(CORPUS_SERVER), str(first), "--later", str(later)]}}),
        env=server_env(tmp_path))
    manager.start()
    try:
        await manager.wait_started()
        search = _search(manager)
        assert "book_flight" not in await _ask(search, "book a flight to Rome", tmp_path)
        # the server answers the call, then sends list_changed: the search that follows at once sees the new tool
        await manager.call_tool("travel", "lookup_weather", {"where": "Oslo"})
        found = await _ask(search, "book a flight to Rome", tmp_path)
        assert found.splitlines()[0].startswith("mcp__travel__book_flight: "), found
    finally:
        await manager.aclose()


async def test_a_list_changed_sent_before_a_result_is_applied_before_the_next_step(tmp_path: Path) -> None:
    defs = tmp_path / "defs.json"
    defs.write_text(json.dumps([_tool("lookup_weather", "Current weather for a city")]))
    manager = McpManager(server_configs(tmp_path, {"p": {"command": sys.executable, "args": [str(PINNING), str(defs)]}}),
                         env=server_env(tmp_path))
    manager.start()
    try:
        await manager.wait_started()
        defs.write_text(json.dumps([_tool("lookup_weather", "Current weather for a city"),
                                    _tool("book_flight", "Reserve a seat on an airline flight")]))
        await manager.call_tool("p", "announce", {})  # list_changed goes out before this result
        await manager.settle_lists()  # what the agent awaits before each model request
        assert "mcp__p__book_flight" in {entry.name for entry in manager.tools()}
    finally:
        await manager.aclose()


async def test_a_search_waits_for_servers_still_starting(tmp_path: Path) -> None:
    tools = tmp_path / "late.json"
    tools.write_text(json.dumps({"tools": [_tool("book_flight", "Reserve a seat on an airline flight")]}))
    slow = f'sleep 1; exec "{sys.executable}" "{CORPUS_SERVER}" "{tools}"'
    manager = McpManager(server_configs(tmp_path, {"late": {"command": "sh", "args": ["-c", slow]}}),
                         env=server_env(tmp_path))
    manager.start()  # no wait_started(): the search comes while the server is still starting
    try:
        assert manager.states["late"].status is ServerStatus.STARTING
        found = await _ask(_search(manager), "book a flight", tmp_path)
        assert found.splitlines()[0].startswith("mcp__late__book_flight: "), found
        assert "not ready" not in found
    finally:
        await manager.aclose()


async def test_a_search_names_the_servers_not_ready_when_its_wait_ends(tmp_path: Path) -> None:
    manager = McpManager(server_configs(tmp_path, {"hung": {"command": sys.executable,
                                                           "args": [str(PROBE), "--hang"]}}),
                         env={**server_env(tmp_path), "MCP_TIMEOUT": "30000"})
    manager.start()
    try:
        assert await manager.settle_for_search(timeout_s=0.3) == ["hung (starting)"]
    finally:
        await manager.aclose()


async def test_a_search_waits_for_a_restart_due_soon_and_names_one_backing_off(tmp_path: Path,
                                                                               monkeypatch: pytest.MonkeyPatch
                                                                               ) -> None:
    import time

    import mini_claude.mcp.healing as healing_module
    from mini_claude.errors import TransportError

    manager = McpManager(server_configs(tmp_path, {"probe": {"command": sys.executable, "args": [str(PROBE)]}}),
                         env=server_env(tmp_path))
    manager.start()
    try:
        await manager.wait_started()
        state = manager.states["probe"]
        with pytest.raises(TransportError):
            await manager.call_tool("probe", "crash", {})
        assert await manager.settle_for_search() == []  # its 1 s backoff ends soon: waited for, it is back
        assert state.lost is None and state.client is not None
        monkeypatch.setattr(healing_module, "restart_backoff_s", lambda _n: 60.0)
        with pytest.raises(TransportError):
            await manager.call_tool("probe", "crash", {})
        began = time.monotonic()
        assert await manager.settle_for_search() == ["probe (restarting)"]  # a minute away: not waited for
        assert time.monotonic() - began < 5
    finally:
        await manager.aclose()
