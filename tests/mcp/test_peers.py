"""McpClient + StdioTransport against third-party servers (installed by ../shared/peers; a missing one skips,
or fails under CI — tests/helpers.py `require`):
server-everything, server-filesystem, mcp-server-time, and the FastMCP (mcp 1.x) / MCPServer (mcp 2.x) demo peer.

Every content type server-everything returns goes through convert_result; progress, cancellation, timeouts and
server → client requests (roots, sampling, elicitation) run against real processes.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from memory_transport import RecordingTransport

from mini_claude.errors import JsonRpcError, McpTimeoutError, TransportError
from mini_claude.mcp.client import McpClient
from mini_claude.mcp.content import ConvertedResult, convert_result
from mini_claude.mcp.transports.stdio import StdioParams, StdioTransport
from tests.helpers import eventually
from tests.peers import peer_command

pytestmark = pytest.mark.timeout(60)

CONNECT_TIMEOUT_S = 30.0
CLOSE_BUDGET_S = 6.0  # stdin EOF grace + SIGTERM grace of the transport, with room to spare

EVERYTHING_TOOLS = {"echo", "get-sum", "get-tiny-image", "get-resource-links", "get-resource-reference",
                    "get-structured-content", "get-annotated-message", "trigger-long-running-operation"}


@asynccontextmanager
async def peer(variable: str, *, setup: Callable[[McpClient], None] | None = None,
               protocol_version: str | None = None) -> AsyncIterator[tuple[McpClient, RecordingTransport]]:
    """A connected client to the peer in `variable`; closed (quickly, process reaped) at the end."""
    argv = peer_command(variable)
    name = variable.lower().removeprefix("peer_")
    stdio = StdioTransport(StdioParams(command=argv[0], args=argv[1:]), server=name)
    transport = RecordingTransport(stdio)
    client = McpClient(transport, name=name, protocol_version=protocol_version)
    if setup is not None:
        setup(client)
    await client.connect(timeout_s=CONNECT_TIMEOUT_S)
    try:
        yield client, transport
    finally:
        began = time.monotonic()
        async with asyncio.timeout(CLOSE_BUDGET_S + 4):
            await client.close()
        assert time.monotonic() - began < CLOSE_BUDGET_S
        assert stdio.exit_code is not None  # reaped


def convert(result: Any, tmp_path: Path, stem: str = "peer") -> ConvertedResult:
    return convert_result(result, spill_dir=tmp_path / "spill", stem=stem)


def texts(converted: ConvertedResult) -> list[str]:
    return [b["text"] for b in converted.blocks if b["type"] == "text"]


async def tools_when_ready(client: McpClient, wanted: set[str], *, timeout_s: float = 10.0) -> dict[str, Any]:
    """server-everything registers some tools only after `initialized` (announced by list_changed): poll."""
    async with asyncio.timeout(timeout_s):
        while True:
            tools = {t.name: t for t in await client.list_tools()}
            if wanted <= tools.keys():
                return tools
            await asyncio.sleep(0.05)


# ---- server-everything -------------------------------------------------------------------------------------------


async def test_everything_handshake_and_tools() -> None:
    changed = asyncio.Event()

    def setup(client: McpClient) -> None:
        client.on_notification("notifications/tools/list_changed", lambda _m, _p: changed.set())

    async with peer("PEER_EVERYTHING", setup=setup) as (client, transport):
        assert client.protocol_version == "2025-11-25"
        assert client.server_info["name"] == "mcp-servers/everything"
        assert "tools" in client.server_capabilities and client.instructions
        assert transport.sent_method("initialize")[0]["params"]["capabilities"] == {}
        await asyncio.wait_for(changed.wait(), 10)  # tools registered after initialized
        tools = await tools_when_ready(client, EVERYTHING_TOOLS)
        assert tools["echo"].read_only_hint and tools["echo"].input_schema["required"] == ["message"]
        assert tools["get-structured-content"].output_schema is not None
        assert not tools["toggle-simulated-logging"].read_only_hint
        assert "get-roots-list" not in tools  # we declared no roots


async def test_everything_text_and_tool_errors(tmp_path: Path) -> None:
    async with peer("PEER_EVERYTHING") as (client, _):
        await tools_when_ready(client, {"echo", "get-sum"})
        echo = convert(await client.call_tool("echo", {"message": "hi there"}), tmp_path)
        assert texts(echo) == ["Echo: hi there"] and not echo.is_error
        total = convert(await client.call_tool("get-sum", {"a": 40, "b": 2}), tmp_path)
        assert texts(total) == ["The sum of 40 and 2 is 42."]
        bad = await client.call_tool("get-sum", {"a": "x"})  # JS SDK: bad arguments are an isError result
        converted = convert(bad, tmp_path)
        assert bad.is_error and converted.is_error and "-32602" in texts(converted)[0]
        unknown = await client.call_tool("no-such-tool", {})
        assert unknown.is_error and "not found" in unknown.content[0]["text"]


async def test_everything_content_types(tmp_path: Path) -> None:
    async with peer("PEER_EVERYTHING") as (client, _):
        await tools_when_ready(client, EVERYTHING_TOOLS)

        image = convert(await client.call_tool("get-tiny-image", {}), tmp_path)
        kinds = [b["type"] for b in image.blocks]
        assert kinds == ["text", "image", "text"]
        assert image.blocks[1]["source"]["media_type"] == "image/png" and image.blocks[1]["source"]["data"]

        links = texts(convert(await client.call_tool("get-resource-links", {"count": 2}), tmp_path))
        assert links[0].startswith("Here are 2 resource links")
        assert links[1].startswith("resource link: ") and "<demo://resource/" in links[1] and "(text/plain)" in links[1]
        assert len([line for line in links if line.startswith("resource link: ")]) == 2

        ref_text = texts(convert(await client.call_tool("get-resource-reference", {"resourceType": "Text",
                                                                                   "resourceId": 1}), tmp_path))
        assert any(line.startswith("[resource demo://resource/dynamic/text/1 (text/plain)]\n") for line in ref_text)
        ref_blob = texts(convert(await client.call_tool("get-resource-reference", {"resourceType": "Blob",
                                                                                   "resourceId": 2}), tmp_path))
        blob_line = next(line for line in ref_blob if line.startswith("[resource demo://resource/dynamic/blob/2"))
        assert "Resource 2" in blob_line  # a text/plain blob is decoded and shown inline

        structured = await client.call_tool("get-structured-content", {"location": "Chicago"})
        assert isinstance(structured.structured_content, dict) and "temperature" in structured.structured_content
        shown = texts(convert(structured, tmp_path))
        assert len(shown) == 1 and json.loads(shown[0]) == structured.structured_content  # not repeated

        annotated = await client.call_tool("get-annotated-message", {"messageType": "error", "includeImage": True})
        converted = convert(annotated, tmp_path)
        assert texts(converted)[0] == "Error: Operation failed"
        assert [b["type"] for b in converted.blocks] == ["text", "image"]


async def test_everything_progress_reaches_the_callback() -> None:
    async with peer("PEER_EVERYTHING") as (client, transport):
        await tools_when_ready(client, {"trigger-long-running-operation"})
        seen: list[tuple[float, float | None, str | None]] = []
        # 0.8 s of work against a 0.5 s timeout: it only finishes because progress pushes the deadline back
        result = await client.call_tool("trigger-long-running-operation", {"duration": 0.8, "steps": 4},
                                        timeout_s=0.5, on_progress=lambda *a: seen.append(a))
        assert "completed" in result.content[0]["text"]
        assert [(p, t) for p, t, _m in seen] == [(1.0, 4.0), (2.0, 4.0), (3.0, 4.0), (4.0, 4.0)]
        token = transport.sent_method("tools/call")[-1]["params"]["_meta"]["progressToken"]
        assert isinstance(token, str) and token
        assert not transport.sent_method("notifications/cancelled")


async def test_everything_cancellation_is_sent_and_server_survives() -> None:
    async with peer("PEER_EVERYTHING") as (client, transport):
        await tools_when_ready(client, {"trigger-long-running-operation", "echo"})
        first_progress = asyncio.Event()
        began = time.monotonic()
        task = asyncio.ensure_future(client.call_tool(
            "trigger-long-running-operation", {"duration": 1.0, "steps": 10},
            on_progress=lambda *_a: first_progress.set()))
        await asyncio.wait_for(first_progress.wait(), 5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        call_id = transport.sent_method("tools/call")[-1]["id"]
        await eventually(lambda: transport.sent_method("notifications/cancelled"), "notifications/cancelled")
        cancelled = transport.sent_method("notifications/cancelled")
        assert [c["params"]["requestId"] for c in cancelled] == [call_id]
        echo = await client.call_tool("echo", {"message": "still alive"})
        assert echo.content[0]["text"] == "Echo: still alive"
        # the operation would have finished by now; its server dropped the reply because it saw the cancel
        await asyncio.sleep(max(0.0, 1.5 - (time.monotonic() - began)))
        assert transport.responses_to(call_id) == []
        await client.ping()


async def test_everything_timeout_sends_cancelled() -> None:
    async with peer("PEER_EVERYTHING") as (client, transport):
        await tools_when_ready(client, {"trigger-long-running-operation", "echo"})
        with pytest.raises(McpTimeoutError) as info:
            await client.call_tool("trigger-long-running-operation", {"duration": 1, "steps": 2}, timeout_s=0.3)
        assert info.value.server == "everything" and info.value.method == "tools/call"
        await eventually(lambda: transport.sent_method("notifications/cancelled"), "notifications/cancelled")
        call_id = transport.sent_method("tools/call")[-1]["id"]
        assert transport.sent_method("notifications/cancelled")[0]["params"]["requestId"] == call_id
        assert (await client.call_tool("echo", {"message": "ok"})).content[0]["text"] == "Echo: ok"


async def test_everything_server_to_client_requests(tmp_path: Path) -> None:
    sampled: list[Any] = []
    elicited: list[Any] = []

    async def roots(_params: Any) -> dict[str, Any]:
        return {"roots": [{"uri": tmp_path.as_uri(), "name": "workspace"}]}

    async def sampling(params: Any) -> dict[str, Any]:
        sampled.append(params)
        return {"role": "assistant", "content": {"type": "text", "text": "sampled reply"}, "model": "mock-model",
                "stopReason": "endTurn"}

    async def elicitation(params: Any) -> dict[str, Any]:
        elicited.append(params)
        return {"action": "decline"}

    def setup(client: McpClient) -> None:
        client.set_request_handler("roots/list", roots)
        client.set_request_handler("sampling/createMessage", sampling)
        client.set_request_handler("elicitation/create", elicitation)

    async with peer("PEER_EVERYTHING", setup=setup) as (client, transport):
        caps = transport.sent_method("initialize")[0]["params"]["capabilities"]
        assert caps == {"roots": {"listChanged": True}, "sampling": {}, "elicitation": {}}
        await tools_when_ready(client, {"get-roots-list", "trigger-sampling-request", "trigger-elicitation-request"})
        listed = await client.call_tool("get-roots-list", {})
        assert tmp_path.as_uri() in listed.content[0]["text"]
        reply = await client.call_tool("trigger-sampling-request", {"prompt": "hello", "maxTokens": 5})
        assert "sampled reply" in reply.content[0]["text"] and sampled
        assert sampled[0]["messages"][0]["content"]["text"].endswith("hello")
        await client.call_tool("trigger-elicitation-request", {})
        assert elicited and elicited[0]["requestedSchema"]["type"] == "object"
        await client.notify_roots_changed()
        await client.ping()


async def test_everything_resources_and_prompts() -> None:
    async with peer("PEER_EVERYTHING") as (client, _):
        resources = await client.list_resources()
        assert len(resources) >= 7 and all("uri" in r for r in resources)
        contents = await client.read_resource(resources[0]["uri"])
        assert contents and contents[0]["uri"] == resources[0]["uri"]
        assert await client.list_resource_templates()
        prompts = {p["name"] for p in await client.list_prompts()}
        assert {"simple-prompt", "args-prompt"} <= prompts
        rendered = await client.get_prompt("args-prompt", {"city": "Paris"})
        assert "Paris" in json.dumps(rendered["messages"])
        with pytest.raises(JsonRpcError):
            await client.get_prompt("no-such-prompt")


async def test_everything_close_is_quick_while_it_runs_a_timer() -> None:
    """server-everything ignores stdin EOF while a timer runs: close() escalates and stays bounded."""
    async with peer("PEER_EVERYTHING") as (client, transport):
        await tools_when_ready(client, {"trigger-long-running-operation"})
        task = asyncio.ensure_future(client.call_tool("trigger-long-running-operation",
                                                      {"duration": 30, "steps": 3}))
        await eventually(lambda: transport.sent_method("tools/call"), "the call to be sent")
    with pytest.raises(TransportError, match="closed by the client"):  # the pending call ended with the close
        await asyncio.wait_for(task, 1)


# ---- server-filesystem ----------------------------------------------------------------------------------------------


async def test_filesystem_without_roots() -> None:
    async with peer("PEER_FILESYSTEM") as (client, _):
        tools = {t.name: t for t in await client.list_tools()}
        assert {"read_text_file", "write_file", "list_allowed_directories"} <= tools.keys()
        assert tools["read_text_file"].read_only_hint and not tools["write_file"].read_only_hint
        allowed = await client.call_tool("list_allowed_directories", {})
        assert "Allowed directories" in allowed.content[0]["text"]


async def test_filesystem_uses_our_roots(tmp_path: Path) -> None:
    (tmp_path / "hello.txt").write_text("hello from the root\n")
    asked = asyncio.Event()

    async def roots(_params: Any) -> dict[str, Any]:
        asked.set()
        return {"roots": [{"uri": tmp_path.as_uri(), "name": "tmp"}]}

    async with peer("PEER_FILESYSTEM", setup=lambda c: c.set_request_handler("roots/list", roots)) as (client, _):
        await asyncio.wait_for(asked.wait(), 10)
        async with asyncio.timeout(10):  # the server applies the roots after its roots/list call returns
            while True:
                allowed = await client.call_tool("list_allowed_directories", {})
                if str(tmp_path) in allowed.content[0]["text"]:
                    break
                await asyncio.sleep(0.05)
        result = await client.call_tool("read_text_file", {"path": str(tmp_path / "hello.txt")})
        assert not result.is_error and result.content[0]["text"] == "hello from the root\n"
        converted = convert(result, tmp_path)
        assert texts(converted) == ["hello from the root\n"]  # structuredContent {"content": ...} not repeated
        outside = await client.call_tool("read_text_file", {"path": "/etc/hostname"})
        assert outside.is_error


# ---- mcp-server-time -------------------------------------------------------------------------------------------------


async def test_time_server(tmp_path: Path) -> None:
    async with peer("PEER_TIME") as (client, _):
        tools = {t.name for t in await client.list_tools()}
        assert {"get_current_time", "convert_time"} <= tools
        result = await client.call_tool("get_current_time", {"timezone": "UTC"})
        assert not result.is_error and result.structured_content["timezone"] == "UTC"
        assert texts(convert(result, tmp_path)) == [result.content[0]["text"]]
        bad = await client.call_tool("get_current_time", {"timezone": "Not/AZone"})
        assert bad.is_error


# ---- FastMCP (mcp 1.x) and MCPServer (mcp 2.x) -------------------------------------------------------------------


# mcp 2.x serves both eras; its old-API server → client requests (roots, sampling, elicitation) have no
# back-channel in the 2026-07-28 era, so the round trips are checked in the 2025-11-25 era it also speaks.
@pytest.mark.parametrize("variable,pin", [("PEER_FASTMCP_V1", None), ("PEER_MCPSERVER_V2", "2025-11-25")])
async def test_python_sdk_peers(variable: str, pin: str | None, tmp_path: Path) -> None:
    async def roots(_params: Any) -> dict[str, Any]:
        return {"roots": [{"uri": "file:///workspace", "name": "ws"}]}

    async def sampling(_params: Any) -> dict[str, Any]:
        return {"role": "assistant", "content": {"type": "text", "text": "from the model"}, "model": "mock"}

    async def elicitation(_params: Any) -> dict[str, Any]:
        return {"action": "accept", "content": {"ok": True, "note": "fine"}}

    def setup(client: McpClient) -> None:
        client.set_request_handler("roots/list", roots)
        client.set_request_handler("sampling/createMessage", sampling)
        client.set_request_handler("elicitation/create", elicitation)

    async with peer(variable, setup=setup, protocol_version=pin) as (client, _):
        assert client.era == "legacy"
        assert client.instructions == "Demo peer for client integration tests."
        tools = {t.name for t in await client.list_tools()}
        assert {"echo", "add", "weather", "fail", "tiny_image", "slow"} <= tools

        added = await client.call_tool("add", {"a": 40, "b": 2})
        assert added.structured_content == {"result": 42}
        assert texts(convert(added, tmp_path)) == ["42"]
        weather = await client.call_tool("weather", {"city": "Oslo"})
        assert weather.structured_content["city"] == "Oslo"
        image = convert(await client.call_tool("tiny_image", {}), tmp_path)
        assert [b["type"] for b in image.blocks] == ["image"]
        failed = await client.call_tool("fail", {"reason": "kaput"})
        assert failed.is_error and "fail" in failed.content[0]["text"]  # v1 says "kaput", v2 hides the message

        seen: list[tuple[float, float | None, str | None]] = []
        slow = await client.call_tool("slow", {"steps": 3, "delay": 0.05}, on_progress=lambda *a: seen.append(a))
        assert "done after 3 steps" in slow.content[0]["text"]
        assert seen == [(1.0, 3.0, "step 1"), (2.0, 3.0, "step 2"), (3.0, 3.0, "step 3")]

        assert "file:///workspace" in (await client.call_tool("list_client_roots", {})).content[0]["text"]
        assert "from the model" in (await client.call_tool("ask_llm", {"prompt": "hi"})).content[0]["text"]
        assert "ok=True" in (await client.call_tool("ask_user", {})).content[0]["text"]

        resources = await client.list_resources()
        assert any(r["uri"] == "demo://greeting" for r in resources)
        assert (await client.read_resource("demo://greeting"))[0]["text"] == "hello from demo-peer"
        prompt = await client.get_prompt("review", {"code": "x = 1"})
        assert "x = 1" in json.dumps(prompt["messages"])


async def test_python_sdk_v2_peer_speaks_the_modern_era(tmp_path: Path) -> None:
    """Automatic era choice: mcp 2.x answers server/discover, so the client goes stateless (2026-07-28)."""
    async with peer("PEER_MCPSERVER_V2") as (client, transport):
        assert client.era == "modern" and client.protocol_version == "2026-07-28"
        # a slow start may race an `initialize` after the probe's grace period, but no legacy session is opened
        assert not any(m.get("method") == "notifications/initialized" for m in transport.sent)
        added = await client.call_tool("add", {"a": 40, "b": 2})
        assert added.structured_content == {"result": 42}
        seen: list[tuple[float, float | None, str | None]] = []
        slow = await client.call_tool("slow", {"steps": 2, "delay": 0.02}, on_progress=lambda *a: seen.append(a))
        assert "done after 2 steps" in slow.content[0]["text"]
        assert [s[0] for s in seen] == [1.0, 2.0]
