"""The MCP host against real servers: server-everything's client-feature tools (../shared/peers/README.md) and
server-filesystem started without directories, each driven through `McpManager` + `McpHost` + the tool adapter —
the path the agent's calls take — with a scripted UI standing in for the person and, for sampling, the real
Anthropic SDK talking to the mock model server."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from mini_claude.mcp.config_entry import ServerConfig
from mini_claude.mcp.host import FormAnswer, McpHost, NoQuestionsUI, SamplingChoice
from mini_claude.mcp.host.ui import FormRequest, SamplingRequest, UrlRequest
from mini_claude.mcp.manager import McpManager, ServerStatus
from mini_claude.models.anthropic import AnthropicModel
from mini_claude.models.base import Model
from mini_claude.models.mock_server import MockModelServer
from mini_claude.models.scenario import parse_scenario
from mini_claude.tools.base import ToolContext, ToolResult
from mini_claude.tools.mcp_tool import McpToolAdapters
from tests.helpers import eventually
from tests.peers import peer_command

pytestmark = pytest.mark.timeout(90)

GATED = {"get-roots-list", "trigger-sampling-request", "trigger-elicitation-request", "trigger-url-elicitation"}


class ScriptedUI(NoQuestionsUI):
    interactive = True

    def __init__(self) -> None:
        super().__init__()
        self.sampling: list[SamplingRequest] = []
        self.forms: list[FormRequest] = []
        self.urls: list[UrlRequest] = []
        self.form_answer = FormAnswer("decline")
        self.sampling_choice = SamplingChoice.ONCE
        self.progressed: list[tuple[str, float, float | None]] = []

    async def approve_sampling(self, request: SamplingRequest) -> SamplingChoice:
        self.sampling.append(request)
        return self.sampling_choice

    async def fill_form(self, request: FormRequest) -> FormAnswer:
        self.forms.append(request)
        return self.form_answer

    async def open_url(self, request: UrlRequest) -> str:
        self.urls.append(request)
        return "accept"

    def progress(self, call: str, progress: float, total: float | None, message: str | None) -> None:
        self.progressed.append((call, progress, total))


class Session:
    def __init__(self, manager: McpManager, host: McpHost, ui: ScriptedUI, tmp_path: Path) -> None:
        self.manager, self.host, self.ui = manager, host, ui
        self.adapters = McpToolAdapters(manager, host)
        self.ctx = ToolContext(cwd=tmp_path, spill_dir=tmp_path / "spill")

    def tool_names(self, server: str = "everything") -> set[str]:
        return {e.tool.name for e in self.manager.tools() if e.server == server}

    async def call(self, tool: str, args: dict[str, Any], server: str = "everything") -> ToolResult:
        adapter = next(a for a in self.adapters() if a.name == f"mcp__{server}__{tool}")
        return await adapter.run(args, self.ctx)


@asynccontextmanager
async def session(tmp_path: Path, *servers: ServerConfig, model: Model | None = None,
                  env: dict[str, str] | None = None) -> AsyncIterator[Session]:
    ui = ScriptedUI()
    host = McpHost(ui, roots=[tmp_path], model=lambda: model, log_dir=tmp_path / "logs")
    manager = McpManager(servers, env={"PATH": "/usr/bin:/bin", **(env or {})}, client_setup=host.setup,
                         client_ready=host.ready)
    manager.start()
    try:
        await manager.wait_started()
        for cfg in servers:
            assert manager.states[cfg.name].status is ServerStatus.READY, manager.states[cfg.name].error
        yield Session(manager, host, ui, tmp_path)
    finally:
        await manager.aclose()


def everything(**fields: Any) -> ServerConfig:
    argv = peer_command("PEER_EVERYTHING")
    return ServerConfig(name="everything", type="stdio", command=argv[0], args=tuple(argv[1:]), **fields)


def text(result: ToolResult) -> str:
    return result.as_text()


async def test_declared_capabilities_unlock_every_tool(tmp_path: Path) -> None:
    async with session(tmp_path, everything()) as s:
        await eventually(lambda: s.tool_names() >= GATED, "the capability-gated tools", within_s=10)
        assert len(s.tool_names()) == 17
        client = s.manager.states["everything"].client
        assert client is not None and client.declared_capabilities == {
            "roots": {"listChanged": True}, "sampling": {"tools": {}}, "elicitation": {"form": {}, "url": {}}}


async def test_roots_are_the_working_folders_and_changes_are_announced(tmp_path: Path) -> None:
    extra = tmp_path / "more"
    extra.mkdir()
    async with session(tmp_path, everything()) as s:
        await eventually(lambda: "get-roots-list" in s.tool_names(), "get-roots-list", within_s=10)
        listed = text(await s.call("get-roots-list", {}))
        assert tmp_path.as_uri() in listed and "1 total" in listed
        assert await s.host.add_root(extra) and not await s.host.add_root(extra)

        async def both_listed() -> bool:
            return extra.as_uri() in text(await s.call("get-roots-list", {}))
        # the server asks roots/list again after our list_changed
        await eventually(both_listed, "the added root in the server's list", within_s=10)


async def test_sampling_is_answered_by_the_model_with_the_servers_settings(tmp_path: Path) -> None:
    mock = MockModelServer(parse_scenario({"turns": [{"content": [{"type": "text", "text": "forty-two"}]}]},
                                          source="test"))
    model = AnthropicModel("mock-model", api_key="x", base_url=mock.start())
    try:
        async with session(tmp_path, everything(), model=model) as s:
            await eventually(lambda: "trigger-sampling-request" in s.tool_names(), "sampling tool", within_s=10)
            result = await s.call("trigger-sampling-request", {"prompt": "the answer?", "maxTokens": 64})
            assert not result.is_error and '"text": "forty-two"' in text(result) and '"model": "mock-model"' in \
                text(result)
            body = mock.requests[-1]["body"]
            assert body["max_tokens"] == 64 and body["system"] == "You are a helpful test server."
            assert body["messages"][0]["content"][0]["text"].endswith("the answer?")
            assert [r.server for r in s.ui.sampling] == ["everything"]  # "ask": the user was asked once
            s.ui.sampling_choice = SamplingChoice.DENY
            denied = await s.call("trigger-sampling-request", {"prompt": "again", "maxTokens": 8})
            assert "rejected" in text(denied).lower() and len(mock.requests) == 1
    finally:
        await model.aclose()
        mock.stop()


async def test_sampling_deny_policy_never_reaches_the_model_or_the_user(tmp_path: Path) -> None:
    async with session(tmp_path, everything(sampling="deny"), model=None) as s:
        await eventually(lambda: "trigger-sampling-request" in s.tool_names(), "sampling tool", within_s=10)
        result = await s.call("trigger-sampling-request", {"prompt": "x", "maxTokens": 8})
        assert "sampling is denied for this server" in text(result) and not s.ui.sampling


async def test_a_form_elicitation_is_filled_in_by_the_user(tmp_path: Path) -> None:
    async with session(tmp_path, everything()) as s:
        await eventually(lambda: "trigger-elicitation-request" in s.tool_names(), "form tool", within_s=10)
        s.ui.form_answer = FormAnswer("accept", {"name": "Ada Lovelace", "integer": 7,
                                                 "untitledMultipleSelectEnum": ["Piano", "Drums"]})
        result = text(await s.call("trigger-elicitation-request", {}))
        assert "User provided the requested information" in result
        content = json.loads(result.split("Raw result:", 1)[1])["content"]
        assert content["name"] == "Ada Lovelace" and content["integer"] == 7
        assert content["untitledMultipleSelectEnum"] == ["Piano", "Drums"]
        assert content["titledSingleSelectEnum"] == "hero-1"  # defaults the user left alone are sent
        assert s.ui.forms[0].schema["required"] == ["name"]
        s.ui.form_answer = FormAnswer("decline")
        assert "declined" in text(await s.call("trigger-elicitation-request", {})).lower()


async def test_url_elicitation_by_request_and_by_error(tmp_path: Path) -> None:
    async with session(tmp_path, everything()) as s:
        await eventually(lambda: "trigger-url-elicitation" in s.tool_names(), "url tool", within_s=10)
        asked = text(await s.call("trigger-url-elicitation", {"url": "https://example.com/login"}))
        assert "User completed the URL elicitation flow" in asked
        by_error = await s.call("trigger-url-elicitation", {"url": "https://example.com/x", "errorPath": True})
        assert by_error.is_error and "-32042" in text(by_error)
        assert "asked the user to open a web page (https://modelcontextprotocol.io): the user opened it" in \
            text(by_error)
        assert [u.url for u in s.ui.urls] == ["https://example.com/login", "https://modelcontextprotocol.io"]


async def test_progress_is_shown_and_keeps_a_long_call_alive(tmp_path: Path) -> None:
    async with session(tmp_path, everything(), env={"MCP_TOOL_TIMEOUT": "2500"}) as s:
        began = time.monotonic()
        result = await s.call("trigger-long-running-operation", {"duration": 5, "steps": 5})
        assert not result.is_error and "completed" in text(result) and time.monotonic() - began >= 5
        assert s.ui.progressed[-1] == ("mcp__everything__trigger-long-running-operation", 5.0, 5.0)
        assert len(s.ui.progressed) == 5


async def test_the_hard_cap_ends_a_call_that_keeps_reporting_progress(tmp_path: Path) -> None:
    env = {"MCP_TOOL_TIMEOUT": "2500", "MCP_TOOL_MAX_TIMEOUT": "2000"}
    async with session(tmp_path, everything(), env=env) as s:
        result = await s.call("trigger-long-running-operation", {"duration": 10, "steps": 10})
        assert result.is_error and "MCP_TOOL_MAX_TIMEOUT" in text(result) and "timed out after 2s" in text(result)
        assert text(await s.call("echo", {"message": "still here"})) == "Echo: still here"


async def test_a_task_tool_runs_to_completion_and_asks_for_input(tmp_path: Path) -> None:
    async with session(tmp_path, everything()) as s:
        await eventually(lambda: "simulate-research-query" in s.tool_names(), "task tool", within_s=10)
        plain = text(await s.call("simulate-research-query", {"topic": "bees"}))
        assert "Research Report: bees" in plain
        statuses = [n for _, n in s.ui.notices if "simulate-research-query: task" in n]
        assert statuses[0].startswith("simulate-research-query: task working") and "task completed" in statuses[-1]
        s.ui.form_answer = FormAnswer("accept", {"interpretation": "historical"})
        clarified = text(await s.call("simulate-research-query", {"topic": "bees", "ambiguous": True}))
        assert "Research Report: bees (historical)" in clarified and len(s.ui.forms) == 1


async def test_server_logs_go_to_its_log_file_at_the_configured_level(tmp_path: Path) -> None:
    async with session(tmp_path, everything(log_level="debug")) as s:
        await s.call("toggle-simulated-logging", {})
        log_file = s.host.logs.path("everything")
        # server-everything logs every 5 s at a random level; at "debug" every one is sent (its stderr lines go to
        # the same file from the first byte: they are not what is waited for)
        await eventually(lambda: log_file.exists() and len([line for line in log_file.read_text().splitlines()
                                                            if " STDERR: " not in line]) >= 2,
                         "two log messages", within_s=15)
        await s.call("toggle-simulated-logging", {})
        assert "Roots updated" in log_file.read_text()


async def test_filesystem_without_directories_works_in_the_working_folder(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("from the working folder\n")
    argv = peer_command("PEER_FILESYSTEM")
    fs = ServerConfig(name="fs", type="stdio", command=argv[0])  # no directory arguments: roots decide
    async with session(tmp_path, fs) as s:
        async def readable() -> bool:
            result = await s.call("read_text_file", {"path": str(tmp_path / "notes.txt")}, server="fs")
            return not result.is_error and text(result) == "from the working folder\n"
        # the server applies our roots after its roots/list returns
        await eventually(readable, "the file readable under our roots", within_s=10)
        outside = await s.call("read_text_file", {"path": "/etc/hostname"}, server="fs")
        assert outside.is_error and "denied" in text(outside).lower()


async def test_an_attached_resource_is_subscribed_and_its_updates_reach_the_next_turn(tmp_path: Path) -> None:
    async with session(tmp_path, everything()) as s:
        s.host.bind(s.manager)
        uri = "demo://resource/static/document/features.md"
        attached = await s.host.resources.attach_mentions(f"read @everything:{uri}", spill_dir=tmp_path / "spill")
        assert not attached.problems and attached.blocks[0]["text"] == f"[Contents of everything resource {uri}]"
        await s.call("toggle-subscriber-updates", {})
        # server-everything sends notifications/resources/updated for subscribed uris every few seconds
        await eventually(lambda: any("changed; the model sees it" in n for _, n in s.ui.notices),
                         "the update notice", within_s=20)
        assert s.host.resources.take_updates() == [("everything", uri)]
        assert s.host.resources.take_updates() == []
        await s.call("toggle-subscriber-updates", {})


async def test_completion_of_prompt_arguments_and_resource_template_variables(tmp_path: Path) -> None:
    from prompt_toolkit.completion import CompleteEvent
    from prompt_toolkit.document import Document

    from mini_claude.cli.completion import ReplCompleter

    async def complete(completer: ReplCompleter, text: str) -> list[str]:
        found = [c async for c in completer.get_completions_async(Document(text), CompleteEvent())]
        return [text[:len(text) + c.start_position] + c.text for c in found]

    async with session(tmp_path, everything()) as s:
        s.host.bind(s.manager)
        await s.host.prompts.commands()
        await s.host.resources.refresh("everything")
        completer = ReplCompleter(["/help"], s.host)
        assert await complete(completer, "/mcp__everything__args") == ["/mcp__everything__args-prompt"]
        assert await complete(completer, "/mcp__everything__completable-prompt Sa") == [
            "/mcp__everything__completable-prompt Sales"]
        assert "/mcp__everything__completable-prompt Engineering name=Bob" in await complete(
            completer, "/mcp__everything__completable-prompt Engineering name=")
        assert await complete(completer, "see @everything:demo://resource/dynamic/te") == [
            "see @everything:demo://resource/dynamic/text/"]
        # server-everything completes a resourceId that has been started (an empty value gets nothing)
        assert await complete(completer, "@everything:demo://resource/dynamic/text/1") == [
            "@everything:demo://resource/dynamic/text/1"]
