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


def test_forget_keeps_only_what_the_kept_history_still_calls() -> None:
    deferred = DeferredTools(list, setting="true", context_tokens=1000)
    deferred.loaded = {"mcp__a__one", "mcp__a__two", "mcp__b__three"}
    deferred.forget(_calls("mcp__a__two", "read_file"))
    assert deferred.loaded == {"mcp__a__two"}
    deferred.forget([])
    assert deferred.loaded == set()


class _Model:
    name = "m"

    async def complete(self, **_: Any) -> AssistantTurn:
        return AssistantTurn([{"type": "text", "text": "ok"}], "end_turn")


def test_clear_tells_the_agents_reset_hook(tmp_path: Path) -> None:
    gate = PermissionGate(PermissionMode.DEFAULT, RuleSet(), ask=None, cwd=tmp_path)
    agent = Agent(model=_Model(), tools=list, gate=gate, ctx=ToolContext(cwd=tmp_path, spill_dir=tmp_path / "spill"),
                  system="s")
    deferred = DeferredTools(list, setting="true", context_tokens=1000)
    deferred.loaded = {"mcp__a__one"}
    agent.on_reset = deferred.forget
    agent.history.extend(_calls("mcp__a__one"))
    agent.clear()
    assert deferred.loaded == set()
