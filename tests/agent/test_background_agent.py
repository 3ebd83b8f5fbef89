"""Background shells through the agent loop: the mock model starts two background commands with `Bash`
(`run_in_background`), reads one's output twice with `TaskOutput` (the second read shows only the new line), stops
it with `TaskStop` (its process group gone) and names an unknown id; the other one's end reaches the model once, as
a text block in the next request's user message. The permission gate lets TaskOutput and TaskStop run unasked in
every mode, plan mode included, and a deny rule still stops them."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from agent_helpers import make_agent, say, tool, validate_history

from mini_claude.permissions import PermissionGate, PermissionMode, RuleSet
from mini_claude.tools.task_tools import TaskOutputTool, TaskStopTool
from tests.helpers import assert_group_gone, eventually, read_pidfile, wait_gone

pytestmark = pytest.mark.timeout(60)

SLOW = "echo $$ > pid; echo one; while [ ! -e go ]; do sleep 0.02; done; echo two; sleep 100"
NOTICE_START = "<background-task-ended>\nBackground task bash_2 (quick — `echo quick; exit 2`) exited with code 2"


def _results(request: dict[str, Any]) -> list[tuple[str, bool]]:
    """The last user message's tool results: (text, is_error)."""
    out = []
    for block in request["body"]["messages"][-1]["content"]:
        if block.get("type") == "tool_result":
            content = block["content"]
            text = content if isinstance(content, str) else "".join(b.get("text", "") for b in content)
            out.append((text, bool(block.get("is_error"))))
    return out


def _texts(request: dict[str, Any]) -> list[str]:
    return [b["text"] for b in request["body"]["messages"][-1]["content"] if b.get("type") == "text"]


async def test_start_read_stop_and_hear_of_the_end(mock_model: Any, tmp_path: Path) -> None:
    mock = mock_model([
        tool("Bash", command=SLOW, run_in_background=True, description="two steps"),
        tool("Bash", command="echo quick; exit 2", run_in_background=True, description="quick"),
        tool("TaskOutput", task_id="bash_1", block=False),
        tool("TaskOutput", task_id="bash_1", block=False),
        tool("TaskStop", task_id="bash_1"),
        tool("TaskOutput", task_id="bash_7", block=False),
        say("done"),
    ])
    agent = make_agent(mock.url, tmp_path, allow=("Bash",))  # TaskOutput / TaskStop need no rule
    background = agent.ctx.background
    output = agent.ctx.spill_dir / "bash_1.output"
    requests = 0

    async def before_request() -> None:  # each request waits for what the scenario's next step needs
        nonlocal requests
        requests += 1
        if requests == 3:  # the quick one has ended; the slow one has printed its first line
            quick = background.get("bash_2")
            assert quick is not None
            await asyncio.wait_for(quick.done.wait(), 10)
            await eventually(lambda: output.read_text() == "one\n", "the first line")
        elif requests == 4:
            (tmp_path / "go").touch()
            await eventually(lambda: output.read_text() == "one\ntwo\n", "the second line")

    agent.before_request = before_request
    try:
        outcome = await agent.run("run things in the background")
    finally:
        await background.aclose()
    assert outcome.text == "done" and outcome.denials == []
    validate_history(agent.history)
    sent = mock.requests
    assert len(sent) == 7

    started = _results(sent[1])[0]
    assert started[0].startswith("Started in the background as task bash_1 ") and not started[1]
    assert _results(sent[2])[0][0].startswith("Started in the background as task bash_2 ")
    # the quick task's end: once, after the tool result of the request it ended before
    notices = [t for t in _texts(sent[2]) if t.startswith("<background-task-ended>")]
    assert len(notices) == 1 and notices[0].startswith(NOTICE_START)
    assert f"Its output is in {agent.ctx.spill_dir / 'bash_2.output'};" in notices[0]
    everything = [b.get("text", "") for m in sent[-1]["body"]["messages"] if isinstance(m["content"], list)
                  for b in m["content"]]
    assert sum(t.startswith("<background-task-ended>") for t in everything) == 1

    first, second = _results(sent[3])[0][0], _results(sent[4])[0][0]
    assert first.startswith("task bash_1: running for ") and first.endswith("\nnew output:\none")
    assert second.startswith("task bash_1: running for ") and second.endswith("\nnew output:\ntwo")
    stopped, is_error = _results(sent[5])[0]
    assert not is_error and '"task_id":"bash_1"' in stopped
    shell = read_pidfile(tmp_path / "pid")
    assert await wait_gone(shell)
    assert_group_gone(shell)
    unknown, is_error = _results(sent[6])[0]
    assert is_error and unknown == ("No background task with ID 'bash_7': this session's background tasks are: "
                                    "bash_1, bash_2.")


@pytest.mark.parametrize("mode", ["default", "acceptEdits", "plan", "bypassPermissions"])
async def test_the_gate_lets_them_run_unasked_in_every_mode(tmp_path: Path, mode: str) -> None:
    gate = PermissionGate(PermissionMode.parse(mode), RuleSet.from_strings(), ask=None, cwd=tmp_path,
                          server_of=lambda name: None)
    for tool_ in (TaskOutputTool(), TaskStopTool()):
        decision = await gate.check(tool_, {"task_id": "bash_1"})
        assert decision.allowed, (tool_.name, decision.reason)


async def test_a_deny_rule_still_stops_them(tmp_path: Path) -> None:
    gate = PermissionGate(PermissionMode.PLAN, RuleSet.from_strings(deny=["TaskStop", "TaskOutput"]), ask=None,
                          cwd=tmp_path, server_of=lambda name: None)
    for tool_ in (TaskOutputTool(), TaskStopTool()):
        decision = await gate.check(tool_, {"task_id": "bash_1"})
        assert not decision.allowed and f'denied by rule "{tool_.name}"' in decision.reason
