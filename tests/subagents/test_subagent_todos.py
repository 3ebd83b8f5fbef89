"""A sub-agent keeps a todo list of its own (issue 21's TodoWrite): its `TodoWrite` calls never replace the parent's
working plan. A real parent Agent with the Agent tool, the real SDK against the mock model, the built-in tools."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mini_claude.tools.todo import TodoWriteTool
from tests.agent.agent_helpers import say
from tests.subagents.test_subagent_cancel import _agents

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
    parent, children, mock = _agents(turns, tmp_path)
    try:
        assert (await parent.run("go")).text == "parent done"
        [parent_todos] = [t for t in parent.tools() if isinstance(t, TodoWriteTool)]
        assert [item.content for item in parent_todos.items] == ["parent plan"]
        [child] = children
        [child_todos] = [t for t in child.tools() if isinstance(t, TodoWriteTool)]
        assert child_todos is not parent_todos and [item.content for item in child_todos.items] == ["child step"]
    finally:
        mock.stop()
