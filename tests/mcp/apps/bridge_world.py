"""The MCP Apps session side in a box, for the bridge tests (test_bridge.py, test_bridge_sampling.py): the real
`AppsService` over an in-memory web side (fakes.py), a recording stand-in for the MCP manager (`FakeServers`),
a stand-in gate and front end; `World` wires them (the `world` fixture: one per test, closed after); `methods` lists what a view was sent."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from mini_claude.errors import McpError
from mini_claude.mcp.apps.channel import MIME_TYPE, PROTOCOL_VERSION
from mini_claude.mcp.apps.service import AppsService, ViewCallAdmission, ViewNotice
from mini_claude.mcp.apps.settings import AppsSettings
from mini_claude.mcp.apps.views import View
from mini_claude.mcp.host import SamplingService
from mini_claude.mcp.protocol import CallToolResult, McpTool
from mini_claude.mcp.server_state import McpToolEntry
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
        item: dict[str, Any] = {"uri": uri, "mimeType": MIME_TYPE, "text": "<p>board</p>"}
        if self.servers.ui_meta is not None:
            item["_meta"] = {"ui": self.servers.ui_meta}
        return [item]


class FakeServers:
    """The MCP manager as the service sees it: the listed tools, and every call and read it was asked for."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, dict[str, Any]]] = []
        self.reads: list[tuple[str, str]] = []
        self.broken = False
        self.ui_meta: dict[str, Any] | None = None  # the view resource's `_meta.ui`

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

    async def confirm(self, question: str, *, server: str = "") -> bool:
        self.questions.append(question)
        return self.confirms


class World:
    def __init__(self, *, answers_teardown: bool = True, deny: tuple[str, ...] = (),
                 sampling: SamplingService | None = None, settings: AppsSettings | None = None) -> None:
        self.servers = FakeServers()
        self.web = FakeWeb(answers_teardown=answers_teardown)
        self.front = FakeFront()
        self.gate = FakeGate(deny)
        self.logged: list[tuple[str, Any]] = []
        self.apps = AppsService(settings or AppsSettings(open_browser="never"), servers=self.servers, web=self.web,
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


def methods(channel: FakeChannel, view_id: str) -> list[str]:
    return [m["method"] for m in channel.notifications(view_id)]


@pytest.fixture
async def world() -> AsyncIterator[World]:
    made = World()
    yield made
    await made.apps.aclose()
