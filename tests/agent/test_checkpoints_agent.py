"""Checkpoints through the real agent loop (agent/tool_calls.py asks them before a write tool runs): the parent's
Write and a sub-agent's Write, against the mock model, are both saved under the user's prompt and put back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mini_claude.agent.checkpoints import Checkpoints
from mini_claude.agent.loop import Agent
from mini_claude.agent.subagents import SubagentParts, Subagents
from mini_claude.agent.turns import prompt_points
from mini_claude.agent.ui import SilentUI
from mini_claude.models.mock_server import MockModelServer
from mini_claude.models.scenario import parse_scenario
from mini_claude.permissions import PermissionGate, PermissionMode, RuleSet
from mini_claude.tools.base import Tool, ToolContext
from mini_claude.tools.builtins import builtin_tools
from tests.agent.agent_helpers import make_model

pytestmark = pytest.mark.timeout(60)


def _write(path: Path, content: str) -> dict[str, Any]:
    return {"content": [{"type": "tool_use", "name": "Write", "input": {"file_path": str(path), "content": content}}]}


async def test_the_parents_and_a_subagents_writes_are_checkpointed_and_put_back(tmp_path: Path) -> None:
    mine, theirs = tmp_path / "mine.txt", tmp_path / "theirs.txt"
    mock = MockModelServer(parse_scenario({"turns": [
        {"content": [{"type": "tool_use", "name": "Read", "input": {"file_path": str(mine)}}]},
        _write(mine, "parent wrote\n"),
        {"content": [{"type": "tool_use", "name": "Agent", "input": {
            "description": "write", "prompt": "write theirs.txt", "subagent_type": "general-purpose"}}]},
        _write(theirs, "child wrote\n"),  # the sub-agent's request
        {"content": [{"type": "text", "text": "child done"}]},
        {"content": [{"type": "text", "text": "all done"}]},
    ]}, source="checkpoints"))
    model = make_model(mock.start())
    try:
        gate = PermissionGate(PermissionMode.BYPASS, RuleSet.from_strings(), ask=None, cwd=tmp_path,
                              server_of=lambda name: None)
        ctx = ToolContext(cwd=tmp_path, spill_dir=tmp_path / ".spill")
        tools: list[Tool] = []
        parent: Agent | None = None
        parts = SubagentParts(model=model, tools=lambda: tools, gate=gate, ctx=ctx, ui=SilentUI(), cwd=tmp_path,
                              max_turns=10, context_tokens=200_000,
                              checkpoints=lambda: parent.checkpoints if parent is not None else None)
        tools.extend(builtin_tools(Subagents(parts)))
        parent = Agent(model=model, tools=lambda: tools, gate=gate, ctx=ctx, system="parent")
        parent.checkpoints = Checkpoints(tmp_path / "state" / "s.checkpoints", parent.history)
        mine.write_text("before\n")

        await parent.run("write both files")
        assert mine.read_text() == "parent wrote\n" and theirs.read_text() == "child wrote\n"

        point = prompt_points(parent.history)[0]
        assert sorted(parent.checkpoints.files_changed_at(point)) == [str(mine), str(theirs)]
        done = parent.checkpoints.restore(point, [tmp_path])
        assert done.skipped == []
        assert mine.read_text() == "before\n" and not theirs.exists()
    finally:
        mock.stop()
