"""The bundled demo server: its protocol answers in-process, then as a real process under McpClient (and the
official SDK client, as an independent check that it speaks MCP)."""

from __future__ import annotations

import asyncio
import io
import json
import sys
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from mini_claude.errors import JsonRpcError
from mini_claude.mcp.client import McpClient
from mini_claude.mcp.content import convert_result
from mini_claude.mcp.demo_server import PROTOCOL_VERSIONS, TOOLS, handle_message, serve
from mini_claude.mcp.protocol import SUPPORTED_PROTOCOL_VERSIONS
from mini_claude.mcp.transports.stdio import StdioParams, StdioTransport

pytestmark = pytest.mark.timeout(30)

ROOT = Path(__file__).resolve().parents[2]
DEMO = StdioParams(command=sys.executable, args=["-m", "mini_claude.mcp.demo_server"], cwd=str(ROOT))


def rpc(method: str, params: Any = None, request_id: Any = 1) -> Any:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return handle_message(message)


def call(name: str, arguments: Any = None) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name}
    if arguments is not None:
        params["arguments"] = arguments
    reply = rpc("tools/call", params)
    assert "result" in reply, reply
    return reply["result"]


# ---- in-process ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", SUPPORTED_PROTOCOL_VERSIONS)
def test_initialize_answers_the_clients_version(version: str) -> None:
    result = rpc("initialize", {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t"}})["result"]
    assert result["protocolVersion"] == version
    assert result["capabilities"] == {"tools": {"listChanged": False}}
    assert result["serverInfo"]["name"] == "mini-claude-demo" and result["instructions"]


def test_initialize_unknown_version_gets_the_latest() -> None:
    result = rpc("initialize", {"protocolVersion": "2030-01-01"})["result"]
    assert result["protocolVersion"] == "2025-11-25" == PROTOCOL_VERSIONS[0]


def test_tools_list() -> None:
    tools = rpc("tools/list")["result"]["tools"]
    assert [t["name"] for t in tools] == ["add", "multiply", "echo", "now", "word_count"]
    for tool in tools:
        assert tool["annotations"]["readOnlyHint"] is True
        assert tool["inputSchema"]["type"] == "object" and tool["description"]
    assert tools == TOOLS


def test_tools() -> None:
    assert call("add", {"a": 40, "b": 2}) == {"content": [{"type": "text", "text": "42"}],
                                              "structuredContent": {"sum": 42}}
    assert call("add", {"a": 0.1, "b": 0.2})["content"][0]["text"] == "0.30000000000000004"
    assert call("add", {"a": 1.5, "b": 2.5})["content"][0]["text"] == "4"
    assert call("multiply", {"a": 6, "b": 7})["content"][0]["text"] == "42"
    assert call("echo", {"text": "héllo\nworld"})["content"][0]["text"] == "héllo\nworld"
    assert call("word_count", {"text": "  one two\tthree\n"})["structuredContent"] == {"words": 3}
    now = datetime.fromisoformat(call("now", {})["content"][0]["text"])
    assert now.tzinfo is not None and abs((datetime.now(UTC) - now).total_seconds()) < 5
    assert call("now")["content"][0]["text"]  # arguments may be omitted


@pytest.mark.parametrize(("name", "arguments", "needle"), [
    ("add", {"a": "1", "b": 2}, "argument 'a' must be a number, got string"),
    ("add", {"a": 1}, "missing required argument 'b'"),
    ("add", {"a": True, "b": 2}, "must be a number, got boolean"),
    ("add", {"a": 1, "b": 2, "c": 3}, "unexpected argument 'c'"),
    ("multiply", {"a": 1e308, "b": 1e308}, "not a finite number"),
    ("echo", {"text": 5}, "argument 'text' must be a string, got number"),
    ("word_count", [], "arguments must be an object"),
])
def test_bad_arguments_are_tool_errors(name: str, arguments: Any, needle: str) -> None:
    result = call(name, arguments)
    assert result["isError"] is True and needle in result["content"][0]["text"]


def test_protocol_errors() -> None:
    unknown = rpc("tools/call", {"name": "nope", "arguments": {}})
    assert unknown["error"]["code"] == -32602 and "nope" in unknown["error"]["message"]
    assert rpc("resources/list")["error"]["code"] == -32601
    assert rpc("tools/list", ["not", "an", "object"])["error"]["code"] == -32602
    assert rpc("ping", request_id="abc") == {"jsonrpc": "2.0", "id": "abc", "result": {}}
    assert handle_message({"jsonrpc": "2.0", "method": "notifications/initialized"}) is None
    assert handle_message({"jsonrpc": "2.0", "id": 5, "result": {}}) is None
    assert handle_message([1])["error"]["code"] == -32600


def test_serve_lines() -> None:
    lines = [
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}),
        "",
        "not json",
        json.dumps([{"jsonrpc": "2.0", "id": 2, "method": "ping"}, {"jsonrpc": "2.0", "method": "notifications/x"}]),
    ]
    out = io.BytesIO()
    serve(io.BytesIO(("\n".join(lines) + "\n").encode()), out)
    replies = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [r.get("id") for r in replies] == [1, None, 2]
    assert replies[1]["error"]["code"] == -32700


# ---- as a process ----------------------------------------------------------------------------------------------------


@pytest.fixture
async def demo() -> AsyncIterator[McpClient]:
    client = McpClient(StdioTransport(DEMO, server="demo"), name="demo")
    await client.connect(timeout_s=10)
    yield client
    await client.close()


async def test_demo_process_end_to_end(demo: McpClient, tmp_path: Path) -> None:
    assert demo.protocol_version == "2025-11-25"
    assert demo.server_info["name"] == "mini-claude-demo" and demo.instructions
    tools = await demo.list_tools()
    assert [t.name for t in tools] == ["add", "multiply", "echo", "now", "word_count"]
    assert all(t.read_only_hint for t in tools)
    result = await demo.call_tool("add", {"a": 40, "b": 2})
    converted = convert_result(result, spill_dir=tmp_path, stem="demo")
    assert converted.blocks == [{"type": "text", "text": "42"}]  # structuredContent {"sum": 42} is not repeated
    bad = await demo.call_tool("add", {"a": "x", "b": 1})
    assert bad.is_error and "must be a number" in bad.content[0]["text"]
    with pytest.raises(JsonRpcError) as info:
        await demo.call_tool("nope", {})
    assert info.value.code == -32602 and info.value.server == "demo"
    await demo.ping()
    results = await asyncio.gather(*(demo.call_tool("multiply", {"a": i, "b": i}) for i in range(20)))
    assert [r.structured_content["product"] for r in results] == [i * i for i in range(20)]


async def test_demo_starts_fast_and_exits_on_eof() -> None:
    transport = StdioTransport(DEMO, server="demo")
    client = McpClient(transport, name="demo")
    began = time.monotonic()
    await client.connect(timeout_s=10)
    startup = time.monotonic() - began
    assert startup < 2, startup  # ~60 ms here; generous for slow CI
    began = time.monotonic()
    await client.close()
    assert time.monotonic() - began < 1.5  # exits on stdin EOF, no SIGTERM needed
    assert transport.exit_code == 0


async def test_official_sdk_client_talks_to_the_demo_server() -> None:
    """Independent check: the official `mcp` SDK (a test peer only) accepts our server."""
    import mcp  # a dev dependency (pyproject [dev]), never imported by mini_claude/
    from mcp.client.stdio import stdio_client

    params = mcp.StdioServerParameters(command=sys.executable, args=["-m", "mini_claude.mcp.demo_server"],
                                       cwd=str(ROOT))
    async with asyncio.timeout(20), stdio_client(params) as (read, write), mcp.ClientSession(read, write) as session:
        await session.initialize()
        listed = await session.list_tools()
        assert {t.name for t in listed.tools} == {"add", "multiply", "echo", "now", "word_count"}
        result = await session.call_tool("add", {"a": 40, "b": 2})
        # SDK 2.x spells fields in snake_case, 1.x in camelCase
        assert result.content[0].text == "42"
        assert not getattr(result, "is_error", getattr(result, "isError", None))
        assert getattr(result, "structured_content", getattr(result, "structuredContent", None)) == {"sum": 42}
