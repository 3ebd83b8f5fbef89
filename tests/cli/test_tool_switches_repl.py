"""`/mcp disable|enable SERVER/TOOL` in a real REPL session (start_session in a temporary project and home, the
probe stdio server, the real Anthropic client against the mock model): the switch is written to
`.claude/settings.local.json`, the next request leaves the tool out (and puts it back once enabled), and `/mcp`
and `/context` say what the switch saves."""

from __future__ import annotations

import io
import json
import os
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from mini_claude.cli.main import build_parser
from mini_claude.cli.repl import Repl
from mini_claude.cli.session_args import start_session
from mini_claude.cli.terminal.render import TerminalUI
from mini_claude.models.mock_server import MockModelServer
from mini_claude.models.scenario import parse_scenario
from mini_claude.tools.tool_search import definition_tokens
from tests.integration.conftest import answer, probe_entry

pytestmark = pytest.mark.timeout(60)


@dataclass
class Session:
    repl: Repl
    mock: MockModelServer
    work: Path
    err: io.StringIO


@pytest.fixture
async def session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Session]:
    home, work = tmp_path / "home", tmp_path / "work"
    (home / ".claude").mkdir(parents=True)
    work.mkdir()
    mock = MockModelServer(parse_scenario({"turns": [answer("one"), answer("two"), answer("three")]}, source="t"))
    url = mock.start()
    for name in [n for n in os.environ if n.startswith(("ANTHROPIC_", "OPENAI_", "MINI_CLAUDE_"))]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("MINI_CLAUDE_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
    monkeypatch.setenv("MINI_CLAUDE_TOOL_SEARCH", "false")
    monkeypatch.chdir(work)
    args = build_parser().parse_args(["--mcp-config", json.dumps({"mcpServers": {"probe": probe_entry()}})])
    repl = Repl(args)
    err = io.StringIO()
    repl.ui = TerminalUI(out=io.StringIO(), err=err)
    repl.parts = await start_session(args, repl.ui)
    try:
        await repl.parts.manager.wait_started(timeout=20)
        yield Session(repl, mock, work, err)
    finally:
        await repl.parts.manager.aclose()
        mock.stop()


def _mcp_tools(request: dict[str, Any]) -> list[str]:
    return [t["name"] for t in request["body"].get("tools", []) if t["name"].startswith("mcp__")]


async def test_slash_mcp_switches_a_tool_for_the_next_request(session: Session,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    repl = session.repl
    await repl.run_turn("first")
    assert "mcp__probe__poke" in _mcp_tools(session.mock.requests[-1])
    poke = next(t for t in repl.parts.agent.tools() if t.name == "mcp__probe__poke")
    saved = definition_tokens([poke])  # type: ignore[list-item]
    await repl._slash("/mcp disable probe/poke")
    local = session.work / ".claude" / "settings.local.json"
    assert json.loads(local.read_text())["disabledMcpTools"] == ["probe/poke"]
    await repl.run_turn("second")
    offered = _mcp_tools(session.mock.requests[-1])
    assert "mcp__probe__poke" not in offered and "mcp__probe__peek" in offered
    capsys.readouterr()
    await repl._slash("/mcp")
    panel = capsys.readouterr().out
    assert re.search(rf"^    stdio · .* · 1 tool off \(saves ~{saved} tokens\)$", panel, re.M), panel
    await repl._slash("/context")
    context = capsys.readouterr().out
    assert f"    switched off, never sent: probe: 1 tool off (saves ~{saved} tokens) (disabledMcpTools)" in \
        context.splitlines(), context
    assert not any(line.strip().startswith("P MCP tools: probe") and "8 tools" in line
                   for line in context.splitlines())
    await repl._slash("/mcp enable probe/poke")
    assert json.loads(local.read_text())["disabledMcpTools"] == []
    await repl.run_turn("third")
    assert "mcp__probe__poke" in _mcp_tools(session.mock.requests[-1])
