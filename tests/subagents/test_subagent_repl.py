"""A sub-agent's permission question reaches the user labelled with the sub-agent, in a real terminal (tmux): the
REPL shows the child's call under its type's name, says which sub-agent asks, and the user's "no" reaches the
child (its report quotes the refusal) while nothing runs."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from mini_claude.models.mock_server import MockModelServer
from mini_claude.models.scenario import parse_scenario
from tests.helpers import PYTHON, require_program
from tests.trust.test_trust_repl import Terminal

pytestmark = pytest.mark.timeout(120)


def test_a_subagents_question_names_it(tmp_path: Path) -> None:
    tmux = require_program("tmux", "drives the REPL in a real terminal")
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    (home / ".claude").mkdir(parents=True)
    mock = MockModelServer(parse_scenario({"turns": [
        {"content": [{"type": "tool_use", "name": "Agent",
                      "input": {"description": "make a file", "prompt": "touch made", "subagent_type": "general-purpose"}}]},
        {"content": [{"type": "tool_use", "name": "Bash", "input": {"command": "touch made"}}]},
        {"content": [{"type": "text", "text": "child saw: {{last_tool_result}}"}]},
        {"content": [{"type": "text", "text": "PARENT RELAYS THE REFUSAL"}]}]}))
    url = mock.start()
    session = f"mc-subagent-{tmp_path.parent.name}-{tmp_path.name}"
    cmd = (f"cd {work} && ANTHROPIC_BASE_URL={url} ANTHROPIC_API_KEY=x HOME={home} "
           f"MINI_CLAUDE_STATE_DIR={tmp_path / 'state'} {PYTHON} -m mini_claude")
    subprocess.run([tmux, "new-session", "-d", "-s", session, "-x", "220", "-y", "50", cmd], check=True)
    term = Terminal(tmux, session)
    try:
        term.wait_for(lambda s: "/help for commands" in s, "the prompt")
        term.keys("go", "Enter")
        term.wait_for(lambda s: "Allow it?" in s, "the permission question")
        screen = term.screen()
        assert "The general-purpose sub-agent asks to use Bash:" in screen, screen
        term.keys("n", "Enter")
        term.wait_for(lambda s: "What should the model do instead?" in s, "the follow-up")
        term.keys("Enter")
        term.wait_for(lambda s: "PARENT RELAYS THE REFUSAL" in s, "the parent's answer")
        screen = term.screen()  # the child's call, labelled with its sub-agent, and its refusal under it
        assert "● general-purpose › Bash(touch made)\n  ⎿  Error: permission denied for Bash: the user declined" \
            in screen, screen
    finally:
        subprocess.run([tmux, "kill-session", "-t", session], capture_output=True)
        mock.stop()
    assert not (work / "made").exists()
    child_results = [b for req in mock.requests[2:3] for m in req["body"]["messages"] for b in m["content"]
                     if isinstance(b, dict) and b.get("type") == "tool_result"]
    assert child_results and child_results[-1].get("is_error") is True
    assert "the user declined this tool call" in str(child_results[-1]["content"])
