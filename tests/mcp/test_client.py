"""McpClient against a scripted in-memory server: handshake, capabilities, pagination, calls, progress,
cancellation, server → client traffic, and errors that name the server."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from memory_transport import NO_REPLY, FakeServer, MemoryTransport, RpcFailure, memory_pair

from mini_claude.errors import (
    JsonRpcError,
    McpError,
    McpTimeoutError,
    ProtocolError,
    ServerExitedError,
    TransportError,
)
from mini_claude.mcp import lists as lists_module
from mini_claude.mcp.client import McpClient
from mini_claude.mcp.protocol import (
    LATEST_PROTOCOL_VERSION,
    SUPPORTED_PROTOCOL_VERSIONS,
    CallToolResult,
    McpTool,
    tool_timeout_s,
)

pytestmark = pytest.mark.timeout(15)

TOOL = {"name": "t", "inputSchema": {"type": "object"}}


@pytest.fixture
async def pair() -> AsyncIterator[tuple[MemoryTransport, FakeServer]]:
    transport, server = memory_pair()
    yield transport, server
    await server.stop()


@pytest.fixture
async def connected(pair: tuple[MemoryTransport, FakeServer]) -> AsyncIterator[tuple[McpClient, FakeServer]]:
    transport, server = pair
    client = McpClient(transport, name="mem")
    await client.connect(timeout_s=5)
    yield client, server
    await client.close()


# ---- handshake ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", SUPPORTED_PROTOCOL_VERSIONS)
async def test_each_supported_version_is_accepted(pair: tuple[MemoryTransport, FakeServer], version: str) -> None:
    transport, server = pair
    server.version = version
    client = McpClient(transport, name="mem")
    await client.connect(timeout_s=5)
    try:
        assert client.protocol_version == version
        assert client.is_connected
        assert client.server_info == {"name": "fake", "version": "1.0"}
        assert client.server_capabilities == {"tools": {"listChanged": True}}
        assert client.instructions == "Use the fake tools."
        init = server.messages("initialize")[0]
        assert init["params"]["protocolVersion"] == LATEST_PROTOCOL_VERSION == "2025-11-25"
        assert init["params"]["clientInfo"]["name"] == "mini-claude"
        await server.wait_for("notifications/initialized")
        methods = [m.get("method") for m in server.received]
        assert methods.index("initialize") < methods.index("notifications/initialized")
    finally:
        await client.close()


async def test_unsupported_version_is_a_protocol_error_naming_both(pair: tuple[MemoryTransport, FakeServer]) -> None:
    transport, server = pair
    server.version = "1999-01-01"
    client = McpClient(transport, name="mem")
    with pytest.raises(ProtocolError) as info:
        await client.connect(timeout_s=5)
    text = str(info.value)
    assert "1999-01-01" in text and LATEST_PROTOCOL_VERSION in text
    assert info.value.server == "mem" and text.startswith("MCP server 'mem':")
    assert transport.closed  # nothing left running after a failed connect
    assert not client.is_connected
    assert not server.messages("notifications/initialized")


async def test_custom_client_info_and_instructions_absent(pair: tuple[MemoryTransport, FakeServer]) -> None:
    transport, server = pair
    server.instructions = None
    client = McpClient(transport, name="mem", client_info={"name": "x", "version": "9"})
    await client.connect(timeout_s=5)
    assert client.instructions is None
    assert server.messages("initialize")[0]["params"]["clientInfo"] == {"name": "x", "version": "9"}
    await client.close()


async def test_initialize_result_not_an_object(pair: tuple[MemoryTransport, FakeServer]) -> None:
    transport, server = pair
    server.on("initialize", lambda _p: ["nope"])
    with pytest.raises(ProtocolError, match="not an object"):
        await McpClient(transport, name="mem").connect(timeout_s=5)


async def test_initialize_refused_is_a_jsonrpc_error(pair: tuple[MemoryTransport, FakeServer]) -> None:
    transport, server = pair

    def refuse(_params: Any) -> Any:
        raise RpcFailure(-32602, "Unsupported protocol version", {"supported": ["1.0"]})

    server.on("initialize", refuse)
    with pytest.raises(JsonRpcError) as info:
        await McpClient(transport, name="mem").connect(timeout_s=5)
    assert info.value.code == -32602 and info.value.server == "mem"


async def test_connect_timeout_is_initialize_timeout_without_cancel(pair: tuple[MemoryTransport, FakeServer]) -> None:
    transport, server = pair
    server.on("initialize", lambda _p: NO_REPLY)
    client = McpClient(transport, name="mem")
    began = time.monotonic()
    with pytest.raises(McpTimeoutError) as info:
        await client.connect(timeout_s=0.3)
    assert time.monotonic() - began < 2
    assert info.value.method == "initialize" and info.value.seconds == 0.3 and info.value.server == "mem"
    assert transport.closed
    await server.wait_closed()  # the server has read all the client ever sent: nothing more can come
    assert not server.messages("notifications/cancelled")  # the spec forbids cancelling initialize


async def test_connect_timeout_covers_transport_start(pair: tuple[MemoryTransport, FakeServer]) -> None:
    transport, _server = pair
    transport.start_delay_s = 5
    with pytest.raises(McpTimeoutError):
        await McpClient(transport, name="mem").connect(timeout_s=0.2)


async def test_server_dying_during_connect_raises_at_once(pair: tuple[MemoryTransport, FakeServer]) -> None:
    transport, server = pair

    async def die(_params: Any) -> Any:
        server.die(exit_code=3, stderr="boom: bad config\n")
        return NO_REPLY

    server.on("initialize", die)
    began = time.monotonic()
    with pytest.raises(ServerExitedError) as info:
        await McpClient(transport, name="mem").connect(timeout_s=10)
    assert time.monotonic() - began < 1
    assert info.value.exit_code == 3 and "boom: bad config" in str(info.value)
    assert info.value.server == "mem"


async def test_transport_start_failure_names_the_server() -> None:
    transport = MemoryTransport(server=None)  # a transport that does not know the server's name
    transport.start_error = TransportError("command not found: nope")
    with pytest.raises(TransportError) as info:
        await McpClient(transport, name="named").connect(timeout_s=5)
    assert info.value.server == "named"
    assert str(info.value) == "MCP server 'named': command not found: nope"


async def test_connect_twice_is_refused(connected: tuple[McpClient, FakeServer]) -> None:
    client, _ = connected
    with pytest.raises(ProtocolError):
        await client.connect(timeout_s=1)


async def test_request_before_connect(pair: tuple[MemoryTransport, FakeServer]) -> None:
    transport, _ = pair
    with pytest.raises(TransportError, match="not connected") as info:
        await McpClient(transport, name="mem").list_tools()
    assert info.value.server == "mem"


# ---- capabilities ------------------------------------------------------------------------------------------------


async def _declared(pair: tuple[MemoryTransport, FakeServer], setup: Any) -> dict[str, Any]:
    transport, server = pair
    client = McpClient(transport, name="mem")
    setup(client)
    await client.connect(timeout_s=5)
    await client.close()
    return server.messages("initialize")[0]["params"]["capabilities"]


async def _handler(_params: Any) -> dict[str, Any]:
    return {}


async def test_no_handlers_no_capabilities(pair: tuple[MemoryTransport, FakeServer]) -> None:
    assert await _declared(pair, lambda c: None) == {}


async def test_roots_declared_only_with_a_handler(pair: tuple[MemoryTransport, FakeServer]) -> None:
    caps = await _declared(pair, lambda c: c.set_request_handler("roots/list", _handler))
    assert caps == {"roots": {"listChanged": True}}


async def test_sampling_and_elicitation_declared_with_handlers(pair: tuple[MemoryTransport, FakeServer]) -> None:
    def setup(client: McpClient) -> None:
        client.set_request_handler("sampling/createMessage", _handler)
        client.set_request_handler("elicitation/create", _handler, capability={"form": {}, "url": {}})
        client.set_request_handler("x/custom", _handler)  # no capability for a method we do not know

    caps = await _declared(pair, setup)
    assert caps == {"sampling": {}, "elicitation": {"form": {}, "url": {}}}


async def test_handler_set_after_connect_declares_nothing(connected: tuple[McpClient, FakeServer]) -> None:
    client, _ = connected
    client.set_request_handler("roots/list", _handler)
    assert client.declared_capabilities == {}
    with pytest.raises(ProtocolError):
        await client.notify_roots_changed()


# ---- pagination --------------------------------------------------------------------------------------------------


async def test_list_tools_follows_cursors(connected: tuple[McpClient, FakeServer]) -> None:
    client, server = connected
    pages = {
        None: ({"tools": [{"name": "a", "description": "A", "inputSchema": {"type": "object"},
                           "annotations": {"readOnlyHint": True}}], "nextCursor": "p2"}),
        "p2": {"tools": [{"name": "b", "title": "Bee", "inputSchema": {"type": "object"},
                          "outputSchema": {"type": "object"}}], "nextCursor": "p3"},
        "p3": {"tools": [{"name": "c"}]},
    }
    server.on("tools/list", lambda params: pages[(params or {}).get("cursor")])
    tools = await client.list_tools()
    assert [t.name for t in tools] == ["a", "b", "c"]
    assert tools[0].read_only_hint and not tools[1].read_only_hint and not tools[2].read_only_hint
    assert tools[0].description == "A" and tools[1].title == "Bee"
    assert tools[1].output_schema == {"type": "object"} and tools[0].output_schema is None
    assert tools[2].input_schema == {"type": "object"}  # missing schema: still callable
    cursors = [(m.get("params") or {}).get("cursor") for m in server.messages("tools/list")]
    assert cursors == [None, "p2", "p3"]


async def test_cursor_loop_is_stopped(connected: tuple[McpClient, FakeServer]) -> None:
    client, server = connected
    server.on("tools/list", lambda params: {"tools": [{"name": f"t{len(server.messages('tools/list'))}"}],
                                            "nextCursor": "same"})
    tools = await client.list_tools()
    assert [t.name for t in tools] == ["t1", "t2"]
    assert len(server.messages("tools/list")) == 2


async def test_endless_pages_are_bounded(connected: tuple[McpClient, FakeServer],
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    client, server = connected
    monkeypatch.setattr(lists_module, "MAX_LIST_PAGES", 5)
    server.on("tools/list", lambda params: {
        "tools": [], "nextCursor": f"c{len(server.messages('tools/list'))}"})
    assert await client.list_tools() == []
    assert len(server.messages("tools/list")) == 5


async def test_bad_tool_entries_are_dropped(connected: tuple[McpClient, FakeServer]) -> None:
    client, server = connected
    server.on("tools/list", lambda _p: {"tools": [{"name": "a"}, {"description": "no name"}, "junk", {"name": "a"},
                                                  {"name": "b", "annotations": "bad"}]})
    tools = await client.list_tools()
    assert [t.name for t in tools] == ["a", "b"]
    assert tools[1].annotations == {}


async def test_list_without_the_list_is_a_protocol_error(connected: tuple[McpClient, FakeServer]) -> None:
    client, server = connected
    server.on("tools/list", lambda _p: {"items": []})
    with pytest.raises(ProtocolError, match="tools/list"):
        await client.list_tools()


def test_mcp_tool_from_wire() -> None:
    tool = McpTool.from_wire({"name": "x", "annotations": {"title": "X!", "readOnlyHint": "yes"}})
    assert tool is not None and tool.title == "X!" and not tool.read_only_hint
    assert McpTool.from_wire({"name": ""}) is None


# ---- tools/call ----------------------------------------------------------------------------------------------------


async def test_call_tool_result_shape(connected: tuple[McpClient, FakeServer]) -> None:
    client, server = connected
    server.on("tools/call", lambda params: {
        "content": [{"type": "text", "text": f"hi {params['arguments']['who']}"}, "junk", 7],
        "structuredContent": {"who": params["arguments"]["who"]}, "isError": False})
    result = await client.call_tool("greet", {"who": "bob"})
    assert isinstance(result, CallToolResult)
    assert result.content == [{"type": "text", "text": "hi bob"}]
    assert result.structured_content == {"who": "bob"}
    assert result.is_error is False
    params = server.messages("tools/call")[0]["params"]
    assert params == {"name": "greet", "arguments": {"who": "bob"}}  # no _meta without on_progress


async def test_call_tool_missing_content_and_is_error(connected: tuple[McpClient, FakeServer]) -> None:
    client, server = connected
    server.on("tools/call", lambda _p: {"isError": True})
    result = await client.call_tool("t", None)
    assert result.content == [] and result.is_error
    assert server.messages("tools/call")[0]["params"]["arguments"] == {}


@pytest.mark.parametrize("bad", [{"content": "text"}, ["not", "an", "object"]])
async def test_call_tool_malformed_result(connected: tuple[McpClient, FakeServer], bad: Any) -> None:
    client, server = connected
    server.on("tools/call", lambda _p: bad)
    with pytest.raises(ProtocolError) as info:
        await client.call_tool("t", {})
    assert info.value.server == "mem"


async def test_call_tool_jsonrpc_error_names_server(connected: tuple[McpClient, FakeServer]) -> None:
    client, server = connected

    def unknown(params: Any) -> Any:
        raise RpcFailure(-32602, f"Unknown tool: {params['name']}")

    server.on("tools/call", unknown)
    with pytest.raises(JsonRpcError) as info:
        await client.call_tool("nope", {})
    assert info.value.code == -32602 and info.value.server == "mem"
    assert str(info.value).startswith("MCP server 'mem': Unknown tool: nope")


async def test_progress_reaches_callback_and_pushes_deadline(connected: tuple[McpClient, FakeServer]) -> None:
    client, server = connected

    async def slow(params: Any) -> Any:
        token = params["_meta"]["progressToken"]
        for step in range(1, 7):  # 0.6 s of work against a 0.25 s timeout: only progress keeps it alive
            await asyncio.sleep(0.1)
            await server.notify("notifications/progress", {"progressToken": token, "progress": step, "total": 6,
                                                           "message": f"step {step}"})
        await server.notify("notifications/progress", {"progressToken": "someone-else", "progress": 1})
        return {"content": [{"type": "text", "text": "done"}]}

    server.on("tools/call", slow)
    seen: list[tuple[float, float | None, str | None]] = []
    result = await client.call_tool("slow", {}, timeout_s=0.25, on_progress=lambda *a: seen.append(a))
    assert result.content[0]["text"] == "done"
    assert seen == [(float(i), 6.0, f"step {i}") for i in range(1, 7)]
    assert not server.messages("notifications/cancelled")


async def test_progress_tokens_are_unique_per_call(connected: tuple[McpClient, FakeServer]) -> None:
    client, server = connected

    async def work(params: Any) -> Any:
        token = params["_meta"]["progressToken"]
        await server.notify("notifications/progress", {"progressToken": token, "progress": 0.5,
                                                       "message": params["arguments"]["n"]})
        await asyncio.sleep(0.05)
        return {"content": []}

    server.on("tools/call", work)
    seen: dict[str, list[Any]] = {"a": [], "b": []}
    await asyncio.gather(
        client.call_tool("w", {"n": "a"}, on_progress=lambda p, t, m: seen["a"].append(m)),
        client.call_tool("w", {"n": "b"}, on_progress=lambda p, t, m: seen["b"].append((p, t, m))),
    )
    tokens = [m["params"]["_meta"]["progressToken"] for m in server.messages("tools/call")]
    assert len(set(tokens)) == 2
    assert seen == {"a": ["a"], "b": [(0.5, None, "b")]}


async def test_progress_callback_errors_do_not_break_the_call(connected: tuple[McpClient, FakeServer]) -> None:
    client, server = connected

    async def work(params: Any) -> Any:
        await server.notify("notifications/progress", {"progressToken": params["_meta"]["progressToken"],
                                                       "progress": 1})
        await server.notify("notifications/progress", {"progressToken": params["_meta"]["progressToken"],
                                                       "progress": "bad"})
        return {"content": []}

    def explode(*_a: Any) -> None:
        raise RuntimeError("callback bug")

    server.on("tools/call", work)
    assert (await client.call_tool("w", {}, on_progress=explode)).content == []


async def test_timeout_sends_cancelled_and_ignores_the_late_reply(connected: tuple[McpClient, FakeServer]) -> None:
    client, server = connected

    async def late(_params: Any) -> Any:
        await asyncio.sleep(0.4)
        return {"content": [{"type": "text", "text": "late"}]}

    server.on("tools/call", late)
    began = time.monotonic()
    with pytest.raises(McpTimeoutError) as info:
        await client.call_tool("late", {}, timeout_s=0.15)
    assert time.monotonic() - began < 1
    assert info.value.method == "tools/call" and info.value.server == "mem"
    cancelled = await server.wait_for("notifications/cancelled")
    call_id = server.messages("tools/call")[0]["id"]
    assert cancelled[0]["params"]["requestId"] == call_id
    assert "timed out" in cancelled[0]["params"]["reason"]
    await server.wait_replied(call_id)  # the late reply is on the wire, ahead of anything sent from now on
    server.on("tools/call", lambda _p: {"content": [{"type": "text", "text": "fresh"}]})
    assert (await client.call_tool("t", {})).content[0]["text"] == "fresh"


async def test_default_timeout_comes_from_env(connected: tuple[McpClient, FakeServer],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    client, server = connected
    monkeypatch.setenv("MCP_TOOL_TIMEOUT", "150")
    server.on("tools/call", lambda _p: NO_REPLY)
    with pytest.raises(McpTimeoutError) as info:
        await client.call_tool("t", {})
    assert info.value.seconds == pytest.approx(0.15)


def test_tool_timeout_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MCP_TOOL_TIMEOUT", raising=False)
    assert tool_timeout_s() == 600.0
    monkeypatch.setenv("MCP_TOOL_TIMEOUT", "2500")
    assert tool_timeout_s() == 2.5
    for bad in ("abc", "-5", "0", "inf"):
        monkeypatch.setenv("MCP_TOOL_TIMEOUT", bad)
        assert tool_timeout_s() == 600.0


async def test_cancelling_the_caller_sends_cancelled(connected: tuple[McpClient, FakeServer]) -> None:
    client, server = connected
    server.on("tools/call", lambda _p: NO_REPLY)
    task = asyncio.ensure_future(client.call_tool("forever", {}, on_progress=lambda *a: None))
    await server.wait_for("tools/call")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    cancelled = await server.wait_for("notifications/cancelled")
    assert cancelled[0]["params"]["requestId"] == server.messages("tools/call")[0]["id"]
    assert cancelled[0]["params"]["reason"]
    await client.ping()  # the session lives on


async def test_server_death_fails_a_pending_call_at_once(connected: tuple[McpClient, FakeServer]) -> None:
    client, server = connected
    lost: list[McpError] = []
    client.session_closed_callback = lost.append
    server.on("tools/call", lambda _p: NO_REPLY)
    task = asyncio.ensure_future(client.call_tool("t", {}, timeout_s=30))
    await server.wait_for("tools/call")
    server.die(exit_code=137, stderr="Killed\n")
    with pytest.raises(ServerExitedError) as info:
        await asyncio.wait_for(task, 2)
    assert info.value.server == "mem" and info.value.exit_code == 137
    assert not client.is_connected and isinstance(client.closed_error, ServerExitedError)
    assert len(lost) == 1 and lost[0].server == "mem"
    with pytest.raises(ServerExitedError):  # every later request fails the same way, at once
        await client.call_tool("t", {})


async def test_own_close_does_not_report_a_lost_session(pair: tuple[MemoryTransport, FakeServer]) -> None:
    transport, _server = pair
    client = McpClient(transport, name="mem")
    lost: list[McpError] = []
    client.session_closed_callback = lost.append
    await client.connect(timeout_s=5)
    await client.close()
    await client.close()  # idempotent
    assert lost == [] and transport.closed and not client.is_connected


async def test_unnamed_transport_errors_still_name_the_server() -> None:
    transport = MemoryTransport(server=None)
    server = FakeServer(transport)
    server.start()
    client = McpClient(transport, name="alias")
    await client.connect(timeout_s=5)
    server.on("tools/call", lambda _p: NO_REPLY)
    task = asyncio.ensure_future(client.call_tool("t", {}))
    await server.wait_for("tools/call")
    server.die(exit_code=1)
    with pytest.raises(ServerExitedError) as info:
        await task
    assert info.value.server == "alias" and str(info.value).startswith("MCP server 'alias': server exited")
    await client.close()
    await server.stop()


# ---- server → client -----------------------------------------------------------------------------------------------


async def test_server_request_is_served(pair: tuple[MemoryTransport, FakeServer]) -> None:
    transport, server = pair
    client = McpClient(transport, name="mem")
    asked: list[Any] = []

    async def roots(params: Any) -> dict[str, Any]:
        asked.append(params)
        return {"roots": [{"uri": "file:///work", "name": "work"}]}

    client.set_request_handler("roots/list", roots)
    await client.connect(timeout_s=5)
    reply = await server.request("roots/list")
    assert reply["result"] == {"roots": [{"uri": "file:///work", "name": "work"}]}
    assert asked == [None]
    missing = await server.request("sampling/createMessage", {"messages": []})
    assert missing["error"]["code"] == -32601  # no handler: method not found
    pong = await server.request("ping")
    assert pong["result"] == {}
    await client.notify_roots_changed()
    await server.wait_for("notifications/roots/list_changed")
    await client.close()


async def test_server_request_handler_error(pair: tuple[MemoryTransport, FakeServer]) -> None:
    transport, server = pair
    client = McpClient(transport, name="mem")

    async def refuse(_params: Any) -> Any:
        raise JsonRpcError(-1, "User rejected sampling request")

    client.set_request_handler("sampling/createMessage", refuse)
    await client.connect(timeout_s=5)
    reply = await server.request("sampling/createMessage", {"messages": []})
    assert reply["error"] == {"code": -1, "message": "User rejected sampling request"}
    await client.close()


async def test_notification_callbacks(connected: tuple[McpClient, FakeServer]) -> None:
    client, server = connected
    seen: list[tuple[str, Any]] = []
    done = asyncio.Event()

    async def async_cb(method: str, params: Any) -> None:
        seen.append(("async", params))
        done.set()

    def broken(_m: str, _p: Any) -> None:
        raise RuntimeError("callback bug")

    client.on_notification("notifications/tools/list_changed", lambda m, p: seen.append((m, p)))
    client.on_notification("notifications/tools/list_changed", broken)
    client.on_notification("notifications/message", async_cb)
    await server.notify("notifications/tools/list_changed")
    await server.notify("notifications/message", {"level": "info", "data": "hello"})
    await server.notify("notifications/unknown", {"x": 1})
    await asyncio.wait_for(done.wait(), 2)
    assert seen == [("notifications/tools/list_changed", None), ("async", {"level": "info", "data": "hello"})]


# ---- resources, prompts, ping ------------------------------------------------------------------------------------


async def test_resources_and_prompts(connected: tuple[McpClient, FakeServer]) -> None:
    client, server = connected
    server.on("resources/list", lambda p: {"resources": [{"uri": "a://1", "name": "one"}], "nextCursor": "2"}
              if not (p or {}).get("cursor") else {"resources": [{"uri": "a://2", "name": "two"}]})
    server.on("resources/templates/list", lambda _p: {"resourceTemplates": [{"uriTemplate": "a://{id}"}]})
    server.on("resources/read", lambda p: {"contents": [{"uri": p["uri"], "text": "body"}]})
    server.on("prompts/list", lambda _p: {"prompts": [{"name": "review"}]})
    server.on("prompts/get", lambda p: {"messages": [{"role": "user", "content": {
        "type": "text", "text": f"review {p['arguments']['code']}"}}]})
    assert [r["name"] for r in await client.list_resources()] == ["one", "two"]
    assert await client.list_resource_templates() == [{"uriTemplate": "a://{id}"}]
    assert await client.read_resource("a://1") == [{"uri": "a://1", "text": "body"}]
    assert await client.list_prompts() == [{"name": "review"}]
    prompt = await client.get_prompt("review", {"code": "x = 1"})
    assert prompt["messages"][0]["content"]["text"] == "review x = 1"


async def test_read_resource_bad_result(connected: tuple[McpClient, FakeServer]) -> None:
    client, server = connected
    server.on("resources/read", lambda _p: {"nope": 1})
    with pytest.raises(ProtocolError):
        await client.read_resource("a://1")


async def test_ping_and_request_timeout(pair: tuple[MemoryTransport, FakeServer]) -> None:
    transport, server = pair
    client = McpClient(transport, name="mem", request_timeout_s=0.1)
    await client.connect(timeout_s=5)
    await client.ping()
    server.on("ping", lambda _p: NO_REPLY)
    with pytest.raises(McpTimeoutError) as info:
        await client.ping()
    assert info.value.method == "ping"
    await server.wait_for("notifications/cancelled")
    await client.close()
