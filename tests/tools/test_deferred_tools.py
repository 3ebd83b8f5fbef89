"""What `DeferredTools` forgets: on `/clear` (the agent's `on_reset` with an empty history) every found tool; after a
compaction, those the kept history no longer calls."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mini_claude.agent.loop import Agent
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
    deferred.forget([*_calls("mcp__a__two", "read_file"), kept_search,
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

    from mini_claude.cli.render import TerminalUI

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
