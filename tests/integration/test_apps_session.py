"""MCP Apps in a real session: the Python API's `Client` against the mock model, a real stdio server with a `ui://`
view (tests/mcp/servers/apps_host_server.py), the real permission gate and tool adapters; only the browser side is
the in-memory web side of tests/mcp/apps/fakes.py, driven here as the view would drive it. `-p` (the CLI) never
declares the extension."""

from __future__ import annotations

import asyncio
import json
import secrets
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from mini_claude.api import Client, Options, ResultMessage, SystemMessage, query
from mini_claude.mcp.apps import service as apps_service
from mini_claude.mcp.apps.channel import EXTENSION_ID
from tests.api.conftest import ApiWorld, call, text
from tests.helpers import eventually
from tests.integration.conftest import ROOT, Cli, answer, result_text, tool_results, tool_use
from tests.mcp.apps.fakes import FakeChannel, FakeWeb

SERVER = {"command": sys.executable, "args": [str(ROOT / "tests" / "mcp" / "servers" / "apps_host_server.py")]}
SETTINGS = {"permissions": {"allow": ["mcp__apps__show_board", "mcp__apps__bump", "mcp__apps__counts"],
                            "deny": ["mcp__apps__wipe"]},
            "mcpApps": {"openBrowser": "never"}}


@pytest.fixture
def world(tmp_path: Path) -> ApiWorld:
    return ApiWorld.made_in(tmp_path)


@pytest.fixture
def web(monkeypatch: pytest.MonkeyPatch) -> FakeWeb:
    fake = FakeWeb()
    monkeypatch.setattr(apps_service, "LoopbackWeb", lambda: fake)
    return fake


class Session:
    """A connected Client whose every message is collected as it comes."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.messages: list[Any] = []
        self._reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        async for message in self.client.receive_messages():
            self.messages.append(message)

    def system(self, subtype: str) -> list[SystemMessage]:
        return [m for m in self.messages if isinstance(m, SystemMessage) and m.subtype == subtype]

    def results(self) -> list[ResultMessage]:
        return [m for m in self.messages if isinstance(m, ResultMessage)]

    async def close(self) -> None:
        await self.client.disconnect()
        await asyncio.wait_for(self._reader, 10)


@asynccontextmanager
async def session(options: Options) -> AsyncIterator[Session]:
    client = Client(options)
    await client.connect()
    running = Session(client)
    try:
        yield running
    finally:
        await running.close()


async def board_view(running: Session, web: FakeWeb) -> tuple[FakeChannel, str]:
    """Ask for the board; once its view is announced and the turn has its result: the view's channel and id."""
    await running.client.query("show me the board")
    await eventually(lambda: running.system("mcp_app_view") and running.results(), "the view and the result",
                     within_s=20)
    return web.channel_, running.system("mcp_app_view")[0].data["view_id"]


async def request(channel: FakeChannel, view_id: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    request_id = await channel.post(view_id, method, params)
    assert request_id is not None
    await eventually(lambda: channel.answer(view_id, request_id), f"the answer to {method}", within_s=15)
    found = channel.answer(view_id, request_id)
    assert found is not None
    return found


async def test_a_view_tool_call_in_a_real_session(world: ApiWorld, mock_model, web: FakeWeb) -> None:
    mock = mock_model([call("mcp__apps__show_board"), text("the board is up"), text("you said: done")])
    options = world.options(mock.url, mcp_servers={"apps": SERVER}, settings=json.dumps(SETTINGS))
    async with session(options) as running:
        await running.client.query("show me the board")
        await eventually(lambda: running.system("mcp_app_view") and running.results(), "the view and the result",
                         within_s=20)
        shown = running.system("mcp_app_view")[0].data
        channel = web.channel_
        view_id = shown["view_id"]
        assert shown["url"] == f"http://127.0.0.1:1/tok/v/{view_id}/" and shown["opened"] is False
        assert (shown["server"], shown["tool"]) == ("apps", "show_board")
        assert "board" in channel.pages[view_id].html
        assert running.results()[0].result == "the board is up"  # the model's turn went on as before

        # the view starts: nothing was sent before `initialized`, then the input, then the whole result
        init = await request(channel, view_id, "ui/initialize", {"protocolVersion": "2026-01-26"})
        assert init["result"]["hostContext"]["toolInfo"]["tool"]["name"] == "show_board"
        assert channel.notifications(view_id) == []
        await channel.post(view_id, "ui/notifications/initialized", request=False)
        sent = channel.notifications(view_id)
        assert [m["method"] for m in sent] == ["ui/notifications/tool-input", "ui/notifications/tool-result"]
        assert sent[0]["params"] == {"arguments": {}}
        assert sent[1]["params"]["structuredContent"] == {"cells": 3}

        # the view's own calls: an app-only tool the rules allow runs; a denied one, a model-only one and one
        # nobody allowed (an "ask" with nobody to answer) are refused, and never reach the server
        bumped = await request(channel, view_id, "tools/call", {"name": "bump", "arguments": {}})
        assert bumped["result"]["content"][0]["text"] == "bumped 1"
        denied = await request(channel, view_id, "tools/call", {"name": "wipe", "arguments": {}})
        assert denied["error"]["code"] == -32000 and 'denied by rule "mcp__apps__wipe"' in denied["error"]["message"]
        secret = await request(channel, view_id, "tools/call", {"name": "secret", "arguments": {}})
        assert "not for views" in secret["error"]["message"]
        asked = await request(channel, view_id, "tools/call", {"name": "caps", "arguments": {}})
        assert "not allowed in non-interactive mode" in asked["error"]["message"]
        assert "a view of MCP server apps ran bump" in world.lines
        assert any(line.startswith("a view of MCP server apps was refused wipe") for line in world.lines)
        counts = await request(channel, view_id, "tools/call", {"name": "counts", "arguments": {}})
        assert json.loads(counts["result"]["content"][0]["text"]) == {"bump": 1, "secret": 0, "wipe": 0}

        # what the view tells the model, then a message from the view: the next turn's user text
        context = await request(channel, view_id, "ui/update-model-context",
                                {"content": [{"type": "text", "text": "selected cell B2"}]})
        assert context["result"] == {}
        sent_message = await request(channel, view_id, "ui/message",
                                     {"role": "user", "content": [{"type": "text", "text": "done"}]})
        assert sent_message["result"] == {}
        await eventually(lambda: len(running.results()) == 2, "the view's turn", within_s=20)
        assert running.results()[1].result == "you said: done"
        last = mock.requests[-1]["body"]["messages"][-1]
        texts = [b["text"] for b in last["content"] if b.get("type") == "text"]
        assert texts[0] == "done" and "selected cell B2" in texts[1]
    # the session's end tore the view down (a request) and closed the web side
    assert any(m.get("method") == "ui/resource-teardown" for m in channel.sent[view_id])
    assert channel.closed


async def test_an_interrupted_call_is_cancelled_in_its_view(world: ApiWorld, mock_model, web: FakeWeb) -> None:
    mock = mock_model([call("mcp__apps__slow_board"), text("never")])
    options = world.options(mock.url, mcp_servers={"apps": SERVER}, allowed_tools=["mcp__apps__slow_board"],
                            settings=json.dumps({"mcpApps": {"openBrowser": "never"}}))
    async with session(options) as running:
        await running.client.query("show it slowly")
        await eventually(lambda: running.system("mcp_app_view"), "the view", within_s=20)
        channel, view_id = web.channel_, running.system("mcp_app_view")[0].data["view_id"]
        await request(channel, view_id, "ui/initialize", {})
        await channel.post(view_id, "ui/notifications/initialized", request=False)
        assert [m["method"] for m in channel.notifications(view_id)] == ["ui/notifications/tool-input"]
        await running.client.interrupt()
        await eventually(lambda: running.results(), "the interrupted turn's result", within_s=20)
        assert [m["method"] for m in channel.notifications(view_id)] == ["ui/notifications/tool-input",
                                                                       "ui/notifications/tool-cancelled"]
        assert channel.notifications(view_id)[-1]["params"] == {"reason": "the tool call was interrupted"}


async def test_the_client_declares_the_extension_unless_switched_off(world: ApiWorld, mock_model,
                                                                     web: FakeWeb) -> None:
    for settings, declared in (({}, True), ({"mcpApps": {"enabled": False}}, False)):
        mock = mock_model([call("mcp__apps__caps"), text("{{last_tool_result}}")])
        options = world.options(mock.url, mcp_servers={"apps": SERVER}, allowed_tools=["mcp__apps__caps"],
                                settings=json.dumps(settings))
        async with session(options) as running:
            await running.client.query("caps?")
            await eventually(lambda: running.results(), "the result", within_s=20)
            caps = json.loads(running.results()[0].result or "{}")
        extensions = caps.get("extensions", {})
        assert (EXTENSION_ID in extensions) is declared, caps
        if declared:
            assert extensions[EXTENSION_ID] == {"mimeTypes": ["text/html;profile=mcp-app"]}
    assert web.channels == []  # caps has no view: nothing was served


async def test_the_permission_callback_is_told_a_view_asks(world: ApiWorld, mock_model, web: FakeWeb) -> None:
    """`can_use_tool` hears which server's view makes a call (`context.view`); the model's own calls say None."""
    from mini_claude.api import PermissionResultAllow, PermissionResultDeny, ToolPermissionContext

    asked: list[tuple[str, str | None]] = []

    async def can_use_tool(name: str, arguments: dict[str, Any], context: ToolPermissionContext) -> Any:
        asked.append((name, context.view))
        return PermissionResultAllow() if context.view is None else PermissionResultDeny(message="not from a page")

    mock = mock_model([call("mcp__apps__show_board"), text("up")])
    options = world.options(mock.url, mcp_servers={"apps": SERVER}, can_use_tool=can_use_tool,
                            settings=json.dumps({"mcpApps": {"openBrowser": "never"}}))
    async with session(options) as running:
        channel, view_id = await board_view(running, web)
        await request(channel, view_id, "ui/initialize", {})
        refused = await request(channel, view_id, "tools/call", {"name": "caps", "arguments": {}})
        assert "not from a page" in refused["error"]["message"]
    assert asked == [("mcp__apps__show_board", None), ("mcp__apps__caps", "apps")]


async def test_one_query_never_declares_the_extension(world: ApiWorld, mock_model, web: FakeWeb) -> None:
    mock = mock_model([call("mcp__apps__caps"), text("{{last_tool_result}}")])
    options = world.options(mock.url, mcp_servers={"apps": SERVER}, allowed_tools=["mcp__apps__caps"])
    messages = [message async for message in query(prompt="caps?", options=options)]
    result = messages[-1]
    assert isinstance(result, ResultMessage)
    assert "extensions" not in json.loads(result.result or "{}")


def test_print_mode_never_declares_the_extension(cli: Cli) -> None:
    mock = cli.mock([tool_use("mcp__apps__caps"), answer("done")])
    result = cli.run("-p", "caps?", "--mcp-config", cli.config_file({"apps": SERVER}),
                     "--allowedTools", "mcp__apps__caps", "mcp__apps__show_board")
    assert result.rc == 0, result.stderr
    caps = json.loads(result_text(tool_results(mock)[0]))
    assert "extensions" not in caps


class PageClient:
    """The session page as a browser would run it, without a browser: the SSE stream of envelopes and the POST relay
    of the real loopback web side (mini_claude/mcp/apps/loopback.py)."""

    def __init__(self, url: str) -> None:
        self.base = url.split("#", 1)[0]
        self.origin = "/".join(self.base.split("/")[:3])
        self.page = secrets.token_hex(16)
        self.envelopes: list[dict[str, Any]] = []
        self.http = httpx.AsyncClient(timeout=10)
        self._answers: list[asyncio.Task[None]] = []
        self._reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        async with self.http.stream("GET", f"{self.base}events", params={"page": self.page}) as response:
            assert response.status_code == 200
            async for line in response.aiter_lines():
                if line.startswith("data: "):
                    envelope = json.loads(line[6:])
                    self.envelopes.append(envelope)
                    message = envelope.get("message") or {}
                    if message.get("method") == "ui/resource-teardown":  # the view answers, as the SDK's do
                        self._answers.append(asyncio.create_task(self.post(
                            envelope["view"], {"jsonrpc": "2.0", "id": message["id"], "result": {}})))

    async def post(self, view_id: str, message: dict[str, Any]) -> None:
        response = await self.http.post(f"{self.base}rpc", json={"page": self.page, "view": view_id,
                                                                   "message": message},
                                        headers={"Origin": self.origin})
        assert response.status_code == 204, response.text

    def messages(self, view_id: str) -> list[dict[str, Any]]:
        return [e["message"] for e in self.envelopes if e.get("view") == view_id and "message" in e]

    async def close(self) -> None:
        self._reader.cancel()
        await asyncio.gather(self._reader, return_exceptions=True)
        await self.http.aclose()


async def test_the_real_web_side_relays_a_view(world: ApiWorld, mock_model) -> None:
    mock = mock_model([call("mcp__apps__show_board"), text("the board is up")])
    options = world.options(mock.url, mcp_servers={"apps": SERVER}, settings=json.dumps(SETTINGS))
    page: PageClient | None = None
    try:
        async with session(options) as running:
            await running.client.query("show me the board")
            await eventually(lambda: running.system("mcp_app_view"), "the view", within_s=20)
            shown = running.system("mcp_app_view")[0].data
            view_id = shown["view_id"]
            assert shown["url"].startswith("http://127.0.0.1:") and shown["url"].endswith(f"#view-{view_id}")
            page = live = PageClient(shown["url"])
            await eventually(lambda: any(e.get("view") == view_id and "added" in e for e in live.envelopes),
                             "the page to get the view")
            await live.post(view_id, {"jsonrpc": "2.0", "id": 1, "method": "ui/initialize",
                                      "params": {"protocolVersion": "2026-01-26"}})
            await eventually(lambda: live.messages(view_id), "the answer to ui/initialize")
            answered = live.messages(view_id)[0]
            assert answered["id"] == 1 and answered["result"]["hostCapabilities"]["sandbox"]["csp"] == {}
            await live.post(view_id, {"jsonrpc": "2.0", "method": "ui/notifications/initialized", "params": {}})
            await eventually(lambda: len(live.messages(view_id)) >= 3, "the tool's input and result")
            methods = [m.get("method") for m in live.messages(view_id)[1:3]]
            assert methods == ["ui/notifications/tool-input", "ui/notifications/tool-result"]
            await live.post(view_id, {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                      "params": {"name": "bump", "arguments": {}}})
            await eventually(lambda: any(m.get("id") == 2 for m in live.messages(view_id)), "the bump")
            bumped = next(m for m in live.messages(view_id) if m.get("id") == 2)
            assert bumped["result"]["content"][0]["text"] == "bumped 1"
            ended = time.monotonic()
        # the session's end: the view was asked to tear down (it answered at once), then the page heard it closed
        assert time.monotonic() - ended < 2.0
        assert any(m.get("method") == "ui/resource-teardown" for m in live.messages(view_id))
        await eventually(lambda: any(e.get("closed") for e in live.envelopes), "the page to hear the end")
    finally:
        if page is not None:
            await page.close()


SAMPLE = {"messages": [{"role": "user", "content": {"type": "text", "text": "What is 2+2?"}}], "maxTokens": 50,
          "systemPrompt": "Answer in one word."}


@pytest.mark.parametrize("policy", ["allow", "ask"])
async def test_a_views_sampling_follows_its_servers_policy(world: ApiWorld, mock_model, web: FakeWeb,
                                                           policy: str) -> None:
    mock = mock_model([call("mcp__apps__show_board"), text("the board is up"), text("four")])
    server = {**SERVER, "sampling": policy}  # "ask" with no on_sampling callback: nobody answers, so refused
    options = world.options(mock.url, mcp_servers={"apps": server}, settings=json.dumps(SETTINGS))
    async with session(options) as running:
        channel, view_id = await board_view(running, web)
        init = await request(channel, view_id, "ui/initialize", {"protocolVersion": "2026-01-26"})
        assert init["result"]["hostCapabilities"]["sampling"] == {"tools": {}}  # offered: the policy is not deny
        turns_before = len(mock.requests)
        answer = await request(channel, view_id, "sampling/createMessage", SAMPLE)
        if policy == "allow":
            assert answer["result"]["content"] == {"type": "text", "text": "four"}
            assert answer["result"]["role"] == "assistant" and answer["result"]["stopReason"] == "endTurn"
            assert len(mock.requests) == turns_before + 1
            body = mock.requests[-1]["body"]
            assert body["messages"] == [{"role": "user", "content": [{"type": "text", "text": "What is 2+2?"}]}]
            assert body["max_tokens"] == 50 and "Answer in one word." in json.dumps(body["system"])
        else:
            assert answer["error"] == {"code": -1, "message": "User rejected sampling request"}
            assert len(mock.requests) == turns_before  # the model never saw it


async def test_a_deny_policy_offers_views_no_sampling(world: ApiWorld, mock_model, web: FakeWeb) -> None:
    mock = mock_model([call("mcp__apps__show_board"), text("the board is up")])
    options = world.options(mock.url, mcp_servers={"apps": {**SERVER, "sampling": "deny"}},
                            settings=json.dumps(SETTINGS))
    async with session(options) as running:
        channel, view_id = await board_view(running, web)
        init = await request(channel, view_id, "ui/initialize", {"protocolVersion": "2026-01-26"})
        assert "sampling" not in init["result"]["hostCapabilities"]
        answer = await request(channel, view_id, "sampling/createMessage", SAMPLE)
        assert answer["error"]["code"] == -1 and "denied for this server" in answer["error"]["message"]
        assert len(mock.requests) == 2
