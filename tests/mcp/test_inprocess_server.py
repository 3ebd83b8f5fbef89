"""In-process MCP servers (`"type": "sdk"`: mini_claude.mcp.server behind an InProcessTransport) go through the same
host as every other server: started by `McpManager` beside a real stdio server (the bundled demo server), their
tools named `mcp__<server>__<tool>` and called through the tool adapter the agent uses, with the `McpHost` serving
what the tool asks while it runs — progress to the UI, logs to the server log, an elicitation to the person (a
scripted UI), a sampling request to the model (the real Anthropic SDK against the mock model server) — and with
cancellation, list_changed, restart and reconnect working. The transport itself: no shared dicts, bounded close,
receive() after close raises. And the round trip is measured (median of 200 calls)."""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from mini_claude.errors import JsonRpcError, McpError, McpTimeoutError, TransportError
from mini_claude.mcp.client import McpClient
from mini_claude.mcp.config_entry import ServerConfig, sdk_server_config
from mini_claude.mcp.host import FormAnswer, McpHost, NoQuestionsUI, SamplingChoice
from mini_claude.mcp.host.ui import FormRequest, SamplingRequest, UrlRequest
from mini_claude.mcp.manager import McpManager, ServerStatus
from mini_claude.mcp.pinning import PinStore
from mini_claude.mcp.server import McpServerCore, ServerTool, ToolCallContext
from mini_claude.mcp.server.outbound import Outbound
from mini_claude.mcp.transports.inprocess import InProcessTransport, NotJsonError, json_copy
from mini_claude.models.anthropic import AnthropicModel
from mini_claude.models.base import Model
from mini_claude.models.mock_server import MockModelServer
from mini_claude.models.scenario import parse_scenario
from mini_claude.permissions import Decision, PermissionGate, PermissionMode, RuleSet
from mini_claude.settings import Settings, SettingsRule
from mini_claude.tools.base import ToolContext, ToolResult
from mini_claude.tools.mcp_tool import McpToolAdapters
from tests.helpers import eventually, server_configs, server_env

pytestmark = pytest.mark.timeout(60)

ROOT = Path(__file__).resolve().parents[2]
NUMBERS = {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
           "required": ["a", "b"]}
EMPTY: dict[str, Any] = {"type": "object", "properties": {}}


class Probe:
    """What the in-process tools saw, and the events a test waits on."""

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.saw_cancel = asyncio.Event()
        self.contexts: list[ToolCallContext] = []


def calc_core(probe: Probe) -> McpServerCore:
    async def add(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": str(args["a"] + args["b"])}],
                "structuredContent": {"sum": args["a"] + args["b"]}}

    async def explode(args: dict[str, Any]) -> dict[str, Any]:
        raise RuntimeError("the flux capacitor is empty")

    async def steps(args: dict[str, Any], ctx: ToolCallContext) -> str:
        for done in (1, 2):
            await ctx.progress(done, 2, f"step {done}")
        return "stepped"

    async def chatty(args: dict[str, Any], ctx: ToolCallContext) -> str:
        await ctx.log("info", {"said": "hello"}, logger="calc.chatty")
        await ctx.log("warning", "the disk is nearly full")
        return "logged"

    async def ask_name(args: dict[str, Any], ctx: ToolCallContext) -> dict[str, Any]:
        answer = await ctx.elicit("What is your name?", {"type": "object", "properties": {
            "name": {"type": "string", "title": "Name"}}, "required": ["name"]})
        return {"content": [{"type": "text", "text": json.dumps(answer, sort_keys=True)}]}

    async def open_page(args: dict[str, Any], ctx: ToolCallContext) -> dict[str, Any]:
        answer = await ctx.elicit_url("Sign in, please", "https://example.com/login", "e-1")
        return {"content": [{"type": "text", "text": json.dumps(answer, sort_keys=True)}]}

    async def ask_model(args: dict[str, Any], ctx: ToolCallContext) -> dict[str, Any]:
        reply = await ctx.sample(args["question"], 50, system_prompt="Answer in one word.")
        return {"content": [{"type": "text", "text": json.dumps(reply, sort_keys=True)}]}

    async def wait_forever(args: dict[str, Any], ctx: ToolCallContext) -> str:
        probe.contexts.append(ctx)
        probe.started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            if ctx.cancelled.is_set():
                probe.saw_cancel.set()
            raise
        return "never"

    tools = [ServerTool.of("add", "Add two numbers.", NUMBERS, add, annotations={"readOnlyHint": True}),
             ServerTool.of("explode", "Always fails.", EMPTY, explode),
             ServerTool.of("steps", "Reports progress.", EMPTY, steps),
             ServerTool.of("chatty", "Logs.", EMPTY, chatty),
             ServerTool.of("ask_name", "Asks the user.", EMPTY, ask_name),
             ServerTool.of("open_page", "Sends the user to a page.", EMPTY, open_page),
             ServerTool.of("ask_model", "Asks the model.", {"type": "object", "properties": {
                 "question": {"type": "string"}}, "required": ["question"]}, ask_model),
             ServerTool.of("wait_forever", "Never ends.", EMPTY, wait_forever)]
    return McpServerCore("calc", "2.0.0", tools, instructions="Use calc for sums.")


class ScriptedUI(NoQuestionsUI):
    interactive = True

    def __init__(self) -> None:
        super().__init__()
        self.forms: list[FormRequest] = []
        self.form_answer = FormAnswer("decline")
        self.sampling: list[SamplingRequest] = []
        self.urls: list[UrlRequest] = []
        self.progressed: list[tuple[str, float, float | None, str | None]] = []

    async def approve_sampling(self, request: SamplingRequest) -> SamplingChoice:
        self.sampling.append(request)
        return SamplingChoice.ONCE

    async def fill_form(self, request: FormRequest) -> FormAnswer:
        self.forms.append(request)
        return self.form_answer

    async def open_url(self, request: UrlRequest) -> str:
        self.urls.append(request)
        return "accept"

    def progress(self, call: str, progress: float, total: float | None, message: str | None) -> None:
        self.progressed.append((call, progress, total, message))


class Session:
    def __init__(self, manager: McpManager, host: McpHost, ui: ScriptedUI, tmp_path: Path) -> None:
        self.manager, self.host, self.ui = manager, host, ui
        self.adapters = McpToolAdapters(manager, host)
        self.ctx = ToolContext(cwd=tmp_path, spill_dir=tmp_path / "spill")

    async def call(self, qualified: str, args: dict[str, Any]) -> ToolResult:
        adapter = next(a for a in self.adapters() if a.name == qualified)
        return await adapter.run(args, self.ctx)


def demo_config() -> ServerConfig:
    return ServerConfig(name="demo", type="stdio", command=sys.executable, args=("-m", "mini_claude.mcp.demo_server"),
                        cwd=str(ROOT))


@asynccontextmanager
async def session(tmp_path: Path, *servers: ServerConfig, model: Model | None = None) -> AsyncIterator[Session]:
    ui = ScriptedUI()
    host = McpHost(ui, roots=[tmp_path], model=lambda: model, log_dir=tmp_path / "logs")
    manager = McpManager(servers, env=server_env(tmp_path), client_setup=host.setup, client_ready=host.ready)
    host.bind(manager)
    manager.start()
    try:
        await manager.wait_started()
        for cfg in servers:
            assert manager.states[cfg.name].status is ServerStatus.READY, manager.states[cfg.name].error
        yield Session(manager, host, ui, tmp_path)
    finally:
        await manager.aclose()


# ---- through the manager and the host, beside a real stdio server ---------------------------------------------


async def test_tools_are_listed_and_called_beside_a_stdio_server(tmp_path: Path) -> None:
    core = calc_core(Probe())
    async with session(tmp_path, sdk_server_config("calc", core), demo_config()) as s:
        names = {entry.tool.name for entry in s.manager.tools() if entry.server == "calc"}
        assert names == {"add", "explode", "steps", "chatty", "ask_name", "open_page", "ask_model", "wait_forever"}
        qualified = {a.name for a in s.adapters()}
        assert {"mcp__calc__add", "mcp__demo__add", "mcp__calc__wait_forever"} <= qualified
        state = s.manager.states["calc"]
        assert state.client is not None and state.client.server_info == {"name": "calc", "version": "2.0.0"}
        assert s.manager.instructions()["calc"] == "Use calc for sums."
        assert [t.annotations for t in state.tools if t.name == "add"] == [{"readOnlyHint": True}]
        ours, theirs = await asyncio.gather(s.call("mcp__calc__add", {"a": 40, "b": 2}),
                                            s.call("mcp__demo__add", {"a": 40, "b": 2}))
        assert not ours.is_error and ours.as_text() == "42"
        assert not theirs.is_error and "42" in theirs.as_text()
        result = await s.manager.call_tool("calc", "add", {"a": 1.5, "b": 2})
        assert result.structured_content == {"sum": 3.5} and not result.is_error
        assert core.sessions == 1
    assert core.sessions == 0  # the manager's shutdown closed the session: nothing left running


async def test_a_raising_handler_and_bad_arguments_give_error_results(tmp_path: Path) -> None:
    async with session(tmp_path, sdk_server_config("calc", calc_core(Probe()))) as s:
        failed = await s.call("mcp__calc__explode", {})
        assert failed.is_error and failed.as_text() == "the flux capacitor is empty"
        bad = await s.call("mcp__calc__add", {"a": 1})
        assert bad.is_error and bad.as_text() == "invalid arguments for add: 'b' is a required property"
        wrong = await s.call("mcp__calc__add", {"a": "one", "b": 2})
        assert wrong.is_error and wrong.as_text() == "invalid arguments for add: 'a': string is not of type number"
        assert (await s.call("mcp__calc__add", {"a": 2, "b": 2})).as_text() == "4"  # the server lives on


async def test_progress_reaches_the_ui(tmp_path: Path) -> None:
    async with session(tmp_path, sdk_server_config("calc", calc_core(Probe()))) as s:
        result = await s.call("mcp__calc__steps", {})
        assert result.as_text() == "stepped"
        assert s.ui.progressed == [("mcp__calc__steps", 1, 2, "step 1"), ("mcp__calc__steps", 2, 2, "step 2")]


async def test_logs_reach_the_server_log_and_warnings_the_screen(tmp_path: Path) -> None:
    cfg = sdk_server_config("calc", calc_core(Probe()), log_level="info")
    async with session(tmp_path, cfg) as s:
        assert (await s.call("mcp__calc__chatty", {})).as_text() == "logged"
        log_text = s.host.logs.path("calc").read_text()
        assert '"said": "hello"' in log_text and "calc.chatty" in log_text
        assert "the disk is nearly full" in log_text
        assert [n for n in s.ui.notices if "disk" in n[1]] != [] and all(n[0] == "calc" for n in s.ui.notices)
    # logLevel "warning" (sent as logging/setLevel) filters the info line out at the server
    cfg = sdk_server_config("calc", calc_core(Probe()), log_level="warning")
    async with session(tmp_path / "second", cfg) as s:
        await s.call("mcp__calc__chatty", {})
        log_text = s.host.logs.path("calc").read_text()
        assert "the disk is nearly full" in log_text and "hello" not in log_text


async def test_an_elicitation_from_a_tool_reaches_the_person(tmp_path: Path) -> None:
    async with session(tmp_path, sdk_server_config("calc", calc_core(Probe()))) as s:
        s.ui.form_answer = FormAnswer("accept", {"name": "Ada"})
        result = await s.call("mcp__calc__ask_name", {})
        assert json.loads(result.as_text()) == {"action": "accept", "content": {"name": "Ada"}}
        [asked] = s.ui.forms
        assert asked.server == "calc" and asked.message == "What is your name?"
        assert asked.schema["properties"] == {"name": {"type": "string", "title": "Name"}}
        s.ui.form_answer = FormAnswer("decline")
        assert json.loads((await s.call("mcp__calc__ask_name", {})).as_text()) == {"action": "decline"}
        assert json.loads((await s.call("mcp__calc__open_page", {})).as_text()) == {"action": "accept"}
        [page] = s.ui.urls
        assert (page.server, page.url, page.elicitation_id) == ("calc", "https://example.com/login", "e-1")


async def test_a_client_without_the_capabilities_gets_error_results_not_requests() -> None:
    client = McpClient(InProcessTransport(calc_core(Probe()), server="calc"), name="calc")  # no host: no handlers
    await client.connect(timeout_s=5)
    try:
        for tool, capability in (("ask_name", "elicitation"), ("ask_model", "sampling")):
            result = await client.call_tool(tool, {"question": "?"} if tool == "ask_model" else {})
            assert result.is_error
            assert result.content == [{"type": "text", "text": f"the client did not declare the {capability!r} "
                                                               f"capability"}]
    finally:
        await client.close()


async def test_a_sampling_request_from_a_tool_reaches_the_model(tmp_path: Path) -> None:
    mock = MockModelServer(parse_scenario({"turns": [{"content": [{"type": "text", "text": "Oslo"}]}]},
                                          source="test"))
    model = AnthropicModel("mock-model", api_key="x", base_url=mock.start())
    try:
        async with session(tmp_path, sdk_server_config("calc", calc_core(Probe())), model=model) as s:
            result = await s.call("mcp__calc__ask_model", {"question": "Capital of Norway?"})
            reply = json.loads(result.as_text())
            assert reply["content"] == {"type": "text", "text": "Oslo"} and reply["model"] == "mock-model"
            assert reply["role"] == "assistant" and reply["stopReason"] == "endTurn"
            body = mock.requests[-1]["body"]
            assert body["max_tokens"] == 50 and body["system"] == "Answer in one word."
            assert body["messages"][0]["content"][0]["text"].endswith("Capital of Norway?")
            assert [r.server for r in s.ui.sampling] == ["calc"]  # the default policy asked the person
    finally:
        await model.aclose()
        mock.stop()


async def test_a_cancelled_call_cancels_the_handler(tmp_path: Path) -> None:
    probe = Probe()
    core = calc_core(probe)
    async with session(tmp_path, sdk_server_config("calc", core)) as s:
        call = asyncio.ensure_future(s.manager.call_tool("calc", "wait_forever", {}))
        await asyncio.wait_for(probe.started.wait(), 5)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        await asyncio.wait_for(probe.saw_cancel.wait(), 5)  # notifications/cancelled reached the server
        assert probe.contexts[0].cancelled.is_set()
        assert (await s.call("mcp__calc__add", {"a": 1, "b": 1})).as_text() == "2"


async def test_tools_added_later_are_announced_by_list_changed(tmp_path: Path) -> None:
    core = calc_core(Probe())
    async with session(tmp_path, sdk_server_config("calc", core)) as s:
        async def triple(args: dict[str, Any]) -> str:
            return str(args["n"] * 3)
        core.add_tool(ServerTool.of("triple", "Triple it.", {"type": "object", "properties": {
            "n": {"type": "integer"}}, "required": ["n"]}, triple))
        await eventually(lambda: "mcp__calc__triple" in {a.name for a in s.adapters()}, "the new tool")
        assert (await s.call("mcp__calc__triple", {"n": 5})).as_text() == "15"
        assert core.remove_tool("triple")
        await eventually(lambda: "mcp__calc__triple" not in {a.name for a in s.adapters()}, "the tool gone")


async def test_restart_and_a_lost_connection_open_fresh_sessions(tmp_path: Path) -> None:
    core = calc_core(Probe())
    async with session(tmp_path, sdk_server_config("calc", core), demo_config()) as s:
        first = s.manager.states["calc"].client
        state = await s.manager.restart("calc")
        assert state.status is ServerStatus.READY and state.client is not first and core.sessions == 1
        assert (await s.call("mcp__calc__add", {"a": 2, "b": 3})).as_text() == "5"
        # the server side ends every connection: the manager restarts it like an exited process, on a new session
        before = state.client
        await core.aclose()
        await eventually(lambda: state.client is not None and state.client is not before and state.lost is None,
                         "the in-process server reconnected", within_s=10)
        assert state.status is ServerStatus.READY and core.sessions == 1
        assert (await s.call("mcp__calc__add", {"a": 4, "b": 3})).as_text() == "7"
        assert s.manager.states["demo"].status is ServerStatus.READY  # the stdio server never noticed


async def test_a_config_file_sdk_entry_without_a_server_object_fails_naming_its_key(tmp_path: Path) -> None:
    [cfg] = server_configs(tmp_path, {"calc": {"type": "sdk"}})
    assert cfg.type == "sdk" and cfg.instance is None
    manager = McpManager([cfg, demo_config()], env=server_env(tmp_path))
    manager.start()
    try:
        await manager.wait_started()
        state = manager.states["calc"]
        assert state.status is ServerStatus.FAILED
        assert state.error == ('mcpServers.calc in --mcp-config is an in-process ("sdk") server, but no server '
                               'object was given for it: pass it in the program\'s mcp_servers (a config file '
                               'cannot hold one)')
        assert manager.states["demo"].status is ServerStatus.READY
    finally:
        await manager.aclose()


# ---- the transport on its own ----------------------------------------------------------------------------------


async def test_the_two_sides_never_share_a_dict_and_close_is_final() -> None:
    kept: list[dict[str, Any]] = []

    async def keep(args: dict[str, Any]) -> dict[str, Any]:
        kept.append(args)
        result = {"content": [{"type": "text", "text": "kept"}], "structuredContent": {"list": [1, 2]}}
        kept.append(result)
        return result

    core = McpServerCore("keep", tools=[ServerTool.of("keep", "Keeps its arguments.", EMPTY, keep)])
    transport = InProcessTransport(core, server="keep")
    client = McpClient(transport, name="keep")
    await client.connect(timeout_s=5)
    arguments: dict[str, Any] = {"nested": {"x": [1]}}
    result = await client.call_tool("keep", arguments)
    kept[0]["nested"]["x"].append(2)  # the server mutates what it got, after the call
    kept[1]["structuredContent"]["list"].append(3)  # and what it returned
    assert arguments == {"nested": {"x": [1]}} and result.structured_content == {"list": [1, 2]}
    await client.close()
    await asyncio.wait_for(transport.close(), 1)  # idempotent, bounded
    with pytest.raises(TransportError):
        await transport.receive()
    with pytest.raises(TransportError):
        await transport.send({"jsonrpc": "2.0", "method": "ping", "id": 1})
    assert core.sessions == 0


async def test_a_result_that_is_not_json_is_an_error_result_not_a_broken_connection() -> None:
    async def odd(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": "x"}], "structuredContent": {"when": object()}}

    core = McpServerCore("odd", tools=[ServerTool.of("odd", "Returns an object.", EMPTY, odd)])
    client = McpClient(InProcessTransport(core, server="odd"), name="odd")
    await client.connect(timeout_s=5)
    try:
        result = await client.call_tool("odd", {})
        assert result.is_error
        assert result.content[0]["text"] == ("the tool returned a value that is not JSON "
                                             "($.structuredContent.when: object is not a JSON value)")
        assert client.is_connected
    finally:
        await client.close()


def test_json_copy_copies_structure_and_refuses_what_json_cannot_carry() -> None:
    value = {"a": [1, {"b": (2.5, None, True)}], "s": "x"}
    copied = json_copy(value)
    assert copied == {"a": [1, {"b": [2.5, None, True]}], "s": "x"}
    assert copied["a"] is not value["a"] and copied["a"][1] is not value["a"][1]
    with pytest.raises(NotJsonError, match=r"\$\.a\[0\]: key 1 is not a string"):
        json_copy({"a": [{1: 2}]})
    with pytest.raises(NotJsonError, match="set is not a JSON value"):
        json_copy({"s": {1}})
    deep: list[Any] = []
    for _ in range(600):
        deep = [deep]
    with pytest.raises(NotJsonError, match="nested too deeply"):
        json_copy(deep)


async def test_a_server_object_that_is_not_one_is_refused() -> None:
    with pytest.raises(TransportError, match="dict is not an MCP server object"):
        InProcessTransport({"type": "sdk"}, server="x")  # type: ignore[arg-type]


async def test_round_trip_median_is_far_below_five_ms() -> None:
    core = calc_core(Probe())
    client = McpClient(InProcessTransport(core, server="calc"), name="calc")
    await client.connect(timeout_s=5)
    try:
        times = []
        for i in range(200):
            began = time.perf_counter()
            result = await client.call_tool("add", {"a": i, "b": 1})
            times.append(time.perf_counter() - began)
            assert result.content == [{"type": "text", "text": str(i + 1)}]
        median_ms = statistics.median(times) * 1000
        print(f"in-process tools/call round trip: median {median_ms:.3f} ms over 200 calls")
        assert median_ms < 5.0
    finally:
        await client.close()


# ---- server -> client requests ----------------------------------------------------------------------------------


async def test_a_server_request_times_out_and_tells_the_client_it_stopped_waiting() -> None:
    pushed: list[dict[str, Any]] = []
    outbound = Outbound(pushed.append, server="calc")
    with pytest.raises(McpTimeoutError):
        await outbound.request("roots/list", None, timeout_s=0.05)
    assert pushed == [{"jsonrpc": "2.0", "id": 1, "method": "roots/list"},
                      {"jsonrpc": "2.0", "method": "notifications/cancelled",
                       "params": {"requestId": 1, "reason": "the server stopped waiting"}}]
    assert not outbound.resolve({"jsonrpc": "2.0", "id": 1, "result": {}})  # a late answer finds nobody


async def test_a_client_error_is_a_json_rpc_error_and_close_fails_what_waits() -> None:
    pushed: list[dict[str, Any]] = []
    outbound = Outbound(pushed.append, server="calc")
    refused = asyncio.ensure_future(outbound.request("sampling/createMessage", {"maxTokens": 1}, timeout_s=5))
    waiting = asyncio.ensure_future(outbound.request("elicitation/create", {}, timeout_s=5))
    await eventually(lambda: len(pushed) == 2, "both requests pushed")
    assert outbound.resolve({"jsonrpc": "2.0", "id": 1, "error": {"code": -1, "message": "User rejected"}})
    with pytest.raises(JsonRpcError) as error:
        await refused
    assert error.value.code == -1 and error.value.rpc_message == "User rejected"
    outbound.fail_all(Outbound.closed_error("calc"))
    with pytest.raises(TransportError, match="the client closed the connection"):
        await waiting
    with pytest.raises(TransportError):  # and every later request, at once
        await outbound.request("roots/list", None, timeout_s=5)
    assert len(pushed) == 2  # nothing more was sent: the connection is gone


async def test_closing_the_client_mid_elicitation_ends_the_handler() -> None:
    probe = Probe()
    outcome: list[str] = []

    async def ask(args: dict[str, Any], ctx: ToolCallContext) -> str:
        probe.started.set()
        try:
            await ctx.elicit("Still there?", {"type": "object", "properties": {}})
        except (TransportError, asyncio.CancelledError) as exc:
            outcome.append(type(exc).__name__)
            raise
        return "answered"

    async def never_answer(_params: Any) -> Any:
        await asyncio.Event().wait()

    core = McpServerCore("ask", tools=[ServerTool.of("ask", "Asks.", EMPTY, ask)])
    client = McpClient(InProcessTransport(core, server="ask"), name="ask")
    client.set_request_handler("elicitation/create", never_answer)
    await client.connect(timeout_s=5)
    call = asyncio.ensure_future(client.call_tool("ask", {}))
    await asyncio.wait_for(probe.started.wait(), 5)
    await asyncio.wait_for(client.close(), 5)
    with pytest.raises(McpError):
        await call
    assert outcome in (["TransportError"], ["CancelledError"]) and core.sessions == 0


async def test_a_changed_tool_definition_is_withheld_by_the_pins(tmp_path: Path) -> None:
    core = calc_core(Probe())
    pins = PinStore(tmp_path / "pins")
    manager = McpManager([sdk_server_config("calc", core)], env=server_env(tmp_path), pins=pins)
    manager.start()
    try:
        await manager.wait_started()
        state = manager.states["calc"]
        assert state.status is ServerStatus.READY and not state.withheld
        original = core.tool("add")
        assert original is not None
        core.add_tool(ServerTool.of("add", "Add two numbers, and send them somewhere.", NUMBERS, original.handler))
        await eventually(lambda: [c.tool.name for c in state.withheld] == ["add"], "the changed tool withheld")
        assert "mcp__calc__add" not in {e.qualified_name for e in manager.tools()}
        with pytest.raises(McpError, match="changed"):
            await manager.call_tool("calc", "add", {"a": 1, "b": 2})
        assert [c.tool.name for c in manager.accept_changed("calc")] == ["add"]
        assert (await manager.call_tool("calc", "add", {"a": 1, "b": 2})).content == [{"type": "text", "text": "3"}]
    finally:
        await manager.aclose()


async def test_permission_rules_name_in_process_tools_like_any_mcp_tool(tmp_path: Path) -> None:
    def gate(allow: tuple[str, ...] = (), deny: tuple[str, ...] = ()) -> PermissionGate:
        settings = Settings(
            permissions_allow=[SettingsRule(t, ".claude/settings.json", f"permissions.allow[{i}]")
                               for i, t in enumerate(allow)],
            permissions_deny=[SettingsRule(t, ".claude/settings.json", f"permissions.deny[{i}]")
                              for i, t in enumerate(deny)])
        return PermissionGate(PermissionMode.DEFAULT, RuleSet.from_settings(settings), ask=None, cwd=tmp_path,
                              home=tmp_path / "home", server_of=s.manager.server_of)

    async with session(tmp_path, sdk_server_config("calc", calc_core(Probe()))) as s:
        add = next(a for a in s.adapters() if a.name == "mcp__calc__add")
        explode = next(a for a in s.adapters() if a.name == "mcp__calc__explode")
        args = {"a": 1, "b": 2}
        assert await gate(allow=("mcp__calc",)).check(add, args) == Decision(
            True, 'allowed by rule "mcp__calc" in .claude/settings.json')
        denied = await gate(allow=("mcp__calc",), deny=("mcp__calc__explode",)).check(explode, {})
        assert not denied.allowed and "mcp__calc__explode" in denied.reason
        assert not (await gate().check(explode, {})).allowed  # no rule, nobody to ask: not run
