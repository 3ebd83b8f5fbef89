"""McpClient in the 2026-07-28 (modern, stateless) era over the in-memory transport: the era choice and memory,
per-request `_meta`, -32022 retries, multi-round-trip requests, resultType defaults, ttl list caching, and the
SEP-2243 header plumbing.

Why this module is long: every test drives the same scripted modern-era server over the same in-memory transport;
the era's features are pinned together because each changes what the others send."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from memory_transport import NO_REPLY, FakeServer, MemoryTransport, RpcFailure, memory_pair

from mini_claude.errors import JsonRpcError, ProtocolError, ServerExitedError
from mini_claude.mcp import lists
from mini_claude.mcp.client import McpClient
from mini_claude.mcp.negotiation import EraMemory, EraRecord
from mini_claude.mcp.protocol import LATEST_MODERN_VERSION

pytestmark = pytest.mark.timeout(15)

MODERN = "2026-07-28"
META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPS = "io.modelcontextprotocol/clientCapabilities"
META_INFO = "io.modelcontextprotocol/clientInfo"
HEADER_TOOL = {"name": "sql", "inputSchema": {"type": "object", "properties": {
    "region": {"type": "string", "x-mcp-header": "Region"}, "query": {"type": "string"}}}}
BAD_TOOL = {"name": "bad", "inputSchema": {"type": "object", "properties": {
    "score": {"type": "number", "x-mcp-header": "Score"}}}}


class HeaderTransport(MemoryTransport):
    """A memory transport with the HTTP transport's hooks: `set_protocol_version` and `message_headers`."""

    def __init__(self, server: str | None = None) -> None:
        super().__init__(server)
        self.protocol_version: str | None = None
        self.message_headers: Any = None
        self.sent_headers: list[tuple[str | None, Mapping[str, str]]] = []
        self.versions: list[str | None] = []

    def set_protocol_version(self, version: str | None) -> None:
        self.protocol_version = version
        self.versions.append(version)

    async def send(self, message: dict[str, Any]) -> None:
        headers = dict(self.message_headers(message)) if self.message_headers is not None else {}
        self.sent_headers.append((message.get("method"), headers))
        await super().send(message)


def make_modern(server: FakeServer, *, supported: list[str] | None = None) -> None:
    """Turn the fake into a modern-only server that checks `_meta` on every request."""
    del server.handlers["initialize"]
    versions = supported or [MODERN]

    def discover(params: Any) -> Any:
        check_meta(params)
        return {"resultType": "complete", "supportedVersions": versions, "capabilities": {"tools": {}},
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "modern", "version": "2"}},
                "instructions": "Be modern."}

    server.on("server/discover", discover)


def check_meta(params: Any) -> None:
    meta = (params or {}).get("_meta") or {}
    if meta.get(META_VERSION) != MODERN or not isinstance(meta.get(META_CAPS), dict):
        raise RpcFailure(-32602, "missing _meta")


@pytest.fixture
async def modern() -> AsyncIterator[tuple[HeaderTransport, FakeServer]]:
    transport = HeaderTransport(server="mem")
    server = FakeServer(transport)
    server.start()
    make_modern(server)
    yield transport, server
    await server.stop()


@pytest.fixture
async def pair() -> AsyncIterator[tuple[MemoryTransport, FakeServer]]:
    transport, server = memory_pair()
    yield transport, server
    await server.stop()


# ---- era choice ------------------------------------------------------------------------------------------------


async def test_auto_adopts_a_modern_server(modern: tuple[HeaderTransport, FakeServer], tmp_path: Path) -> None:
    transport, server = modern
    memory = EraMemory(tmp_path / "eras.json")
    server.on("tools/list", lambda p: (check_meta(p), {"tools": [HEADER_TOOL]})[1])
    client = McpClient(transport, name="mem", era_memory=memory, era_key="k")
    await client.connect(timeout_s=5)
    try:
        assert (client.era, client.protocol_version) == ("modern", MODERN)
        assert client.server_info == {"name": "modern", "version": "2"}
        assert client.server_capabilities == {"tools": {}} and client.instructions == "Be modern."
        assert transport.protocol_version == MODERN
        assert [t.name for t in await client.list_tools()] == ["sql"]
        assert not server.messages("initialize") and not server.messages("notifications/initialized")
        for message in server.received:
            meta = message["params"]["_meta"]
            assert meta[META_VERSION] == MODERN and meta[META_CAPS] == {}
            assert meta[META_INFO]["name"] == "mini-claude"
        assert memory.recall("k") == EraRecord("modern", MODERN)
    finally:
        await client.close()


async def test_auto_falls_back_to_initialize(pair: tuple[MemoryTransport, FakeServer], tmp_path: Path) -> None:
    transport, server = pair  # the plain fake answers server/discover with -32601
    memory = EraMemory(tmp_path / "eras.json")
    client = McpClient(transport, name="mem", era_memory=memory)
    await client.connect(timeout_s=5)
    assert (client.era, client.protocol_version) == ("legacy", "2025-11-25")
    assert [m["method"] for m in server.received[:2]] == ["server/discover", "initialize"]
    assert "_meta" not in (server.messages("initialize")[0]["params"])
    await client.close()
    assert memory.recall("mem") == EraRecord("legacy", "2025-11-25")

    # remembered: the next connection goes straight to initialize
    transport2, server2 = memory_pair()
    client2 = McpClient(transport2, name="mem", era_memory=memory)
    await client2.connect(timeout_s=5)
    assert server2.received[0]["method"] == "initialize"
    assert not server2.messages("server/discover")
    await client2.close()
    await server2.stop()


async def test_remembered_legacy_but_now_modern_reprobes(modern: tuple[HeaderTransport, FakeServer],
                                                         tmp_path: Path) -> None:
    transport, server = modern

    def refuse(_params: Any) -> Any:
        raise RpcFailure(-32022, "Unsupported protocol version", {"supported": [MODERN]})

    server.on("initialize", refuse)
    memory = EraMemory(tmp_path / "eras.json")
    memory.remember("mem", "legacy", "2025-11-25")
    client = McpClient(transport, name="mem", era_memory=memory)
    await client.connect(timeout_s=5)
    assert client.era == "modern"
    assert memory.recall("mem") == EraRecord("modern", MODERN)
    await client.close()


@pytest.mark.parametrize("reply", [
    RpcFailure(-32600, "Bad Request: Server not initialized"),
    RpcFailure(-32602, "Invalid params"),
    RpcFailure(-32000, "Server not initialized"),
    # codes the modern protocol defines, but a legacy server may use them for anything: not modern evidence
    RpcFailure(-32001, "Server not initialized"),
    RpcFailure(-32003, "Server not initialized"),
    RpcFailure(-32020, "Server not initialized"),
    RpcFailure(-32022, "Unsupported protocol version", {"supported": ["2025-06-18"]}),
    RpcFailure(-32022, "Unsupported protocol version", {"supported": ["2031-01-01"]}),
    RpcFailure(-32022, "Unsupported protocol version"),
])
async def test_auto_fallback_answers(pair: tuple[MemoryTransport, FakeServer], reply: RpcFailure) -> None:
    transport, server = pair

    def discover(_params: Any) -> Any:
        raise reply

    server.on("server/discover", discover)
    client = McpClient(transport, name="mem")
    began = asyncio.get_running_loop().time()
    await client.connect(timeout_s=5)
    assert asyncio.get_running_loop().time() - began < 0.5  # at once: no grace, no timeout
    assert client.era == "legacy"
    await server.wait_for("notifications/initialized")
    assert [m["method"] for m in server.received] == ["server/discover", "initialize", "notifications/initialized"]
    await client.close()


async def test_a_null_id_error_to_the_probe_falls_back_at_once(pair: tuple[MemoryTransport, FakeServer],
                                                              caplog: pytest.LogCaptureFixture) -> None:
    transport, server = pair

    async def discover(_params: Any) -> Any:
        # what some legacy servers answer to a request before initialize: an error they cannot tie to an id
        await server.send({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "not initialized"}})
        return NO_REPLY

    server.on("server/discover", discover)
    client = McpClient(transport, name="mem")
    began = asyncio.get_running_loop().time()
    await client.connect(timeout_s=30)
    assert asyncio.get_running_loop().time() - began < 0.5
    assert client.era == "legacy"
    assert "error response without id" not in caplog.text
    await client.close()


async def test_an_ignored_probe_is_raced_by_initialize(pair: tuple[MemoryTransport, FakeServer],
                                                       tmp_path: Path) -> None:
    transport, server = pair
    server.on("server/discover", lambda _p: NO_REPLY)  # a legacy server that ignores unknown methods
    memory = EraMemory(tmp_path / "eras.json")
    client = McpClient(transport, name="mem", era_memory=memory)
    began = asyncio.get_running_loop().time()
    await client.connect(timeout_s=30)
    took = asyncio.get_running_loop().time() - began
    assert 0.9 < took < 3  # PROBE_GRACE_S, not the probe timeout
    assert client.era == "legacy" and memory.recall("mem") == EraRecord("legacy", "2025-11-25")
    await client.ping()
    await client.close()
    # the probe was never cancelled (a legacy server never knew it), nor is initialize ever
    assert [m["method"] for m in server.received] == [
        "server/discover", "initialize", "notifications/initialized", "ping"]


async def test_a_slow_modern_server_still_wins_the_race(modern: tuple[HeaderTransport, FakeServer],
                                                        tmp_path: Path) -> None:
    transport, server = modern
    original = server.handlers["server/discover"]

    async def slow_discover(params: Any) -> Any:
        await asyncio.sleep(1.5)
        return original(params)

    server.on("server/discover", slow_discover)  # the racing initialize is refused (-32601) meanwhile
    memory = EraMemory(tmp_path / "eras.json")
    client = McpClient(transport, name="mem", era_memory=memory)
    await client.connect(timeout_s=30)
    try:
        assert (client.era, client.protocol_version) == ("modern", MODERN)
        assert transport.protocol_version == MODERN and transport.message_headers is not None
        assert [m["method"] for m in server.received] == ["server/discover", "initialize"]
        assert memory.recall("mem") == EraRecord("modern", MODERN)
        await client.ping()
        assert server.received[-1]["params"]["_meta"][META_VERSION] == MODERN
    finally:
        await client.close()


async def test_a_server_remembered_modern_gets_no_racing_initialize(modern: tuple[HeaderTransport, FakeServer],
                                                                     tmp_path: Path) -> None:
    transport, server = modern
    original = server.handlers["server/discover"]

    async def slow_discover(params: Any) -> Any:
        await asyncio.sleep(1.5)
        return original(params)

    server.on("server/discover", slow_discover)
    memory = EraMemory(tmp_path / "eras.json")
    memory.remember("mem", "modern", MODERN)
    client = McpClient(transport, name="mem", era_memory=memory)
    await client.connect(timeout_s=30)
    assert client.era == "modern"
    assert [m["method"] for m in server.received] == ["server/discover"]
    await client.close()


async def test_the_probe_retries_an_unsupported_version_it_speaks(modern: tuple[HeaderTransport, FakeServer]
                                                                  ) -> None:
    transport, server = modern
    original = server.handlers["server/discover"]
    refused: list[int] = []

    def discover(params: Any) -> Any:
        if not refused:
            refused.append(1)
            raise RpcFailure(-32022, "Unsupported protocol version", {"supported": [MODERN]})
        return original(params)

    server.on("server/discover", discover)
    client = McpClient(transport, name="mem")
    await client.connect(timeout_s=5)
    assert client.era == "modern" and len(server.messages("server/discover")) == 2
    assert not server.messages("initialize")
    await client.close()


async def test_discover_listing_only_legacy_versions_falls_back(pair: tuple[MemoryTransport, FakeServer]) -> None:
    transport, server = pair
    server.on("server/discover", lambda _p: {"supportedVersions": ["2025-11-25"], "capabilities": {}})
    client = McpClient(transport, name="mem")
    await client.connect(timeout_s=5)
    assert client.era == "legacy"
    await client.close()


async def test_probe_timeout_falls_back(pair: tuple[MemoryTransport, FakeServer]) -> None:
    transport, server = pair
    server.on("server/discover", lambda _p: NO_REPLY)
    client = McpClient(transport, name="mem")
    await client.connect(timeout_s=1)  # the grace is a quarter of it at most
    assert client.era == "legacy"
    await client.close()


async def test_pinned_legacy_never_probes(pair: tuple[MemoryTransport, FakeServer]) -> None:
    transport, server = pair
    client = McpClient(transport, name="mem", protocol_version="2025-06-18")
    await client.connect(timeout_s=5)
    assert client.era == "legacy"
    assert server.received[0]["method"] == "initialize"
    assert server.received[0]["params"]["protocolVersion"] == "2025-06-18"
    await client.close()


async def test_pinned_modern_against_a_legacy_server_fails(pair: tuple[MemoryTransport, FakeServer]) -> None:
    transport, server = pair
    client = McpClient(transport, name="mem", protocol_version=MODERN)
    with pytest.raises(JsonRpcError) as info:
        await client.connect(timeout_s=5)
    assert info.value.code == -32601 and info.value.server == "mem"
    assert not server.messages("initialize")


def test_unknown_pinned_version_is_refused() -> None:
    with pytest.raises(ProtocolError, match="1999-01-01"):
        McpClient(MemoryTransport(), name="mem", protocol_version="1999-01-01")
    assert McpClient(MemoryTransport(), name="mem", protocol_version="auto").requested_protocol_version is None


# ---- -32022 ----------------------------------------------------------------------------------------------------


async def test_unsupported_version_is_retried_once(modern: tuple[HeaderTransport, FakeServer]) -> None:
    transport, server = modern
    refused: list[int] = []
    original = server.handlers["server/discover"]

    def discover(params: Any) -> Any:
        if not refused:
            refused.append(1)
            raise RpcFailure(-32022, "Unsupported protocol version", {"supported": [MODERN], "requested": MODERN})
        return original(params)

    server.on("server/discover", discover)
    client = McpClient(transport, name="mem", protocol_version=MODERN)
    await client.connect(timeout_s=5)
    discovers = server.messages("server/discover")
    assert len(discovers) == 2 and discovers[0]["id"] != discovers[1]["id"]
    assert discovers[1]["params"]["_meta"][META_VERSION] == MODERN == transport.protocol_version
    await client.close()


async def test_no_common_version_is_a_clear_error(modern: tuple[HeaderTransport, FakeServer]) -> None:
    _, server = modern

    def discover(_params: Any) -> Any:
        raise RpcFailure(-32022, "Unsupported protocol version", {"supported": ["2031-01-01"]})

    server.on("server/discover", discover)
    for version in (MODERN, None):
        transport2 = HeaderTransport(server="mem")
        server2 = FakeServer(transport2)
        server2.handlers = dict(server.handlers)
        server2.start()
        client = McpClient(transport2, name="mem", protocol_version=version)
        with pytest.raises(ProtocolError, match="2031-01-01") as info:
            await client.connect(timeout_s=5)
        assert "2026-07-28" in str(info.value)
        await server2.stop()


async def test_unsupported_version_on_a_later_request(modern: tuple[HeaderTransport, FakeServer]) -> None:
    transport, server = modern
    calls: list[Any] = []

    def tools_list(params: Any) -> Any:
        calls.append(params)
        if len(calls) == 1:
            raise RpcFailure(-32022, "Unsupported protocol version", {"supported": [MODERN]})
        if len(calls) == 2:
            return {"tools": [{"name": "a", "inputSchema": {"type": "object"}}]}
        raise RpcFailure(-32022, "Unsupported protocol version", {"supported": ["2031-01-01"]})

    server.on("tools/list", tools_list)
    client = McpClient(transport, name="mem")
    await client.connect(timeout_s=5)
    assert [t.name for t in await client.list_tools()] == ["a"]
    with pytest.raises(ProtocolError, match="2031-01-01") as info:
        await client.list_tools()
    assert info.value.server == "mem"
    await client.close()


# ---- multi-round-trip ------------------------------------------------------------------------------------------


async def test_input_required_is_answered_and_retried(modern: tuple[HeaderTransport, FakeServer]) -> None:
    transport, server = modern
    seen: list[dict[str, Any]] = []

    def call(params: Any) -> Any:
        seen.append(params)
        if params["name"] == "plain":
            return {"content": [{"type": "text", "text": "plain"}]}  # no resultType: complete
        if "inputResponses" not in params:
            return {"resultType": "input_required", "requestState": "opaque-1", "inputRequests": {
                "confirm": {"method": "elicitation/create", "params": {"message": "ok?", "requestedSchema": {
                    "type": "object", "properties": {"confirmed": {"type": "boolean"}}}}},
                "roots": {"method": "roots/list", "params": {}}}}
        if params.get("requestState") == "opaque-1":
            return {"resultType": "incomplete", "inputRequests": {
                "again": {"method": "elicitation/create", "params": {"message": "sure?"}}}}
        return {"resultType": "complete", "content": [{"type": "text", "text": "done"}]}

    server.on("tools/call", call)
    client = McpClient(transport, name="mem")
    asked: list[Any] = []

    async def elicit(params: Any) -> Any:
        asked.append(params["message"])
        return {"action": "accept", "content": {"confirmed": True}}

    async def roots(_params: Any) -> Any:
        return {"roots": [{"uri": "file:///w"}]}

    client.set_request_handler("elicitation/create", elicit)
    client.set_request_handler("roots/list", roots)
    await client.connect(timeout_s=5)
    result = await client.call_tool("t", {"x": 1})
    assert result.content == [{"type": "text", "text": "done"}]
    assert asked == ["ok?", "sure?"]
    assert seen[1]["requestState"] == "opaque-1" and seen[1]["arguments"] == {"x": 1}
    assert seen[1]["inputResponses"] == {"confirm": {"action": "accept", "content": {"confirmed": True}},
                                         "roots": {"roots": [{"uri": "file:///w"}]}}
    assert "requestState" not in seen[2]  # the second incomplete result had none: not echoed
    assert set(seen[2]["inputResponses"]) == {"again"}
    ids = [m["id"] for m in server.messages("tools/call")]
    assert len(set(ids)) == 3  # each retry is a new request
    assert (await client.call_tool("plain", {})).content[0]["text"] == "plain"
    assert "inputResponses" not in seen[3] and "requestState" not in seen[3]  # no leak into other requests
    caps = server.messages("tools/call")[0]["params"]["_meta"][META_CAPS]
    assert caps == {"elicitation": {}, "roots": {"listChanged": True}}
    await client.close()


async def test_endless_input_rounds_are_bounded(modern: tuple[HeaderTransport, FakeServer]) -> None:
    transport, server = modern
    server.on("tools/call", lambda _p: {"resultType": "input_required", "requestState": "again"})
    client = McpClient(transport, name="mem")
    await client.connect(timeout_s=5)
    with pytest.raises(ProtocolError, match="still asks for input"):
        await client.call_tool("t", {})
    assert len(server.messages("tools/call")) == 11
    await client.close()


async def test_input_request_without_a_handler_is_a_protocol_error(
        modern: tuple[HeaderTransport, FakeServer]) -> None:
    transport, server = modern
    server.on("tools/call", lambda _p: {"resultType": "input_required", "inputRequests": {
        "s": {"method": "sampling/createMessage", "params": {}}}})
    client = McpClient(transport, name="mem")
    await client.connect(timeout_s=5)
    with pytest.raises(ProtocolError, match="sampling/createMessage"):
        await client.call_tool("t", {})
    await client.close()


async def test_progress_follows_the_retry(modern: tuple[HeaderTransport, FakeServer]) -> None:
    transport, server = modern

    async def call(params: Any) -> Any:
        if "requestState" not in params:
            return {"resultType": "input_required", "requestState": "s"}
        token = params["_meta"]["progressToken"]
        await server.notify("notifications/progress", {"progressToken": token, "progress": 1, "total": 2})
        await asyncio.sleep(0.05)
        return {"content": []}

    server.on("tools/call", call)
    client = McpClient(transport, name="mem")
    await client.connect(timeout_s=5)
    got: list[tuple[float, float | None, str | None]] = []
    await client.call_tool("t", {}, on_progress=lambda *a: got.append(a))
    assert got == [(1.0, 2.0, None)]
    await client.close()


# ---- caching and headers ---------------------------------------------------------------------------------------


async def test_ttl_caches_lists_until_list_changed(modern: tuple[HeaderTransport, FakeServer]) -> None:
    transport, server = modern
    ttl = {"tools/list": 60_000}
    server.on("tools/list", lambda _p: {"tools": [HEADER_TOOL], "ttlMs": ttl["tools/list"], "cacheScope": "private"})
    server.on("prompts/list", lambda _p: {"prompts": [{"name": "p"}], "ttlMs": 0})
    client = McpClient(transport, name="mem")
    await client.connect(timeout_s=5)
    await client.list_tools()
    await client.list_tools()
    assert len(server.messages("tools/list")) == 1  # served from the cache
    await server.notify("notifications/tools/list_changed")
    await server.barrier()  # the client has dispatched the notification
    ttl["tools/list"] = 0
    await client.list_tools()
    await client.list_tools()
    assert len(server.messages("tools/list")) == 3  # invalidated, then ttl 0: not cached
    await client.list_prompts()
    await client.list_prompts()
    assert len(server.messages("prompts/list")) == 2
    await client.close()


class _ListClock:
    """The clock the list cache reads (`asyncio.get_running_loop().time()` in `mini_claude.mcp.lists`), moved by hand:
    on a loaded machine 50 ms of wall time can pass between two calls, which made a cached listing expire early."""

    def __init__(self) -> None:
        self.now = 1000.0

    def get_running_loop(self) -> _ListClock:
        return self

    def time(self) -> float:
        return self.now


async def test_ttl_expires(modern: tuple[HeaderTransport, FakeServer], monkeypatch: pytest.MonkeyPatch) -> None:
    transport, server = modern
    server.on("tools/list", lambda _p: {"tools": [], "ttlMs": 50})
    client = McpClient(transport, name="mem")
    await client.connect(timeout_s=5)
    clock = _ListClock()
    monkeypatch.setattr(lists, "asyncio", clock)
    await client.list_tools()
    await client.list_tools()
    assert len(server.messages("tools/list")) == 1  # served from the cache
    clock.now += 0.049
    await client.list_tools()
    assert len(server.messages("tools/list")) == 1  # still within the 50 ms
    clock.now += 0.002
    await client.list_tools()
    assert len(server.messages("tools/list")) == 2  # expired: listed again
    await client.close()


async def test_invalid_header_tools_are_dropped_and_headers_mirrored(
        modern: tuple[HeaderTransport, FakeServer], caplog: pytest.LogCaptureFixture) -> None:
    transport, server = modern
    schema_2020 = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
                   "$defs": {"id": {"type": "string"}}, "properties": {"id": {"$ref": "#/$defs/id"},
                   "p": {"$ref": "https://example.invalid/schema.json"}}, "prefixItems": [],
                   "unevaluatedProperties": False}
    server.on("tools/list", lambda _p: {"tools": [HEADER_TOOL, BAD_TOOL, {"name": "s", "inputSchema": schema_2020}]})
    server.on("tools/call", lambda _p: {"content": []})
    client = McpClient(transport, name="mem")
    await client.connect(timeout_s=5)
    tools = await client.list_tools()
    assert [t.name for t in tools] == ["sql", "s"]
    assert tools[1].input_schema == schema_2020  # verbatim
    assert "ignoring tool 'bad'" in caplog.text and "Score" in caplog.text
    await client.call_tool("sql", {"region": "eu west", "query": "SELECT 1"})
    method, headers = transport.sent_headers[-1]
    assert method == "tools/call"
    assert headers == {"Mcp-Method": "tools/call", "Mcp-Name": "sql", "Mcp-Param-Region": "eu west"}
    assert transport.sent_headers[0] == ("server/discover", {"Mcp-Method": "server/discover"})
    await client.close()


async def test_fallback_unsets_the_modern_transport_state(tmp_path: Path) -> None:
    transport = HeaderTransport(server="mem")
    server = FakeServer(transport)
    server.start()
    client = McpClient(transport, name="mem")
    await client.connect(timeout_s=5)
    assert client.era == "legacy"
    assert transport.versions == [LATEST_MODERN_VERSION, None]
    assert transport.message_headers is None
    await client.close()
    await server.stop()


async def test_a_discover_result_without_modern_versions_is_not_modern(
        pair: tuple[MemoryTransport, FakeServer]) -> None:
    transport, server = pair
    server.on("server/discover", lambda _p: {})  # a legacy server that answers any method with {}
    client = McpClient(transport, name="mem")
    await client.connect(timeout_s=5)
    assert client.era == "legacy"
    await client.close()


# ---- the probe against real stdio processes ---------------------------------------------------------------------

ODD_SERVER = '''
import json, sys, time
mode, log = sys.argv[1], open(sys.argv[2], "a")
if mode == "import-error":
    import mini_claude_missing_dependency  # crashes on startup, before reading anything
if mode == "slow-dual":
    time.sleep(1.5)  # a slow start: both requests are waiting in the pipe by now

def reply(mid, **body):
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": mid, **body}) + "\\n"); sys.stdout.flush()

for line in sys.stdin:
    msg = json.loads(line)
    log.write(msg.get("method", "response") + "\\n"); log.flush()
    method, mid = msg.get("method"), msg.get("id")
    if mid is None:
        continue
    if method == "initialize" and mode == "refuse-init":
        reply(mid, error={"code": -32601, "message": "Method not found: initialize"})
    elif method == "initialize":
        reply(mid, result={"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "odd"}})
    elif method == "server/discover" and mode == "slow-dual":
        reply(mid, result={"supportedVersions": ["2026-07-28", "2025-11-25"], "capabilities": {}})
    elif method == "ping":
        reply(mid, result={})
    elif mode in ("exit", "refuse-init"):  # exit on an unknown method without a word on stdout
        print("unknown method " + method, file=sys.stderr); sys.exit(3)
    elif mode == "refuse-exit":  # refuse an unknown method the legacy way, then exit
        print("unknown method " + method, file=sys.stderr)
        reply(mid, error={"code": -32601, "message": "Method not found"}); sys.exit(3)
'''


def odd_params(tmp_path: Path, mode: str) -> tuple[Any, Path]:
    import sys

    from mini_claude.mcp.transports.stdio import StdioParams

    script, log = tmp_path / "odd_server.py", tmp_path / "received.log"
    script.write_text(ODD_SERVER)
    return StdioParams(command=sys.executable, args=[str(script), mode, str(log)]), log


async def test_a_slow_in_order_server_answers_the_probe_first(tmp_path: Path) -> None:
    from mini_claude.mcp.transports.stdio import StdioTransport

    params, log = odd_params(tmp_path, "slow-dual")
    client = McpClient(StdioTransport(params, server="odd"), name="odd")
    await client.connect(timeout_s=30)
    try:
        assert (client.era, client.protocol_version) == ("modern", MODERN)
        await client.ping()
    finally:
        await client.close()
    # initialize went out after the grace, but its answer came second: ignored, and no notifications/initialized
    assert log.read_text().split() == ["server/discover", "initialize", "ping"]


PIN_HINT = ('; if it is a legacy server that exits on unknown methods, pin "protocolVersion": "2025-11-25" in '
            'its config')


async def connect_error(tmp_path: Path, mode: str, memory: EraMemory | None = None) -> ServerExitedError:
    """Connect (auto era) to the odd server in `mode`; the ServerExitedError it must fail with."""
    from mini_claude.mcp.transports.stdio import StdioTransport

    params, _log = odd_params(tmp_path, mode)
    client = McpClient(StdioTransport(params, server="odd"), name="odd", era_memory=memory)
    with pytest.raises(ServerExitedError) as info:
        await client.connect(timeout_s=30)
    return info.value


async def test_a_server_that_crashes_on_startup_gets_its_own_error_not_a_pin_hint(tmp_path: Path) -> None:
    error = await connect_error(tmp_path, "import-error")
    assert str(error) == ("MCP server 'odd': server exited (exit code 1); stderr: ModuleNotFoundError: No module "
                          "named 'mini_claude_missing_dependency'")


async def test_an_exit_on_the_probe_without_a_legacy_sign_gets_its_own_error(tmp_path: Path) -> None:
    # it may exit on unknown methods, or may have crashed: nothing says which, so no guess
    from mini_claude.mcp.transports.stdio import StdioTransport

    error = await connect_error(tmp_path, "exit")
    assert str(error) == "MCP server 'odd': server exited (exit code 3); stderr: unknown method server/discover"
    assert error.exit_code == 3
    params, log = odd_params(tmp_path, "exit")
    pinned = McpClient(StdioTransport(params, server="odd"), name="odd", protocol_version="2025-11-25")
    await pinned.connect(timeout_s=30)
    assert pinned.era == "legacy"
    await pinned.close()
    # the auto run's probe, then the pinned run: no probe
    assert log.read_text().split() == ["server/discover", "initialize", "notifications/initialized"]


async def test_a_server_that_refuses_the_probe_then_exits_says_how_to_pin(tmp_path: Path) -> None:
    from mini_claude.mcp.config import ServerConfig
    from mini_claude.mcp.manager import McpManager, ServerStatus
    from mini_claude.mcp.transports.stdio import StdioTransport

    error = await connect_error(tmp_path, "refuse-exit")
    assert str(error) == ("MCP server 'odd': server exited during the protocol-era probe (server/discover) (exit "
                          "code 3); stderr: unknown method server/discover" + PIN_HINT)
    assert error.exit_code == 3 and error.stderr_tail.strip() == "unknown method server/discover"

    params, _log = odd_params(tmp_path, "refuse-exit")
    cfg = ServerConfig(name="odd", type="stdio", command=params.command, args=tuple(params.args))
    manager = McpManager([cfg], era_memory=EraMemory(tmp_path / "eras.json"))
    manager.start()
    try:
        await manager.wait_started()
        state = manager.states["odd"]
        assert state.status is ServerStatus.FAILED
        assert state.error is not None and PIN_HINT in state.error
    finally:
        await manager.aclose()
    pinned = McpClient(StdioTransport(params, server="odd"), name="odd", protocol_version="2025-11-25")
    await pinned.connect(timeout_s=30)
    assert pinned.era == "legacy"
    await pinned.ping()
    await pinned.close()


async def test_a_remembered_legacy_server_that_refuses_initialize_is_not_told_to_pin(tmp_path: Path) -> None:
    # re-probed only because it refused initialize at 2025-11-25: pinning that version would not help
    memory = EraMemory(tmp_path / "eras.json")
    memory.remember("odd", "legacy", "2025-11-25")
    error = await connect_error(tmp_path, "refuse-init", memory)
    assert str(error) == "MCP server 'odd': server exited (exit code 3); stderr: unknown method server/discover"
    assert (tmp_path / "received.log").read_text().split() == ["initialize", "server/discover"]
