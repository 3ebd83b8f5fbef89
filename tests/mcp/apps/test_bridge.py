"""The MCP Apps host's session side, driven as a browser view would drive it: the real `AppsService` and
`AppBridge` over an in-memory web side (tests/mcp/apps/fakes.py), a recording stand-in for the MCP manager and a
stand-in permission gate (the real gate and hooks are tests/integration/test_apps_session.py's)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from mini_claude.cli.questions.host_ui import sampling_summary
from mini_claude.errors import JsonRpcError, McpError, ViewRefusedError
from mini_claude.mcp.apps.channel import EXTENSION_ID, MIME_TYPE, PROTOCOL_VERSION
from mini_claude.mcp.apps.service import AppsService, ViewCallAdmission, ViewNotice
from mini_claude.mcp.apps.settings import AppsSettings
from mini_claude.mcp.apps.views import RATE_LIMIT, View
from mini_claude.mcp.host import NoQuestionsUI, SamplingChoice, SamplingRequest, SamplingService
from mini_claude.mcp.protocol import CallToolResult, McpTool
from mini_claude.mcp.server_state import McpToolEntry
from mini_claude.models.base import AssistantTurn, GenerationOptions, ToolSpec
from tests.helpers import eventually
from tests.mcp.apps.fakes import FakeChannel, FakeWeb

VIEW = "ui://board/view.html"


def tool(name: str, visibility: list[str] | None = None, view: bool = True) -> McpTool:
    ui: dict[str, Any] = {"resourceUri": VIEW} if view else {}
    if visibility is not None:
        ui["visibility"] = visibility
    built = McpTool.from_wire({"name": name, "inputSchema": {"type": "object"}, "_meta": {"ui": ui}})
    assert built is not None
    return built


SHOW = tool("show", view=True)
TOOLS = {
    "board": [SHOW, tool("secret", ["model"]), tool("bump", ["app"]), tool("wipe", ["model", "app"])],
    "other": [tool("elsewhere", ["app"])],
}


class FakeClient:
    def __init__(self, servers: FakeServers, server: str) -> None:
        self.servers, self.server = servers, server

    async def read_resource(self, uri: str) -> list[dict[str, Any]]:
        if self.servers.broken:
            raise McpError("resources/read failed: boom", server=self.server)
        self.servers.reads.append((self.server, uri))
        return [{"uri": uri, "mimeType": MIME_TYPE, "text": "<p>board</p>"}]


class FakeServers:
    """The MCP manager as the service sees it: the listed tools, and every call and read it was asked for."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, dict[str, Any]]] = []
        self.reads: list[tuple[str, str]] = []
        self.broken = False

    def tools(self) -> list[McpToolEntry]:
        return [McpToolEntry(server, t, f"mcp__{server}__{t.name}") for server, ts in TOOLS.items() for t in ts]

    async def call_tool(self, server: str, tool: str, arguments: dict[str, Any]) -> CallToolResult:
        self.calls.append((server, tool, arguments))
        raw = {"content": [{"type": "text", "text": f"{tool} done"}], "structuredContent": {"n": 1}}
        return CallToolResult.from_wire(raw, tool=tool, server=server)

    async def connected_client(self, server: str) -> FakeClient:
        return FakeClient(self, server)


class FakeGate:
    """Denies the qualified names in `deny`; records what it was asked and what ran after."""

    def __init__(self, deny: tuple[str, ...] = ()) -> None:
        self.deny = deny
        self.asked: list[str] = []
        self.after_calls: list[str] = []

    async def admit(self, entry: McpToolEntry, arguments: dict[str, Any]) -> ViewCallAdmission:
        self.asked.append(entry.qualified_name)
        if entry.qualified_name in self.deny:
            return ViewCallAdmission(False, f"Permission to use {entry.qualified_name} has been denied.")
        return ViewCallAdmission(True, arguments=arguments, call_id="toolu_view_1")

    async def after(self, entry: McpToolEntry, admission: ViewCallAdmission, result: CallToolResult) -> None:
        self.after_calls.append(entry.qualified_name)


class FakeFront:
    def __init__(self, *, confirms: bool = False) -> None:
        self.shown: list[ViewNotice] = []
        self.notes: list[str] = []
        self.messages: list[str] = []
        self.questions: list[str] = []
        self.confirms = confirms

    def view_shown(self, notice: ViewNotice) -> None:
        self.shown.append(notice)

    def note(self, text: str) -> None:
        self.notes.append(text)

    async def user_message(self, view: View, text: str) -> None:
        self.messages.append(text)

    async def confirm(self, question: str) -> bool:
        self.questions.append(question)
        return self.confirms


class World:
    def __init__(self, *, answers_teardown: bool = True, deny: tuple[str, ...] = (),
                 sampling: SamplingService | None = None) -> None:
        self.servers = FakeServers()
        self.web = FakeWeb(answers_teardown=answers_teardown)
        self.front = FakeFront()
        self.gate = FakeGate(deny)
        self.logged: list[tuple[str, Any]] = []
        self.apps = AppsService(AppsSettings(open_browser="never"), servers=self.servers, web=self.web,
                                env={"LANG": "de_DE.UTF-8", "TZ": "Europe/Berlin"}, logs=self,
                                sampling=sampling)
        self.apps.front, self.apps.gate = self.front, self.gate

    @property
    def channel(self) -> FakeChannel:
        return self.web.channel_

    def record(self, server: str, params: Any) -> None:  # the server log (mcp/host/server_log.py's ServerLogs)
        self.logged.append((server, params))

    async def shown(self, tool: McpTool = SHOW, arguments: dict[str, Any] | None = None) -> tuple[Any, str]:
        call = self.apps.begin("board", tool, f"mcp__board__{tool.name}", arguments or {"size": 3})
        assert call is not None
        await eventually(lambda: self.front.shown or self.front.notes, "the view to be shown")
        return call, call.view.view_id

    async def request(self, view_id: str, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        request_id = await self.channel.post(view_id, method, params)
        assert request_id is not None
        await eventually(lambda: self.channel.answer(view_id, request_id), f"the answer to {method}")
        answer = self.channel.answer(view_id, request_id)
        assert answer is not None
        return answer

    async def initialized(self, view_id: str) -> dict[str, Any]:
        answer = await self.request(view_id, "ui/initialize", {"protocolVersion": PROTOCOL_VERSION,
                                                               "appInfo": {"name": "t", "version": "1"},
                                                               "appCapabilities": {}})
        await self.channel.post(view_id, "ui/notifications/initialized", request=False)
        return answer


@pytest.fixture
async def world() -> Any:
    made = World()
    yield made
    await made.apps.aclose()


def methods(channel: FakeChannel, view_id: str) -> list[str]:
    return [m["method"] for m in channel.notifications(view_id)]


async def test_the_extension_is_declared_to_every_server() -> None:
    class Client:
        def __init__(self) -> None:
            self.declared: dict[str, Any] = {}

        def declare_extension(self, name: str, settings: dict[str, Any]) -> None:
            self.declared[name] = settings

    client = Client()
    AppsService(AppsSettings(), servers=FakeServers(), web=FakeWeb()).setup(None, client)
    assert client.declared == {EXTENSION_ID: {"mimeTypes": ["text/html;profile=mcp-app"]}}
    off = Client()
    AppsService(AppsSettings(enabled=False), servers=FakeServers(), web=FakeWeb()).setup(None, off)
    assert off.declared == {}


async def test_a_view_is_fetched_from_its_own_server_and_shown(world: World) -> None:
    _call, view_id = await world.shown()
    assert world.servers.reads == [("board", VIEW)]
    assert world.channel.started and world.channel.pages[view_id].html == "<p>board</p>"
    notice = world.front.shown[0]
    assert (notice.server, notice.tool, notice.view_id) == ("board", "show", view_id)
    assert notice.url == f"http://127.0.0.1:1/tok/v/{view_id}/" and notice.opened is False
    assert world.web.opened == []  # openBrowser "never"


async def test_initialize_answers_every_field(world: World) -> None:
    _call, view_id = await world.shown()
    result = (await world.initialized(view_id))["result"]
    assert result["protocolVersion"] == "2026-01-26"
    assert result["hostInfo"]["name"] == "mini-claude"
    caps = result["hostCapabilities"]
    assert set(caps) == {"openLinks", "serverTools", "serverResources", "logging", "message", "updateModelContext",
                         "sandbox"}
    assert caps["sandbox"] == {"csp": {}, "permissions": {}}
    context = result["hostContext"]
    assert context["displayMode"] == "inline" and context["availableDisplayModes"] == ["inline"]
    assert context["locale"] == "de-DE" and context["timeZone"] == "Europe/Berlin"
    assert context["platform"] == "desktop" and context["theme"] in ("light", "dark")
    assert context["toolInfo"] == {"tool": SHOW.raw}
    other = await world.request(view_id, "ui/initialize", {"protocolVersion": "2099-01-01"})
    assert other["result"]["protocolVersion"] == PROTOCOL_VERSION


async def test_nothing_is_sent_before_initialized_then_input_before_result(world: World) -> None:
    call, view_id = await world.shown()
    call.finish(await world.servers.call_tool("board", "show", {}))
    await world.request(view_id, "ui/initialize", {"protocolVersion": PROTOCOL_VERSION})
    assert world.channel.notifications(view_id) == []  # the result waits for `initialized`
    await world.channel.post(view_id, "ui/notifications/initialized", request=False)
    sent = world.channel.notifications(view_id)
    assert [m["method"] for m in sent] == ["ui/notifications/tool-input", "ui/notifications/tool-result"]
    assert sent[0]["params"] == {"arguments": {"size": 3}}
    assert sent[1]["params"]["content"] == [{"type": "text", "text": "show done"}]
    assert sent[1]["params"]["structuredContent"] == {"n": 1}  # the whole CallToolResult


async def test_a_reload_starts_over_and_replays(world: World) -> None:
    call, view_id = await world.shown()
    await world.initialized(view_id)
    assert methods(world.channel, view_id) == ["ui/notifications/tool-input"]  # the call has not ended
    call.finish(await world.servers.call_tool("board", "show", {}))
    assert methods(world.channel, view_id)[-1] == "ui/notifications/tool-result"
    await world.request(view_id, "ui/initialize", {})  # the page was reloaded
    before = len(world.channel.notifications(view_id))
    await world.channel.post(view_id, "ui/notifications/initialized", request=False)
    assert methods(world.channel, view_id)[before:] == ["ui/notifications/tool-input",
                                                        "ui/notifications/tool-result"]


async def test_an_interrupted_call_is_cancelled_in_the_view(world: World) -> None:
    call, view_id = await world.shown()
    await world.initialized(view_id)
    call.cancel("the tool call was interrupted")
    last = world.channel.notifications(view_id)[-1]
    assert last == {"jsonrpc": "2.0", "method": "ui/notifications/tool-cancelled",
                    "params": {"reason": "the tool call was interrupted"}}
    call.finish(await world.servers.call_tool("board", "show", {}))  # too late: nothing more
    assert methods(world.channel, view_id)[-1] == "ui/notifications/tool-cancelled"


async def test_teardown_is_a_request_answered_then_the_channel_closes(world: World) -> None:
    _call, view_id = await world.shown()
    await world.initialized(view_id)
    started = time.monotonic()
    await world.apps.aclose()
    assert time.monotonic() - started < 1.5  # the view answered
    teardown = [m for m in world.channel.sent[view_id] if m.get("method") == "ui/resource-teardown"]
    assert len(teardown) == 1 and isinstance(teardown[0]["id"], int)
    assert teardown[0]["params"] == {"reason": "the session ended"}
    assert world.channel.closed and view_id in world.channel.removed


async def test_teardown_waits_at_most_two_seconds_for_a_silent_view() -> None:
    world = World(answers_teardown=False)
    _call, view_id = await world.shown()
    await world.initialized(view_id)
    started = time.monotonic()
    await world.apps.aclose()
    waited = time.monotonic() - started
    assert 1.9 <= waited < 3.5
    assert [m.get("method") for m in world.channel.sent[view_id]][-1] == "ui/resource-teardown"
    assert world.channel.closed


@pytest.mark.parametrize(("name", "why"), [
    ("secret", "not for views"),  # visibility ["model"]
    ("elsewhere", "has no tool"),  # another server's tool
    ("mcp__other__elsewhere", "has no tool"),  # another server's, by its qualified name
    ("wipe", "has been denied"),  # a deny rule
])
async def test_a_view_tool_call_is_refused_and_the_server_never_sees_it(name: str, why: str) -> None:
    world = World(deny=("mcp__board__wipe",))
    _call, view_id = await world.shown()
    await world.initialized(view_id)
    answer = await world.request(view_id, "tools/call", {"name": name, "arguments": {}})
    assert answer["error"]["code"] == -32000 and why in answer["error"]["message"]
    assert world.servers.calls == []
    await world.apps.aclose()


async def test_an_app_only_tool_is_called_through_the_gate(world: World) -> None:
    _call, view_id = await world.shown()
    await world.initialized(view_id)
    answer = await world.request(view_id, "tools/call", {"name": "bump", "arguments": {"by": 2}})
    assert answer["result"]["content"] == [{"type": "text", "text": "bump done"}]
    assert answer["result"]["structuredContent"] == {"n": 1}
    assert world.gate.asked == ["mcp__board__bump"] and world.gate.after_calls == ["mcp__board__bump"]
    assert world.servers.calls == [("board", "bump", {"by": 2})]


async def test_without_a_gate_view_tool_calls_are_refused(world: World) -> None:
    world.apps.gate = None
    _call, view_id = await world.shown()
    answer = await world.request(view_id, "tools/call", {"name": "bump"})
    assert "does not run tool calls" in answer["error"]["message"] and world.servers.calls == []


async def test_ui_message_takes_one_block_or_a_list(world: World) -> None:
    _call, view_id = await world.shown()
    one = await world.request(view_id, "ui/message", {"role": "user", "content": {"type": "text", "text": "hi"}})
    many = await world.request(view_id, "ui/message", {"role": "user", "content": [
        {"type": "text", "text": "first"}, {"type": "text", "text": "second"}]})
    assert one["result"] == {} and many["result"] == {}
    assert world.front.messages == ["hi", "first\nsecond"]
    image = await world.request(view_id, "ui/message", {"role": "user", "content": [{"type": "image", "data": ""}]})
    huge = await world.request(view_id, "ui/message", {"role": "user",
                                                       "content": {"type": "text", "text": "x" * 20_000}})
    assert image["error"]["code"] == -32602 and huge["error"]["code"] == -32602
    assert len(world.front.messages) == 2


async def test_update_model_context_last_one_wins_once(world: World) -> None:
    _call, view_id = await world.shown()
    for text in ("first", "second"):
        answer = await world.request(view_id, "ui/update-model-context",
                                     {"content": [{"type": "text", "text": text}]})
        assert answer["result"] == {}
    blocks = world.apps.take_model_context()
    assert len(blocks) == 1 and "second" in blocks[0]["text"] and "first" not in blocks[0]["text"]
    assert world.apps.take_model_context() == []  # attached once


async def test_small_requests_and_unknown_ones(world: World) -> None:
    _call, view_id = await world.shown()
    assert (await world.request(view_id, "ping"))["result"] == {}
    assert (await world.request(view_id, "ui/request-display-mode", {"mode": "fullscreen"}))["result"] == {
        "mode": "inline"}
    assert (await world.request(view_id, "ui/download-file", {}))["error"]["code"] == -32601
    read = await world.request(view_id, "resources/read", {"uri": VIEW})
    assert read["result"]["contents"][0]["text"] == "<p>board</p>" and world.servers.reads[-1] == ("board", VIEW)


async def test_links_are_http_only_and_asked_about(world: World) -> None:
    _call, view_id = await world.shown()
    bad = await world.request(view_id, "ui/open-link", {"url": "file:///etc/passwd"})
    assert "only http(s)" in bad["error"]["message"] and world.front.questions == []
    refused = await world.request(view_id, "ui/open-link", {"url": "https://example.com/a"})
    assert "did not open" in refused["error"]["message"]
    assert world.front.questions and "https://example.com/a" in world.front.questions[0]
    world.front.confirms = True
    opened = await world.request(view_id, "ui/open-link", {"url": "https://example.com/b"})
    assert opened["result"] == {} and world.web.opened == ["https://example.com/b"]


async def test_a_view_that_asks_to_close_is_torn_down(world: World) -> None:
    _call, view_id = await world.shown()
    await world.initialized(view_id)
    await world.channel.post(view_id, "ui/notifications/request-teardown", request=False)
    await eventually(lambda: view_id in world.channel.removed, "the view to be removed")
    assert world.apps.views == []


async def test_a_failed_fetch_costs_only_the_view(world: World) -> None:
    world.servers.broken = True
    call, _view_id = await world.shown()
    assert world.front.shown == [] and "could not be shown" in world.front.notes[0] and "boom" in world.front.notes[0]
    call.finish(await world.servers.call_tool("board", "show", {}))  # the tool call goes on unharmed
    assert world.apps.views == []


async def test_a_runaway_view_is_slowed_down(world: World) -> None:
    _call, view_id = await world.shown()
    answers = [await world.request(view_id, "ping") for _ in range(RATE_LIMIT + 1)]
    assert all("result" in a for a in answers[:RATE_LIMIT]) and answers[RATE_LIMIT]["error"]["code"] == -32000
    assert "too many requests" in answers[RATE_LIMIT]["error"]["message"]


async def test_no_view_without_a_ui_resource_or_with_apps_off(world: World) -> None:
    assert world.apps.begin("board", tool("plain", view=False), "mcp__board__plain", {}) is None
    off = AppsService(AppsSettings(enabled=False), servers=FakeServers(), web=FakeWeb())
    assert off.begin("board", SHOW, "mcp__board__show", {}) is None


async def test_at_most_32_views_live_at_once(world: World) -> None:
    calls = [world.apps.begin("board", SHOW, "mcp__board__show", {}) for _ in range(33)]
    assert len(world.apps.views) == 32
    first = calls[0]
    assert first is not None and first.view not in world.apps.views  # the oldest went
    await eventually(lambda: len(world.front.shown) == 32, "the 32 live views to be shown")
    assert first.view.view_id not in world.channel.pages and len(world.channel.pages) == 32


def test_the_refusal_carries_its_code() -> None:
    err = ViewRefusedError("nope", code=-32602)
    assert err.code == -32602 and err.reason == "nope" and str(err) == "nope"


async def test_settings_a_project_may_switch_apps_off_but_never_approve_domains() -> None:
    settings = AppsSettings.from_layers(
        user={"mcpApps": {"approvedDomains": {"map": ["https://tiles.example"]}, "openBrowser": "never"}},
        project={"mcpApps": {"enabled": False, "approvedDomains": {"map": ["https://evil.example"]}}},
        local={}, flag={})
    assert settings.enabled is False and settings.open_browser == "never"
    assert settings.approved_for("map") == ("https://tiles.example",)
    assert AppsSettings.from_layers(user={}, project={"mcpApps": {"enabled": True}}, local={},
                                    flag={"mcpApps": {"enabled": False}}).enabled is False
    assert AppsSettings.from_layers(user={"mcpApps": {"enabled": False}}, project={"mcpApps": {"enabled": True}},
                                    local={}, flag={}).enabled is False
    await asyncio.sleep(0)


async def test_a_views_log_goes_to_its_servers_log_and_size_changes_need_nothing(world: World) -> None:
    _call, view_id = await world.shown()
    await world.channel.post(view_id, "notifications/message", {"level": "info", "data": "clicked"}, request=False)
    await world.channel.post(view_id, "ui/notifications/size-changed", {"height": 300}, request=False)
    assert world.logged == [("board", {"level": "info", "data": "clicked"})]
    assert world.channel.sent.get(view_id, []) == []  # notifications get no answer


async def test_malformed_messages_get_errors_never_a_crash(world: World) -> None:
    _call, view_id = await world.shown()
    inbox = world.channel.inbox
    for message in ({"jsonrpc": "2.0", "id": 90, "method": "tools/call", "params": "nope"},
                    {"jsonrpc": "2.0", "id": 91, "method": "tools/call", "params": {"name": "bump", "arguments": []}},
                    {"jsonrpc": "2.0", "id": 92, "method": "ui/open-link", "params": {"url": 5}},
                    {"jsonrpc": "2.0", "id": 93, "method": "ui/message", "params": {"role": "assistant",
                                                                                    "content": []}},
                    {"jsonrpc": "2.0", "id": 94, "method": "ui/update-model-context", "params": {"content": "x"}},
                    {"jsonrpc": "2.0", "id": True, "method": "ping"},  # no usable id: a notification, unanswered
                    {"jsonrpc": "2.0", "id": 95, "result": {}},  # an answer to nothing of ours
                    {"jsonrpc": "2.0", "method": 7}):
        await inbox(view_id, message)
    for request_id in range(90, 95):
        await eventually(lambda rid=request_id: world.channel.answer(view_id, rid), f"the answer to {request_id}")
        answer = world.channel.answer(view_id, request_id)
        assert answer is not None and answer["error"]["code"] == -32602, answer
    assert world.servers.calls == [] and world.front.messages == []
    assert all(m.get("id") is not True for m in world.channel.sent[view_id])


# ---- sampling from a view: the view's server's own policy --------------------------------------------------------


class AnsweringModel:
    name = "model-x"

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    async def complete(self, *, system: str, messages: list[dict[str, Any]], tools: list[ToolSpec],
                       on_text: Any = None, options: GenerationOptions | None = None) -> AssistantTurn:
        self.calls.append({"system": system, "messages": messages, "options": options})
        return AssistantTurn([{"type": "text", "text": "four"}], "end_turn")


class AnsweringUI(NoQuestionsUI):
    """The user's answers to sampling questions, in order; what they were shown."""

    interactive = True

    def __init__(self, answers: list[SamplingChoice]) -> None:
        super().__init__()
        self.answers = answers
        self.asked: list[SamplingRequest] = []

    async def approve_sampling(self, request: SamplingRequest) -> SamplingChoice:
        self.asked.append(request)
        return self.answers.pop(0)


SAMPLE = {"messages": [{"role": "user", "content": {"type": "text", "text": "2+2?"}}], "maxTokens": 50,
          "systemPrompt": "Be brief."}


async def sampling_world(policy: str, *, answers: list[SamplingChoice] | None = None, ui: Any = None,
                         rate_limit: int = 10) -> tuple[World, AnsweringModel, Any, SamplingService]:
    model = AnsweringModel()
    ui = ui if ui is not None else AnsweringUI(list(answers or []))
    service = SamplingService(lambda: model, ui, policies={"board": policy}, rate_limit=rate_limit)
    return World(sampling=service), model, ui, service


async def test_a_view_samples_under_an_allow_policy_as_its_server_would() -> None:
    world, model, ui, _ = await sampling_world("allow")
    try:
        _, view_id = await world.shown()
        init = await world.initialized(view_id)
        assert init["result"]["hostCapabilities"]["sampling"] == {"tools": {}}
        answer = await world.request(view_id, "sampling/createMessage", SAMPLE)
        assert answer["result"] == {"role": "assistant", "content": {"type": "text", "text": "four"},
                                    "model": "model-x", "stopReason": "endTurn"}
        assert model.calls == [{"system": "Be brief.", "options": GenerationOptions(max_tokens=50),
                                "messages": [{"role": "user", "content": [{"type": "text", "text": "2+2?"}]}]}]
        assert not ui.asked  # allowed: nobody asked
        bad = await world.request(view_id, "sampling/createMessage", {"messages": [], "maxTokens": 5})
        assert bad["error"] == {"code": -32602,  # the server path's own check and words
                                "message": "sampling/createMessage: messages must be a non-empty list"}
        assert len(model.calls) == 1
    finally:
        await world.apps.aclose()


async def test_a_views_sampling_is_asked_marked_as_the_views_and_yes_or_no_holds() -> None:
    world, model, ui, _ = await sampling_world("ask", answers=[SamplingChoice.ONCE, SamplingChoice.DENY])
    try:
        _, view_id = await world.shown()
        init = await world.initialized(view_id)
        assert "sampling" in init["result"]["hostCapabilities"]
        yes = await world.request(view_id, "sampling/createMessage", SAMPLE)
        assert yes["result"]["content"]["text"] == "four" and len(model.calls) == 1
        no = await world.request(view_id, "sampling/createMessage", SAMPLE)
        assert no["error"] == {"code": -1, "message": "User rejected sampling request"}
        assert len(model.calls) == 1
        asked = ui.asked[0]
        assert (asked.server, asked.view, asked.max_tokens, asked.system_prompt) == ("board", "show", 50, "Be brief.")
        assert sampling_summary(asked)[0] == ("MCP server 'board' (through its view of 'show' in the browser) asks "
                                              "the model to answer (up to 50 tokens):")
    finally:
        await world.apps.aclose()


async def test_nobody_to_ask_refuses_a_views_sampling_as_it_would_the_servers() -> None:
    world, model, _, _ = await sampling_world("ask", ui=NoQuestionsUI())
    try:
        _, view_id = await world.shown()
        await world.initialized(view_id)
        answer = await world.request(view_id, "sampling/createMessage", SAMPLE)
        assert answer["error"]["code"] == -1 and not model.calls
    finally:
        await world.apps.aclose()


async def test_a_deny_policy_is_not_advertised_and_refused() -> None:
    world, model, ui, _ = await sampling_world("deny")
    try:
        _, view_id = await world.shown()
        init = await world.initialized(view_id)
        assert "sampling" not in init["result"]["hostCapabilities"]
        answer = await world.request(view_id, "sampling/createMessage", SAMPLE)
        assert answer["error"] == {"code": -1, "message": "User rejected sampling request (sampling is denied "
                                                          "for this server)"}
        assert not model.calls and not ui.asked
    finally:
        await world.apps.aclose()


async def test_without_a_sampler_views_are_not_offered_sampling(world: World) -> None:
    _, view_id = await world.shown()
    init = await world.initialized(view_id)
    assert "sampling" not in init["result"]["hostCapabilities"]
    answer = await world.request(view_id, "sampling/createMessage", SAMPLE)
    assert answer["error"] == {"code": -32000, "message": "this session does not answer sampling requests from views"}


async def test_a_view_and_its_server_share_one_rate_limit() -> None:
    world, model, _, service = await sampling_world("allow", rate_limit=3)
    try:
        _, view_id = await world.shown()
        await world.initialized(view_id)
        await service.create_message("board", SAMPLE)  # the server's own, through its connection
        await service.create_message("board", SAMPLE)
        assert "result" in await world.request(view_id, "sampling/createMessage", SAMPLE)
        over = await world.request(view_id, "sampling/createMessage", SAMPLE)
        assert over["error"] == {"code": -1, "message": "too many sampling requests: at most 3 per 60 s from one "
                                                        "server"}
        with pytest.raises(JsonRpcError, match="too many"):  # and the view's use counts against the server
            await service.create_message("board", SAMPLE)
        assert len(model.calls) == 3
    finally:
        await world.apps.aclose()


async def test_elicitation_from_a_view_is_not_a_method(world: World) -> None:
    _, view_id = await world.shown()
    await world.initialized(view_id)
    answer = await world.request(view_id, "elicitation/create", {"message": "name?", "requestedSchema": {}})
    assert answer["error"]["code"] == -32601
