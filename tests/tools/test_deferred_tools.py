"""What `DeferredTools` forgets: on `/clear` (the agent's `on_reset` with an empty history) every found tool; after a
compaction, those the kept history no longer calls."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from mini_claude.agent.loop import Agent
from mini_claude.errors import ModelError
from mini_claude.models.base import AssistantTurn
from mini_claude.permissions import PermissionGate, PermissionMode, RuleSet
from mini_claude.tools.base import ToolContext
from mini_claude.tools.tool_search import DeferredTools


def _calls(*names: str) -> list[dict[str, Any]]:
    return [{"role": "assistant", "content": [{"type": "tool_use", "id": f"t{i}", "name": name, "input": {}}]}
            for i, name in enumerate(names)]


def test_forget_keeps_only_what_the_kept_history_still_names() -> None:
    deferred = DeferredTools(list, setting="true", context_tokens=1000)
    deferred.loaded = {"mcp__a__one", "mcp__a__two", "mcp__b__three", "mcp__b__four"}
    kept_search = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "s",
                                                "content": "mcp__b__four: does four things"}]}
    deferred.forget([*_calls("mcp__a__two", "Read"), kept_search,
                     {"role": "assistant", "content": [{"type": "tool_use", "name": ["odd"], "input": {}}]}])
    assert deferred.loaded == {"mcp__a__two", "mcp__b__four"}
    deferred.forget([])
    assert deferred.loaded == set()


class _Model:
    name = "m"

    async def complete(self, **_: Any) -> AssistantTurn:
        return AssistantTurn([{"type": "text", "text": "ok"}], "end_turn")


def _agent_with_found_tool(tmp_path: Path) -> tuple[Agent, DeferredTools]:
    """An agent whose session has found `mcp__a__one` (its `on_reset` wired as the CLI wires it)."""
    gate = PermissionGate(PermissionMode.DEFAULT, RuleSet(), ask=None, cwd=tmp_path)
    agent = Agent(model=_Model(), tools=list, gate=gate, ctx=ToolContext(cwd=tmp_path, spill_dir=tmp_path / "spill"),
                  system="s")
    deferred = DeferredTools(list, setting="true", context_tokens=1000)
    deferred.loaded = {"mcp__a__one"}
    agent.on_reset = deferred.forget
    return agent, deferred


def test_clear_tells_the_agents_reset_hook(tmp_path: Path) -> None:
    agent, deferred = _agent_with_found_tool(tmp_path)
    agent.history.extend(_calls("mcp__a__one"))
    agent.clear()
    assert deferred.loaded == set()


def test_the_prompt_lists_names_while_they_fit_else_counts(tmp_path: Path) -> None:
    from mini_claude.tools.tool_search import names_fit

    assert names_fit(4_000, 20_000) and not names_fit(4_004, 20_000)  # 5% of the window, 4 characters a token


def test_a_failed_request_leaves_no_live_display() -> None:
    import io

    from mini_claude.cli.terminal.render import TerminalUI

    ui = TerminalUI(out=io.StringIO(), rich_output=True)
    ui.request_started(1200)
    ui.text_delta("partial answ")
    assert ui._live is not None
    ui.request_finished(False)  # cancelled (Ctrl+C) or the API failed mid-stream
    assert ui._live is None and ui._buffer == []
    ui.request_started(10)
    ui.request_finished(True)  # only the spinner was up: it goes
    assert ui._live is None


async def test_compact_summarises_and_forgets_what_the_summary_dropped(tmp_path: Path) -> None:
    agent, deferred = _agent_with_found_tool(tmp_path)
    for i in range(4):
        agent.history.append({"role": "user", "content": [{"type": "text", "text": f"prompt {i}"}]})
        agent.history.extend(_calls("mcp__a__one") if i == 0 else [{"role": "assistant", "content": [
            {"type": "text", "text": f"answer {i}"}]}])
    assert await agent.compact("keep it short")
    assert agent.context.compactions == 1 and "mcp__a__one" not in str(agent.history)
    assert deferred.loaded == set()


# ---- the API's count near the threshold ---------------------------------------------------------------------------

@dataclass
class _Adapter:
    name: str
    description: str
    server: str = "big"
    input_schema: dict[str, Any] = field(default_factory=lambda: {"type": "object"})
    manager: Any = field(default_factory=lambda: SimpleNamespace(states={}))
    mcp_tool: Any = None

    @property
    def definition_chars(self) -> int:  # as McpToolAdapter measures it: the definition's JSON
        return len(json.dumps({"name": self.name, "description": self.description,
                               "input_schema": self.input_schema}, ensure_ascii=False))


def _tools_of(tokens: int) -> list[Any]:
    """Ten tools whose definitions are estimated (JSON characters / 4) at about `tokens` in all."""
    return [_Adapter(f"mcp__big__t{i}", "x" * max(0, tokens * 4 // 10 - 60)) for i in range(10)]


class _Counter:
    def __init__(self, answer: int | BaseException | None = None, *, hang: bool = False) -> None:
        self.answer, self.hang, self.asked = answer, hang, 0

    async def __call__(self, tools: Any) -> int:
        self.asked += 1
        if self.hang:
            await asyncio.Event().wait()
        if isinstance(self.answer, BaseException):
            raise self.answer
        return self.answer if isinstance(self.answer, int) else 0


async def test_near_the_threshold_the_apis_count_decides() -> None:
    tools = _tools_of(900)  # the threshold is 1,000 (10% of 10,000): the estimate says "send them"
    deferred = DeferredTools(lambda: tools, setting="auto", context_tokens=10_000)
    assert not deferred.deferring()
    counter = _Counter(1_300)  # a tokenizer that counts JSON denser than the estimate
    await deferred.calibrate(counter)
    assert counter.asked == 1 and deferred.deferring()
    await deferred.calibrate(counter)  # once per tool list
    assert counter.asked == 1


async def test_far_from_the_threshold_nothing_is_asked() -> None:
    for tokens in (300, 3_000):
        tools = _tools_of(tokens)
        deferred = DeferredTools(lambda tools=tools: tools, setting="auto", context_tokens=10_000)
        counter = _Counter(1_300)
        await deferred.calibrate(counter)
        assert counter.asked == 0 and deferred.deferring() is (tokens > 1_000)
    for setting in ("true", "false"):
        counter = _Counter(1_300)
        tools = _tools_of(900)
        await DeferredTools(lambda tools=tools: tools, setting=setting, context_tokens=10_000).calibrate(counter)
        assert counter.asked == 0


async def test_a_failing_hanging_or_implausible_count_leaves_the_estimate(monkeypatch: pytest.MonkeyPatch) -> None:
    import mini_claude.tools.tool_search as tool_search

    monkeypatch.setattr(tool_search, "COUNT_TIMEOUT_S", 0.05)
    cases = [(_Counter(ModelError("HTTP 404: not found")), 1_100), (_Counter(hang=True), 1_100),
             (_Counter(0), 1_100), (_Counter(99_000), 900)]  # believed, the last two would flip the decision
    for counter, estimate in cases:
        tools = _tools_of(estimate)
        deferred = DeferredTools(lambda tools=tools: tools, setting="auto", context_tokens=10_000)
        await deferred.calibrate(counter)
        assert counter.asked == 1 and deferred.deferring() is (estimate > 1_000)  # the estimate still decides


async def test_a_search_loads_its_matches_and_names_the_next_ones(tmp_path: Path) -> None:
    """The best `limit` matches are loaded and described; the next ten by rank are named, not loaded, so a model
    whose tool sat just below the cut can `select:` it; `select:` itself names nothing more."""
    from mini_claude.tools.tool_search import ToolSearchTool

    tools = [_Adapter(f"mcp__inv__invoice_{i}", f"Invoice report number {i}", server="inv",
                      mcp_tool=SimpleNamespace(name=f"invoice_{i}")) for i in range(20)]
    deferred = DeferredTools(lambda: tools, setting="true", context_tokens=10_000)
    search = ToolSearchTool(deferred)
    ctx = ToolContext(cwd=tmp_path, spill_dir=tmp_path / "spill")
    text = (await search.run({"query": "invoice report", "max_results": 3}, ctx)).content[0]["text"]
    described, more = text.split("\n\n")
    assert len(described.splitlines()) == 3 and len(deferred.loaded) == 3
    named = more.splitlines()[1].split(": ", 1)[1].split(", ")
    assert len(named) == 10 and not set(named) & deferred.loaded and all(n.startswith("mcp__inv__") for n in named)
    chosen = (await search.run({"query": f"select:{named[0]}"}, ctx)).content[0]["text"]
    assert chosen.startswith(f"{named[0]}: ") and "Less likely" not in chosen and named[0] in deferred.loaded


def test_a_description_over_2kb_is_cut_for_the_model_with_a_note() -> None:
    """The model gets the first 2,048 characters and a note saying how much was cut; the tool keeps its full text
    (`mini-claude mcp tools SERVER` prints it from the server's listing)."""
    from mini_claude.mcp.protocol import McpTool
    from mini_claude.mcp.server_state import McpToolEntry
    from mini_claude.tools.mcp_tool import MAX_DESCRIPTION_CHARS, McpToolAdapter

    text = "Does a thing. " * 400  # 5,600 characters
    tool = McpTool.from_wire({"name": "big", "description": text, "inputSchema": {"type": "object"}})
    assert tool is not None
    adapter = McpToolAdapter(SimpleNamespace(), McpToolEntry("s", tool, "mcp__s__big"))  # type: ignore[arg-type]
    assert adapter.description.startswith(text[:MAX_DESCRIPTION_CHARS] + " […]")
    assert adapter.description.endswith("(description cut at 2,048 of 5,600 characters)")
    assert adapter.mcp_tool.description == text


def test_native_loading_defers_only_what_a_kept_result_references() -> None:
    """`deferred_names`: found tools whose tool_reference the kept history still has; after a compaction drops the
    search result, a tool the history still calls is sent in full instead; a refusal over deferred loading turns
    native loading off, any other error does not."""
    deferred = DeferredTools(list, setting="true", context_tokens=1000, native=True)
    deferred.loaded = {"mcp__a__one", "mcp__a__two", "mcp__a__three"}
    deferred.referenced = {"mcp__a__one", "mcp__a__two"}  # three was called by name without a search
    assert deferred.deferred_names() == {"mcp__a__one", "mcp__a__two"}
    kept_result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "s", "content": [
        {"type": "tool_reference", "tool_name": "mcp__a__one"}]}]}
    deferred.forget([kept_result, *_calls("mcp__a__two")])
    assert deferred.loaded == {"mcp__a__one", "mcp__a__two"} and deferred.deferred_names() == {"mcp__a__one"}
    assert not deferred.refused(ModelError("model API error 529: Overloaded", status=529)) and deferred.native
    assert not deferred.refused(ModelError("model API error 400: max_tokens: too large", status=400))
    assert not deferred.refused(ModelError("connection to the model API failed: defer_loading?"))  # not a 400
    assert deferred.refused(ModelError("model API error 400: tools.3.custom.defer_loading: Extra inputs are not "
                                       "permitted", status=400))
    assert not deferred.native and deferred.deferred_names() == set()
    assert not deferred.refused(ModelError("tool_reference: unknown", status=400)), "only once"


def test_native_is_on_for_anthropics_own_api_unless_the_environment_says() -> None:
    from mini_claude.models.anthropic_http import AnthropicHttpModel
    from mini_claude.models.anthropic_messages import is_live
    from mini_claude.session.agent_half import _native_loading

    assert is_live("https://api.anthropic.com") and is_live("https://API.anthropic.com:443/")
    assert not is_live("http://127.0.0.1:8080") and not is_live("https://api.anthropic.com.evil.example")
    live = AnthropicHttpModel("m", api_key="k")
    proxy = AnthropicHttpModel("m", api_key="k", base_url="http://127.0.0.1:9")
    assert _native_loading(live, {}) and not _native_loading(proxy, {})
    assert not _native_loading(live, {"MINI_CLAUDE_TOOL_SEARCH_NATIVE": "0"})
    assert _native_loading(proxy, {"MINI_CLAUDE_TOOL_SEARCH_NATIVE": "1"})
    assert not _native_loading(_Model(), {"MINI_CLAUDE_TOOL_SEARCH_NATIVE": "1"})  # no tool_reference support


async def test_a_native_search_references_only_what_is_not_sent_whole(tmp_path: Path) -> None:
    """A tool already sent in full (called by name before) is listed but not referenced: the tools sent up front
    stay the same; when nothing is left to reference the result is plain text."""
    from mini_claude.tools.tool_search import ToolSearchTool

    tools = [_Adapter(f"mcp__inv__invoice_{i}", f"Invoice report number {i}", server="inv",
                      mcp_tool=SimpleNamespace(name=f"invoice_{i}")) for i in range(3)]
    deferred = DeferredTools(lambda: tools, setting="true", context_tokens=10_000, native=True)
    deferred.resolve("mcp__inv__invoice_0")  # called by name: sent whole from now on
    search = ToolSearchTool(deferred)
    ctx = ToolContext(cwd=tmp_path, spill_dir=tmp_path / "spill")
    result = await search.run({"query": "invoice report", "max_results": 3}, ctx)
    assert sorted(b["tool_name"] for b in result.content) == ["mcp__inv__invoice_1", "mcp__inv__invoice_2"]
    assert "mcp__inv__invoice_0: " in result.aside and deferred.referenced == {"mcp__inv__invoice_1",
                                                                              "mcp__inv__invoice_2"}
    only_whole = await search.run({"query": "select:mcp__inv__invoice_0"}, ctx)
    assert only_whole.content[0]["type"] == "text" and only_whole.aside == ""


def test_clearing_old_results_keeps_the_ones_that_load_tools() -> None:
    """Old tool results are cleared to make room, except a search result that only references the tools it found
    (tiny, and what loads them)."""
    from mini_claude.agent.compaction import CLEARED, clear_old_results

    loads = [{"type": "tool_reference", "tool_name": "mcp__a__one"}]
    history = [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "s", "content": list(loads)},
                                            {"type": "tool_result", "tool_use_id": "r",
                                             "content": [{"type": "text", "text": "x" * 500}]}]},
               {"role": "assistant", "content": [{"type": "text", "text": "ok"}]}]
    assert clear_old_results(history, keep=1)
    assert history[0]["content"][0]["content"] == loads and history[0]["content"][1]["content"] == CLEARED


def test_an_adapter_measures_its_definition_as_the_request_carries_it() -> None:
    from mini_claude.mcp.protocol import McpTool
    from mini_claude.mcp.server_state import McpToolEntry
    from mini_claude.tools.mcp_tool import McpToolAdapter, PreparedSchemas

    tool = McpTool.from_wire({"name": "find", "description": "Find « things »",
                               "inputSchema": {"anyOf": [{"type": "object", "properties": {"q": {"type": "string"}}}]}})
    assert tool is not None
    schemas = PreparedSchemas()
    adapter = McpToolAdapter(SimpleNamespace(), McpToolEntry("s", tool, "mcp__s__find"), schemas=schemas)  # type: ignore[arg-type]
    whole = json.dumps({"name": adapter.name, "description": adapter.description,
                        "input_schema": adapter.input_schema}, ensure_ascii=False)
    assert adapter.definition_chars == len(whole)
    again = McpToolAdapter(SimpleNamespace(), McpToolEntry("s", tool, "mcp__s__find"), schemas=schemas)  # type: ignore[arg-type]
    assert again.input_schema is adapter.input_schema  # prepared once per listed definition
