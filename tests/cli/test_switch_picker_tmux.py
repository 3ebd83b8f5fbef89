"""The `/mcp disable` picker in a real terminal (tmux), with the probe server and the mock model: it lists the
server and its tools with their state and token cost, a digit switches a tool off at once (the picker comes back
with the row off, Esc ends), the local settings file holds the choice, `/context` shows what the switch saves, and
the next request leaves the tool out."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from mini_claude.models.mock_server import MockModelServer
from tests.integration.conftest import probe_entry
from tests.integration.test_host_repl import Terminal, repl  # noqa: F401  (the tmux REPL fixture)

pytestmark = pytest.mark.timeout(120)


def _back_at_prompt(screen: str, said: str) -> bool:
    """`said` is on screen and the REPL is back at its prompt (the last line): keys typed before that are the next
    prompt's typeahead (cli/keys.py), not a line sent."""
    lines = [line for line in screen.splitlines() if line.strip()]
    return said in screen and bool(lines) and lines[-1].strip() == ">"


def test_the_picker_switches_a_tool_off_and_context_shows_the_saving(
        repl: Callable[..., tuple[Terminal, MockModelServer]], tmp_path: Path) -> None:  # noqa: F811
    term, mock = repl([{"content": [{"type": "text", "text": "ANSWERED"}]}], {"probe": probe_entry()})
    term.wait_for(lambda s: "MCP probe: ready" in s, "the server to be ready")
    term.enter("/mcp disable")
    term.wait_for(lambda s: "MCP servers and tools: Enter switches one on or off" in s and "probe/vanish" in s,
                  "the picker")
    screen = term.screen()
    assert re.search(r"● probe  on\s+8 of 8 tools on, ~\d+ tokens a request; off saves ~\d+ tokens", screen), screen
    poke = re.search(r"6\. +● probe/poke\s+~(\d+) tokens; off saves them", screen)
    assert poke is not None, screen
    term.keys("6")  # the sixth row: probe/poke
    term.wait_for(lambda s: re.search(rf"○ probe/poke\s+off; on adds ~{poke.group(1)} tokens", s) is not None,
                  "the picker again, the tool off")
    term.keys("Escape")
    term.wait_for(lambda s: _back_at_prompt(s, f"Disabled MCP tool 'poke' of server 'probe' in "
                                               f".claude/settings.local.json: the model is not offered it, from the "
                                               f"next request on; saves ~{poke.group(1)} tokens"), "the switch said")
    local = tmp_path / "work" / ".claude" / "settings.local.json"
    assert json.loads(local.read_text())["disabledMcpTools"] == ["probe/poke"]
    term.enter("/context")
    term.wait_for(lambda s: _back_at_prompt(s, "switched off, never sent: probe: 1 tool off (saves ~"),
                  "/context's saving")
    term.enter("hello")
    term.wait_for(lambda s: "ANSWERED" in s, "the answer")
    offered = [t["name"] for t in mock.requests[-1]["body"].get("tools", [])]
    assert "mcp__probe__peek" in offered and "mcp__probe__poke" not in offered
    term.keys("C-d")


def test_the_picker_stops_and_starts_a_server_saved_in_the_user_file(
        repl: Callable[..., tuple[Terminal, MockModelServer]], tmp_path: Path) -> None:  # noqa: F811
    term, mock = repl([{"content": [{"type": "text", "text": "ANSWERED"}]}], {"probe": probe_entry()})
    term.wait_for(lambda s: "MCP probe: ready" in s, "the server to be ready")
    term.enter("/mcp disable -s user")
    term.wait_for(lambda s: "saved in ~/.claude/settings.json" in s and "probe/vanish" in s, "the picker")
    term.keys("1")  # the server row: off
    term.wait_for(lambda s: re.search(r"○ probe  disabled\s+on adds ~\d+ tokens a request \(its tools as last "
                                      r"listed\)", s) is not None, "the picker again, the server off")
    user = tmp_path / ".claude" / "settings.json"  # the fixture's HOME is tmp_path
    assert json.loads(user.read_text())["disabledMcpServers"] == ["probe"]
    term.keys("1")  # and on again: started in this session
    term.wait_for(lambda s: s.count("● probe  on") >= 1 and "8 of 8 tools on" in s.split("stopped, saves")[-1],
                  "the picker again, the server running")
    term.keys("Escape")
    term.wait_for(lambda s: re.search(r"Enabled MCP server 'probe' in ~/\.claude/settings\.json; started, adds ~\d+ "
                                      r"tokens a request", s) is not None and _back_at_prompt(s, ""), "enabled")
    assert json.loads(user.read_text())["disabledMcpServers"] == []
    term.enter("hello")
    term.wait_for(lambda s: "ANSWERED" in s, "the answer")
    assert "mcp__probe__poke" in [t["name"] for t in mock.requests[-1]["body"].get("tools", [])]
    term.keys("C-d")
