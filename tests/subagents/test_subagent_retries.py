"""A sub-agent's model request that fails and is retried is shown as the parent's would be (issue 29): the real
parent Agent with the Agent tool, the real SDK against the mock model answering the child's first request with a
529, and a parent UI that listens for retries."""

from __future__ import annotations

from pathlib import Path

import pytest

from mini_claude.agent.loop import Agent
from mini_claude.agent.subagents import SubagentParts, Subagents
from mini_claude.agent.ui import SilentUI
from mini_claude.models.base import RetryNotice
from mini_claude.models.mock_server import MockModelServer
from mini_claude.models.scenario import parse_scenario
from mini_claude.permissions import PermissionGate, PermissionMode, RuleSet
from mini_claude.tools.base import Tool, ToolContext
from mini_claude.tools.builtins import builtin_tools
from tests.agent.agent_helpers import make_model, say

pytestmark = pytest.mark.timeout(60)


class RetryListeningUI(SilentUI):
    def __init__(self) -> None:
        self.notices: list[RetryNotice] = []

    def model_retrying(self, notice: RetryNotice) -> None:
        self.notices.append(notice)


async def test_a_subagents_retry_reaches_the_parents_ui(tmp_path: Path) -> None:
    turns = [{"content": [{"type": "tool_use", "name": "Agent",
                           "input": {"description": "look", "prompt": "look around"}}]},
             {"error": {"status": 529, "message": "busy", "type": "overloaded_error"}},
             say("the child's report"), say("done")]
    mock = MockModelServer(parse_scenario({"turns": turns}, source="subagent-retry"))
    ui = RetryListeningUI()
    try:
        model = make_model(mock.start())
        gate = PermissionGate(PermissionMode.DEFAULT, RuleSet.from_strings(), ask=None, cwd=tmp_path,
                              server_of=lambda name: None)
        ctx = ToolContext(cwd=tmp_path, spill_dir=tmp_path / ".spill")
        tools: list[Tool] = []
        parts = SubagentParts(model=model, tools=lambda: tools, gate=gate, ctx=ctx, ui=ui, cwd=tmp_path,
                              max_turns=5, context_tokens=200_000)
        tools.extend(builtin_tools(Subagents(parts)))
        parent = Agent(model=model, tools=lambda: tools, gate=gate, ctx=ctx, system="parent", ui=ui)
        parts.report = parent.absorb
        result = await parent.run("go")
    finally:
        mock.stop()
    assert result.text == "done"
    assert [(n.status, n.attempt) for n in ui.notices] == [(529, 1)], ui.notices
