"""Messages nested too deep (issue 10, hole 7): the readers refuse them, the request they answer fails with a clear
error, and the session, the server's other tools and the process live on.

Unit tests of json_depth, then real servers: tests/mcp/servers/hostile_server.py over stdio (a 10,000-deep
notification and reply, a 300-deep tool schema) and tests/mcp/servers/tiny_http_server.py over loopback HTTP.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from mini_claude.errors import ProtocolError
from mini_claude.mcp.config import load_mcp_config
from mini_claude.mcp.jsonrpc import JsonRpcSession
from mini_claude.mcp.manager import McpManager, ServerStatus
from mini_claude.mcp.transports.http_errors import decode_json
from mini_claude.mcp.transports.json_depth import (
    MAX_MESSAGE_DEPTH,
    RefusedMessage,
    bound_message,
    nested_deeper_than,
    refuse_undecodable,
)
from mini_claude.mcp.transports.stdio import StdioParams, StdioTransport
from tests.helpers import start_tiny_http

pytestmark = pytest.mark.timeout(60)

SERVERS = Path(__file__).resolve().parent / "servers"
HOSTILE = SERVERS / "hostile_server.py"
CALL_TIMEOUT_S = 20.0


def deep(depth: int) -> str:
    return "[" * depth + "]" * depth


# ---- units ----------------------------------------------------------------------------------------------------

def test_nested_deeper_than_counts_container_levels_iteratively() -> None:
    assert not nested_deeper_than(3, 0)
    assert nested_deeper_than([], 0) and not nested_deeper_than([], 1)
    assert not nested_deeper_than({"a": [1, {"b": "x"}]}, 3) and nested_deeper_than({"a": [1, {"b": "x"}]}, 2)
    value: list[object] = []
    for _ in range(200_000):  # far past any recursion limit
        value = [value]
    assert nested_deeper_than(value, MAX_MESSAGE_DEPTH)


def test_bound_message_passes_the_limit_and_refuses_one_more_level() -> None:
    at_limit = '{"jsonrpc":"2.0","id":4,"result":' + deep(MAX_MESSAGE_DEPTH - 1) + "}"
    assert bound_message(json.loads(at_limit), at_limit) == json.loads(at_limit)
    over = '{"jsonrpc":"2.0","id":4,"result":' + deep(MAX_MESSAGE_DEPTH) + "}"
    assert bound_message(json.loads(over), over) == RefusedMessage(4, None)
    over_bytes = over.encode()
    assert bound_message(json.loads(over), over_bytes) == RefusedMessage(4, None)
    # a long text with few containers: returned as is (the walk is short)
    big = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"text": "[{" * 100_000}})
    assert bound_message(json.loads(big), big) == json.loads(big)


def test_refuse_undecodable_reads_the_envelope_of_a_message_too_deep_to_decode() -> None:
    reply = '{"jsonrpc":"2.0","id":7,"result":{"note":"]}\\"[{","content":' + deep(10_000) + "}}"
    with pytest.raises(RecursionError):
        json.loads(reply)
    assert refuse_undecodable(reply) == RefusedMessage(7, None)
    note = '{"jsonrpc":"2.0","method":"notifications/message","params":' + deep(10_000) + "}"
    assert refuse_undecodable(note) == RefusedMessage(None, "notifications/message")
    assert refuse_undecodable("[" * 10_000) is None  # not JSON at all: noise
    assert refuse_undecodable(deep(10_000)) == RefusedMessage(None, None)


def test_http_decode_json_refuses_instead_of_raising() -> None:
    assert decode_json('{"id":1,"result":' + deep(10_000) + "}") == RefusedMessage(1, None)
    assert decode_json('{"id":2,"result":' + deep(600) + "}") == RefusedMessage(2, None)
    assert decode_json('{"id":3,"result":[]}') == {"id": 3, "result": []}
    with pytest.raises(ValueError):
        decode_json("[" * 10_000)


# ---- a real stdio server ----------------------------------------------------------------------------------------

@pytest.fixture
async def hostile_session() -> AsyncIterator[JsonRpcSession]:
    transport = StdioTransport(StdioParams(command=sys.executable, args=[str(HOSTILE)]), server="hostile")
    await transport.start()
    session = JsonRpcSession(transport, name="hostile")
    session.start()
    await session.request("initialize", {"protocolVersion": "2025-06-18"}, timeout=CALL_TIMEOUT_S)
    try:
        yield session
    finally:
        async with asyncio.timeout(10):
            await session.close()


async def call(session: JsonRpcSession, name: str, **arguments: object) -> object:
    return await session.request("tools/call", {"name": name, "arguments": arguments}, timeout=CALL_TIMEOUT_S)


async def test_a_deep_reply_fails_its_request_at_once_and_the_session_goes_on(
        hostile_session: JsonRpcSession) -> None:
    began = time.monotonic()
    with pytest.raises(ProtocolError) as info:
        await call(hostile_session, "deep_reply")
    assert time.monotonic() - began < CALL_TIMEOUT_S / 2  # failed by the refusal, not by the timeout
    assert str(info.value) == ("MCP server 'hostile': tools/call: the reply was refused: message nested deeper "
                               "than 512 levels")
    assert await call(hostile_session, "echo", text="still here") == {
        "content": [{"type": "text", "text": "still here"}]}


async def test_a_deep_notification_is_dropped_with_a_warning(hostile_session: JsonRpcSession,
                                                             caplog: pytest.LogCaptureFixture) -> None:
    seen: list[str] = []
    hostile_session.set_fallback_notification_handler(lambda method, _params: seen.append(method))
    with caplog.at_level(logging.WARNING, logger="mini_claude.mcp.jsonrpc"):
        listed = await hostile_session.request("tools/list", {}, timeout=CALL_TIMEOUT_S)
    assert [t["name"] for t in listed["tools"]] == ["echo", "shout", "fail", "deep_reply", "deep_tool"]
    assert seen == []
    assert ("hostile: dropped a notifications/message notification: message nested deeper than 512 levels"
            in caplog.messages)


async def test_manager_withholds_the_deep_tool_and_serves_the_others(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    servers = {"hostile": {"command": sys.executable, "args": [str(HOSTILE)]}}
    loaded = load_mcp_config(cwd=tmp_path, home=tmp_path, env=env, strict=True,
                             extra=[json.dumps({"mcpServers": servers})])
    manager = McpManager(loaded.servers.values(), env=env, startup_timeout=20)
    manager.start()
    try:
        await manager.wait_started()
        state = manager.states["hostile"]
        assert state.status is ServerStatus.READY, state.error
        assert [t.name for t in state.tools] == ["echo", "shout", "fail", "deep_reply"]
        assert [e.name for e in manager.tools()] == ["mcp__hostile__echo", "mcp__hostile__shout",
                                                     "mcp__hostile__fail", "mcp__hostile__deep_reply"]
        with pytest.raises(ProtocolError, match="nested deeper than 512 levels"):
            await manager.call_tool("hostile", "deep_reply", {})
        result = await manager.call_tool("hostile", "echo", {"text": "ok"})
        assert result.content == [{"type": "text", "text": "ok"}]
    finally:
        await manager.aclose()


async def test_a_listing_deeper_than_a_message_may_be_fails_that_server_only(tmp_path: Path) -> None:
    """Issue 10's own schema (300 nested `properties`: 600 JSON levels) is deeper than any message may be: that
    server's listing is refused with a clear reason; the other server is ready and the process lives on."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    servers = {"deeper": {"command": sys.executable, "args": [str(HOSTILE), "--property-levels"]},
               "fine": {"command": sys.executable, "args": [str(HOSTILE)]}}
    loaded = load_mcp_config(cwd=tmp_path, home=tmp_path, env=env, strict=True,
                             extra=[json.dumps({"mcpServers": servers})])
    manager = McpManager(loaded.servers.values(), env=env, startup_timeout=20)
    manager.start()
    try:
        await manager.wait_started()
        deeper, fine = manager.states["deeper"], manager.states["fine"]
        assert deeper.status is ServerStatus.FAILED
        assert deeper.error == "tools/list: the reply was refused: message nested deeper than 512 levels"
        assert fine.status is ServerStatus.READY and len(fine.tools) == 4
    finally:
        await manager.aclose()


# ---- a real HTTP server -----------------------------------------------------------------------------------------

@pytest.fixture
def tiny_http() -> Iterator[str]:
    port, proc = start_tiny_http()
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.kill()
        proc.wait(timeout=5)


async def test_http_deep_reply_fails_its_call_and_the_server_stays_usable(tiny_http: str, tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    loaded = load_mcp_config(cwd=tmp_path, home=tmp_path, env=env, strict=True,
                             extra=[json.dumps({"mcpServers": {"tiny": {"type": "http", "url": tiny_http}}})])
    manager = McpManager(loaded.servers.values(), env=env, startup_timeout=20)
    manager.start()
    try:
        await manager.wait_started()
        assert manager.states["tiny"].status is ServerStatus.READY, manager.states["tiny"].error
        with pytest.raises(ProtocolError, match="tools/call: the reply was refused: message nested deeper than 512"):
            await manager.call_tool("tiny", "deep_reply", {})
        result = await manager.call_tool("tiny", "echo", {"text": "ok"})
        assert result.content == [{"type": "text", "text": "ok"}]
    finally:
        await manager.aclose()
