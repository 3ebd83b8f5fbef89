"""The MCP Apps host's session side, driven as a browser view would drive it: the real `AppsService` and
`AppBridge` over an in-memory web side (tests/mcp/apps/fakes.py), a recording stand-in for the MCP manager and a
stand-in permission gate (the real gate and hooks are tests/integration/test_apps_session.py's)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from mini_claude.errors import ViewRefusedError
from mini_claude.mcp.apps.channel import EXTENSION_ID, PROTOCOL_VERSION
from mini_claude.mcp.apps.service import AppsService
from mini_claude.mcp.apps.settings import AppsSettings
from mini_claude.mcp.apps.views import RATE_LIMIT
from tests.helpers import eventually
from tests.mcp.apps.bridge_world import (
    SHOW,
    VIEW,
    FakeServers,
    World,
    methods,
    tool,
)
from tests.mcp.apps.fakes import FakeWeb


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
    assert set(caps) == {"openLinks", "downloadFile", "serverTools", "serverResources", "logging", "message",
                         "updateModelContext", "sandbox"}
    assert caps["sandbox"] == {"csp": {}, "permissions": {}}
    context = result["hostContext"]
    assert context["displayMode"] == "inline" and context["availableDisplayModes"] == ["inline", "fullscreen"]
    assert context["locale"] == "de-DE" and context["timeZone"] == "Europe/Berlin"
    assert context["platform"] == "desktop" and context["theme"] in ("light", "dark")
    assert context["toolInfo"] == {"tool": SHOW.raw}
    other = await world.request(view_id, "ui/initialize", {"protocolVersion": "2099-01-01"})
    assert other["result"]["protocolVersion"] == PROTOCOL_VERSION


async def test_full_screen_by_the_views_request_or_the_users_button(world: World) -> None:
    _call, view_id = await world.shown()
    await world.initialized(view_id)

    def changes() -> list[dict[str, Any]]:
        return [m["params"] for m in world.channel.notifications(view_id)
                if m["method"] == "ui/notifications/host-context-changed"]

    answer = await world.request(view_id, "ui/request-display-mode", {"mode": "fullscreen"})
    assert answer["result"] == {"mode": "fullscreen"}
    assert world.channel.modes == [(view_id, "fullscreen")] and changes() == [{"displayMode": "fullscreen"}]
    again = await world.request(view_id, "ui/request-display-mode", {"mode": "fullscreen"})
    assert again["result"] == {"mode": "fullscreen"} and len(world.channel.modes) == 1 and len(changes()) == 1
    world.channel.events.mode_changed(view_id, "inline")  # the user's "Exit full screen" on the page
    assert changes()[-1] == {"displayMode": "inline"} and world.apps.views[0].display_mode == "inline"
    assert len(world.channel.modes) == 1  # the page already shows it so: nothing sent back to it
    world.channel.events.mode_changed("gone", "fullscreen")  # a view the session no longer has: nothing
    assert len(changes()) == 2


async def test_the_pages_colour_scheme_is_each_views_theme(world: World) -> None:
    """The page says its colour scheme: a view initialized later is given it; a live view is told of a change;
    a view answered with the old one before `initialized` is told then; an unchanged scheme sends nothing."""
    _first, live = await world.shown()
    world.channel.events.theme_changed("light")
    assert (await world.initialized(live))["result"]["hostContext"]["theme"] == "light"
    world.channel.events.theme_changed("light")
    assert "ui/notifications/host-context-changed" not in methods(world.channel, live)
    world.channel.events.theme_changed("dark")
    changed = [m for m in world.channel.notifications(live) if m["method"] == "ui/notifications/host-context-changed"]
    assert [m["params"] for m in changed] == [{"theme": "dark"}]

    _second, late = await world.shown()
    answer = await world.request(late, "ui/initialize", {"protocolVersion": PROTOCOL_VERSION})
    assert answer["result"]["hostContext"]["theme"] == "dark"
    world.channel.events.theme_changed("light")  # between its initialize result and its `initialized`: nothing sent yet
    assert world.channel.notifications(late) == []
    await world.channel.post(late, "ui/notifications/initialized", request=False)
    assert [m["params"] for m in world.channel.notifications(late)
            if m["method"] == "ui/notifications/host-context-changed"] == [{"theme": "light"}]


async def test_a_trace_has_every_message_of_a_view_both_ways(world: World) -> None:
    from mini_claude.mcp.trace import tapping

    class Tap:
        def __init__(self) -> None:
            self.lines: list[tuple[str | None, str, Any]] = []

        def record(self, server: str | None, direction: str, message: Any) -> None:
            self.lines.append((server, direction, message))

    with tapping(Tap()) as tap:
        _call, view_id = await world.shown()
    answer = await world.request(view_id, "ping")
    assert isinstance(tap, Tap)
    assert [(s, d, m.get("method", m.get("id"))) for s, d, m in tap.lines] == [
        ("board", "view-recv", "ping"), ("board", "view-send", answer["id"])]


async def test_the_user_is_told_once_a_server_what_its_views_may_not_reach(world: World) -> None:
    from mini_claude.mcp.apps.web_side import LoopbackWeb

    world.web.page = LoopbackWeb().page  # type: ignore[method-assign]  # the real page builder, the fake channel
    world.servers.ui_meta = {"csp": {"connectDomains": ["https://api.example.com", "http://plain.example.com"],
                                     "resourceDomains": ["https://cdn.example.com"]}}
    _call, view_id = await world.shown()
    view = world.apps.views[0]
    assert view.declined_domains == ("https://api.example.com", "https://cdn.example.com")  # not the http one
    assert "connect-src 'none'" in world.channel.pages[view_id].csp
    assert world.front.notes == ['the view of board/show may not reach https://api.example.com, '
                                 'https://cdn.example.com: only what you list in mcpApps.approvedDomains["board"] '
                                 'of ~/.claude/settings.json is allowed']
    await world.shown()
    await eventually(lambda: len(world.apps.views) == 2 and all(v.url for v in world.apps.views), "the second")
    assert len(world.front.notes) == 1  # once a server


async def test_browser_permissions_are_granted_only_as_the_user_approved() -> None:
    from mini_claude.mcp.apps.web_side import LoopbackWeb

    world = World(settings=AppsSettings(open_browser="never", approved_permissions={"board": ("camera",)}))
    try:
        world.web.page = LoopbackWeb().page  # type: ignore[method-assign]
        world.servers.ui_meta = {"permissions": {"camera": {}, "microphone": {}}}
        _call, view_id = await world.shown()
        assert world.channel.pages[view_id].allow == "camera"
        result = (await world.initialized(view_id))["result"]
        assert result["hostCapabilities"]["sandbox"]["permissions"] == {"camera": {}}
        assert world.front.notes == ['the view of board/show may not use microphone: only what you list in '
                                     'mcpApps.approvedPermissions["board"] of ~/.claude/settings.json is allowed']
    finally:
        await world.apps.aclose()


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
    assert (await world.request(view_id, "ui/request-display-mode", {"mode": "pip"}))["result"] == {"mode": "inline"}
    assert world.channel.modes == []  # not a mode of this host: it stays inline
    assert (await world.request(view_id, "ui/no-such-method", {}))["error"]["code"] == -32601
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


async def test_a_download_is_asked_about_then_saved_in_downloads(world: World, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    world.apps.home = home  # ~/Downloads is made on the first download
    _call, view_id = await world.shown()
    init = await world.request(view_id, "ui/initialize", {})
    assert init["result"]["hostCapabilities"]["downloadFile"] == {}
    wanted = {"contents": [{"type": "resource", "resource": {"uri": "ui://board/q3.csv", "mimeType": "text/csv",
                                                             "text": "a,b\n"}},
                           {"type": "resource_link", "uri": VIEW, "name": "board.html"}]}
    said_no = await world.request(view_id, "ui/download-file", wanted)
    assert said_no["result"] == {"isError": True} and list((home / "Downloads").iterdir()) == []
    assert world.front.questions[-1] == (f"The view of board/show asks to save q3.csv (4 B), board.html (12 B) to "
                                         f"{home / 'Downloads'}. Save them?")
    assert world.servers.reads[-1] == ("board", VIEW)  # the link: read from the view's own server
    world.front.confirms = True
    saved = await world.request(view_id, "ui/download-file", wanted)
    assert saved["result"] == {}
    assert (home / "Downloads" / "q3.csv").read_text() == "a,b\n"
    assert (home / "Downloads" / "board.html").read_text() == "<p>board</p>"
    assert world.front.notes[-1].startswith("The view of board/show saved ")
    bad = await world.request(view_id, "ui/download-file", {"contents": "everything"})
    assert bad["error"]["code"] == -32602 and len(world.front.questions) == 2  # refused before any question


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


def test_settings_a_project_may_switch_apps_off_but_never_approve_domains_or_permissions() -> None:
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
    permitted = AppsSettings.from_layers(
        user={"mcpApps": {"approvedPermissions": {"scan": ["camera", 7]}}},
        project={"mcpApps": {"approvedPermissions": {"scan": ["microphone"], "evil": ["camera"]}}},
        local={"mcpApps": {"approvedPermissions": {"evil": ["geolocation"]}}}, flag={})
    assert permitted.permissions_for("scan") == ("camera",) and permitted.permissions_for("evil") == ()


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


