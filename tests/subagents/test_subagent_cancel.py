"""Interrupting a turn while two sub-agents run (issue 21: Ctrl+C stops them): a real parent Agent with the Agent
tool, the real SDK against the mock model, the real gate and real bash. Both children are in a `sleep` when the
parent's task is cancelled; every child task ends, every bash process is gone, and every tool_use — the parent's
two Agent calls and each child's bash call — has its tool_result."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

from mini_claude.agent.loop import INTERRUPTED_TEXT, Agent
from mini_claude.agent.subagents import SubagentParts, Subagents
from mini_claude.agent.ui import SilentUI
from mini_claude.models.mock_server import MockModelServer
from mini_claude.models.scenario import parse_scenario
from mini_claude.permissions import PermissionGate, PermissionMode, RuleSet
from mini_claude.tools.base import Tool, ToolContext
from mini_claude.tools.builtins import builtin_tools
from tests.agent.agent_helpers import make_model, say, validate_history
from tests.helpers import eventually

pytestmark = pytest.mark.timeout(60)
WAIT_S = 20.0


def _agents(turns: list[dict[str, Any]], cwd: Path) -> tuple[Agent, list[Agent], MockModelServer]:
    mock = MockModelServer(parse_scenario({"turns": turns}, source="cancel"))
    model = make_model(mock.start())
    gate = PermissionGate(PermissionMode.DEFAULT, RuleSet.from_strings(allow=("Bash",)), ask=None, cwd=cwd,
                          server_of=lambda name: None)
    ctx = ToolContext(cwd=cwd, spill_dir=cwd / ".spill")
    children: list[Agent] = []
    tools: list[Tool] = []
    parts = SubagentParts(model=model, tools=lambda: tools, gate=gate, ctx=ctx, ui=SilentUI(), cwd=cwd,
                          max_turns=10, context_tokens=200_000, on_child=children.append)
    tools.extend(builtin_tools(Subagents(parts)))
    parent = Agent(model=model, tools=lambda: tools, gate=gate, ctx=ctx, system="parent")
    parts.report = parent.absorb
    return parent, children, mock


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _tool_uses(history: list[dict[str, Any]]) -> list[str]:
    return [b["id"] for m in history if m["role"] == "assistant" for b in m["content"] if b.get("type") == "tool_use"]


def _results(history: list[dict[str, Any]]) -> dict[str, str]:
    return {b["tool_use_id"]: "".join(c.get("text", "") for c in b["content"])
            for m in history if m["role"] == "user" and isinstance(m["content"], list)
            for b in m["content"] if b.get("type") == "tool_result"}


async def test_cancel_stops_every_subagent_and_answers_every_tool_use(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    pids.mkdir()
    sleeper = {"name": "Bash", "input": {"command": f"echo $$ > {pids}/$$.tmp && mv {pids}/$$.tmp {pids}/$$; "
                                                    "sleep 30"}}
    agent_call = {"name": "Agent", "input": {"description": "sleep", "prompt": "sleep a while"}}
    turns = [{"content": [{"type": "tool_use", **agent_call}, {"type": "tool_use", **agent_call}]},
             {"content": [{"type": "tool_use", **sleeper}]}, {"content": [{"type": "tool_use", **sleeper}]},
             say("never"), say("never"), say("never")]
    parent, children, mock = _agents(turns, tmp_path)
    try:
        task = asyncio.ensure_future(parent.run("go"))
        def both_started() -> bool:
            assert not task.done(), task.result()
            return len(list(pids.iterdir())) >= 2 and not any(p.suffix == ".tmp" for p in pids.iterdir())

        await eventually(both_started, "the two children both started their command", within_s=WAIT_S)
        shells = [int(p.name) for p in pids.iterdir()]
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(task, WAIT_S)
    finally:
        mock.stop()
    assert len(children) == 2
    for history in [parent.history, *(child.history for child in children)]:
        validate_history(history)
        results = _results(history)
        assert sorted(results) == sorted(_tool_uses(history)) and results
        assert all(text == INTERRUPTED_TEXT for text in results.values())
    await eventually(lambda: not any(_alive(pid) for pid in shells), f"the children's shells {shells} to end",
                     within_s=WAIT_S)
    assert len(mock.requests) == 3  # the parent's and each child's first: nothing asked after the interruption
