"""`/agents` and `/output-style` in the real REPL in a terminal (tmux) against the mock model (issue 29): an agent
created through `/agents`' pickers and typed lines is written, listed, and started by the Agent tool in the same
session (its prompt is the child's system prompt in the request log); an output style chosen with the arrow keys is
in the next request's system prompt and saved to `.claude/settings.local.json`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import start_repl

from mini_claude.models.mock_server import MockModelServer
from mini_claude.models.scenario import parse_scenario
from tests.helpers import system_text

pytestmark = pytest.mark.timeout(120)


def _flat(screen: str) -> str:
    return " ".join(screen.split())


def test_an_agent_made_with_slash_agents_is_listed_and_started_in_the_same_session(tmp_path: Path) -> None:
    mock = MockModelServer(parse_scenario({"turns": [
        {"content": [{"type": "tool_use", "name": "Agent",
                      "input": {"subagent_type": "reviewer", "description": "review", "prompt": "look at it"}}]},
        {"content": [{"type": "text", "text": "CHILD-REPORT"}]},
        {"content": [{"type": "text", "text": "PARENT-DONE"}]}]}, source="test"))
    url = mock.start()
    work = tmp_path / "work"
    work.mkdir()
    term = start_repl(tmp_path, work, url, "agents")
    try:
        term.wait_for(lambda s: "/help for commands" in s, "the prompt")
        term.enter("/agents")
        term.wait_for(lambda s: "Create a new agent" in s and "Enter to choose" in s, "the agents picker")
        assert "general-purpose  (built-in) · tools: all · model: inherit" in term.screen()
        term.keys("Enter")
        term.wait_for(lambda s: "Where should the new agent live?" in s, "the scope picker")
        term.keys("Enter")  # Project
        term.wait_for(lambda s: "Name (letters, digits, - and _):" in s, "the name question")
        term.enter("reviewer")
        term.wait_for(lambda s: "Description (when should the main agent use it?):" in s, "the description")
        term.enter("Reviews diffs: finds bugs")
        term.wait_for(lambda s: "A list I type" in s, "the tools picker")
        term.keys("Down", "Enter")  # read-only tools
        term.wait_for(lambda s: "haiku" in s and "the session's model" in s, "the model picker")
        term.keys("Enter")  # inherit
        term.wait_for(lambda s: "System prompt (one line;" in s, "the prompt question")
        term.enter("You review code. REVIEWER-MARK")
        term.wait_for(lambda s: "the reviewer agent is ready" in s, "the new agent loaded")
        path = work / ".claude" / "agents" / "reviewer.md"
        assert path.read_text() == ("---\nname: reviewer\ndescription: 'Reviews diffs: finds bugs'\n"
                                    "tools: Read, Glob, Grep, WebFetch, WebSearch\nmodel: inherit\n---\n\n"
                                    "You review code. REVIEWER-MARK\n")

        term.enter("/agents")
        term.wait_for(lambda s: f"reviewer (project: {path}) · tools: Read, Glob, Grep, WebFetch, WebSearch · "
                                "model: inherit" in _flat(s), "the new agent listed")
        term.keys("Escape")
        term.wait_for(lambda s: "Enter to choose" not in s, "the picker closed")  # it erases itself
        term.enter("get it reviewed")
        term.wait_for(lambda s: "PARENT-DONE" in s, "the parent's answer")
        child = [r["body"] for r in mock.requests
                 if r["path"] == "/v1/messages" and "REVIEWER-MARK" in system_text(r["body"])]
        assert len(child) == 1, [system_text(r["body"])[:80] for r in mock.requests]
        assert {tool["name"] for tool in child[0]["tools"]} <= {"Read", "Glob", "Grep", "WebFetch", "WebSearch"}
        term.keys("C-d")
    finally:
        term.close()
        mock.stop()


def test_an_output_style_picked_with_the_arrows_is_in_the_next_request(tmp_path: Path) -> None:
    mock = MockModelServer(parse_scenario({"turns": [{"content": [{"type": "text", "text": "FIRST"}]},
                                                      {"content": [{"type": "text", "text": "SECOND"}]}]},
                                          source="test"))
    url = mock.start()
    work = tmp_path / "work"
    work.mkdir()
    term = start_repl(tmp_path, work, url, "styles")
    try:
        term.wait_for(lambda s: "/help for commands" in s, "the prompt")
        term.enter("hello")
        term.wait_for(lambda s: "FIRST" in s, "the first answer")
        assert "# Output style" not in system_text(mock.requests[-1]["body"])
        term.enter("/output-style")
        term.wait_for(lambda s: "Output style" in s and "default (current)" in s and "Learning" in s,
                      "the style picker")
        term.keys("Down", "Down", "Down", "Down", "Enter")  # default, Proactive, Concise, Explanatory, Learning
        term.wait_for(lambda s: "output style set to Learning" in s, "the switch")
        saved = json.loads((work / ".claude" / "settings.local.json").read_text())
        assert saved == {"outputStyle": "Learning"}
        term.enter("again")
        term.wait_for(lambda s: "SECOND" in s, "the second answer")
        system = system_text(mock.requests[-1]["body"])
        assert "\n\n# Output style: Learning\n" in system and "TODO(human)" in system
        assert "# How to talk" not in system
        term.keys("C-d")
    finally:
        term.close()
        mock.stop()
