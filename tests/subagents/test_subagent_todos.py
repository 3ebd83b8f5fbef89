"""A sub-agent keeps a todo list of its own (issue 21's TodoWrite): its `TodoWrite` calls never replace the parent's
working plan. A real parent Agent with the Agent tool, the real SDK against the mock model, the built-in tools."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mini_claude.agent.loop import Agent
from mini_claude.agent.subagents import SubagentParts, Subagents
from mini_claude.agent.ui import SilentUI
from mini_claude.models.mock_server import MockModelServer
from mini_claude.models.scenario import parse_scenario
from mini_claude.permissions import PermissionGate, PermissionMode, RuleSet
from mini_claude.tools.base import Tool, ToolContext
from mini_claude.tools.builtins import builtin_tools
from mini_claude.tools.todo import TodoWriteTool
from tests.agent.agent_helpers import make_model, say

pytestmark = pytest.mark.timeout(60)


def _todos(*items: tuple[str, str]) -> dict[str, Any]:
    return {"type": "tool_use", "name": "TodoWrite", "input": {"todos": [
        {"content": content, "status": status, "activeForm": content} for content, status in items]}}


async def test_a_subagents_todo_list_does_not_replace_the_parents(tmp_path: Path) -> None:
    turns = [{"content": [_todos(("parent plan", "in_progress"))]},
             {"content": [{"type": "tool_use", "name": "Agent",
                           "input": {"description": "look", "prompt": "look around"}}]},
             {"content": [_todos(("child step", "completed"))]}, say("child report"),
             say("parent done")]
    mock = MockModelServer(parse_scenario({"turns": turns}, source="todos"))
    model = make_model(mock.start())
    try:
        gate = PermissionGate(PermissionMode.DEFAULT, RuleSet.from_strings(), ask=None, cwd=tmp_path,
                              server_of=lambda name: None)
        ctx = ToolContext(cwd=tmp_path, spill_dir=tmp_path / ".spill")
        tools: list[Tool] = []
        children: list[Agent] = []
        parts = SubagentParts(model=model, tools=lambda: tools, gate=gate, ctx=ctx, ui=SilentUI(), cwd=tmp_path,
                              max_turns=10, context_tokens=200_000, on_child=children.append)
        tools.extend(builtin_tools(Subagents(parts)))
        parent = Agent(model=model, tools=lambda: tools, gate=gate, ctx=ctx, system="parent")
        assert (await parent.run("go")).text == "parent done"
        [parent_todos] = [t for t in tools if isinstance(t, TodoWriteTool)]
        assert [item.content for item in parent_todos.items] == ["parent plan"]
        [child] = children
        [child_todos] = [t for t in child.tools() if isinstance(t, TodoWriteTool)]
        assert child_todos is not parent_todos and [item.content for item in child_todos.items] == ["child step"]
    finally:
        mock.stop()
