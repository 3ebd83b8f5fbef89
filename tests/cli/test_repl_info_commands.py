"""The REPL's `/permissions`, `/status` and `/context` (issue 21) on a real session: `start_session` in a temporary
project and home with real settings and memory files, a real stdio MCP server, the real Anthropic client against
the mock model (which also answers count-tokens). The commands run through the REPL's own dispatch
(`Repl._slash`); what they print is asserted."""

from __future__ import annotations

import io
import json
import os
import re
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from mini_claude.cli.main import build_parser
from mini_claude.cli.repl import Repl
from mini_claude.cli.session_args import start_session
from mini_claude.cli.terminal.render import TerminalUI
from mini_claude.models.mock_server import MockModelServer
from mini_claude.models.scenario import parse_scenario
from mini_claude.tools.shell import BashTool
from tests.helpers import ROOT
from tests.integration.conftest import answer

pytestmark = pytest.mark.timeout(60)

SECRET = "sk-ant-test-do-not-print-1234"
SERVER = {"command": sys.executable, "args": [str(ROOT / "tests" / "mcp" / "servers" / "faulty_server.py")]}


@dataclass
class Session:
    repl: Repl
    mock: MockModelServer
    work: Path
    home: Path
    err: io.StringIO


@pytest.fixture
async def session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                  request: pytest.FixtureRequest) -> AsyncIterator[Session]:
    home, work = tmp_path / "home", tmp_path / "work"
    (home / ".claude").mkdir(parents=True)
    (work / ".claude").mkdir(parents=True)
    (home / ".claude" / "settings.json").write_text(json.dumps({"permissions": {"deny": ["Bash(rm:*)"]}}))
    (work / ".claude" / "settings.json").write_text(json.dumps({"permissions": {"allow": ["Bash(npm test:*)"]}}))
    (work / "CLAUDE.md").write_text("Run the tests with make test.\n")
    scenario = parse_scenario({"turns": [answer("hello back")], "chars_per_token": 2}, source="test")
    mock = MockModelServer(scenario)
    url = mock.start()
    for name in [n for n in os.environ if n.startswith(("ANTHROPIC_", "OPENAI_", "MINI_CLAUDE_"))]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("MINI_CLAUDE_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
    for name, value in getattr(request, "param", {}).items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(work)
    args = build_parser().parse_args(["--mcp-config", json.dumps({"mcpServers": {"ok": SERVER}}),
                                      "--allowedTools", "Read"])
    repl = Repl(args)
    err = io.StringIO()
    repl.ui = TerminalUI(out=io.StringIO(), err=err)
    repl.parts = await start_session(args, repl.ui)
    try:
        await repl.parts.manager.wait_started(timeout=20)
        yield Session(repl, mock, work, home, err)
    finally:
        await repl.parts.manager.aclose()
        mock.stop()


async def test_slash_permissions_lists_adds_and_removes(session: Session, capsys: pytest.CaptureFixture[str]) -> None:
    repl, gate = session.repl, session.repl.parts.gate
    await repl._slash("/permissions")
    listing = capsys.readouterr().out.splitlines()
    assert "    Read              --allowedTools (command line)" in listing
    assert ("    Bash(npm test:*)  .claude/settings.json — ignored: this folder is not trusted (`mini-claude trust`)"
            in listing)
    assert "    Bash(rm:*)        ~/.claude/settings.json" in listing

    await repl._slash("/permissions add allow Bash(make:*) user")
    assert "added allow rule Bash(make:*) to ~/.claude/settings.json; applied to this session" in session.err.getvalue()
    assert (await gate.check(BashTool(), {"command": "make all"})).allowed
    await repl._slash("/permissions add deny Bash(make clean:*)")  # default scope: local
    local = session.work / ".claude" / "settings.local.json"
    assert json.loads(local.read_text()) == {"permissions": {"deny": ["Bash(make clean:*)"]}}
    assert not (await gate.check(BashTool(), {"command": "make clean"})).allowed
    await repl._slash("/permissions add allow Bash(oops")
    assert 'invalid permission rule "Bash(oops": missing closing ")"' in session.err.getvalue()

    await repl._slash("/permissions")
    listing = capsys.readouterr().out.splitlines()
    assert "    Bash(make:*)        ~/.claude/settings.json" in listing
    assert "    Bash(make clean:*)  .claude/settings.local.json" in listing

    await repl._slash("/permissions remove Bash(make:*)")
    assert "removed allow rule Bash(make:*) from ~/.claude/settings.json" in session.err.getvalue()
    assert json.loads((session.home / ".claude" / "settings.json").read_text())["permissions"]["allow"] == []
    assert not (await gate.check(BashTool(), {"command": "make all"})).allowed


async def test_slash_status_says_what_the_session_runs_with(session: Session,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    await session.repl._slash("/status")
    out = capsys.readouterr().out
    lines = out.splitlines()
    port = session.mock.url.rsplit(":", 1)[1]
    assert re.fullmatch(r"  mini-claude \S+ \(Python 3\.\d+\.\d+, .+\)", lines[0])
    assert lines[1] == f"  session: {session.repl.parts.session_id}"
    assert lines[2] == "  model: claude-opus-5-5"
    assert re.fullmatch(rf"    served by the Anthropic Messages API at http://127\.0\.0\.1:{port}; "
                        r"key: ANTHROPIC_API_KEY \(environment\)", lines[3]), lines[3]
    assert lines[4] == f"  working folder: {session.work}"
    assert lines[5] == (f"    not trusted: {session.work} (`mini-claude trust` trusts it); ignored from its files: "
                        ".claude/settings.json permissions.allow")
    assert lines[6:] == ["  permission mode: default",
                         "  settings files: ~/.claude/settings.json, .claude/settings.json",
                         "  memory files: 1",
                         f"    {session.work / 'CLAUDE.md'} (project)",
                         "  MCP servers: 1 ready (/mcp for each)"]
    assert SECRET not in out and SECRET[:8] not in out


async def test_slash_context_shows_each_part_and_counts_tools(session: Session,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    repl = session.repl
    await repl.run_turn("hello")
    capsys.readouterr()
    await repl._slash("/context")
    lines = capsys.readouterr().out.splitlines()
    # the window is the model's own, from the model table (claude-opus-5-5: 1M)
    head = re.fullmatch(r"  context: ~(\S+) of 1M tokens \((\d+\.\d)%\) · model claude-opus-5-5", lines[0])
    assert head, lines[0]
    assert re.fullmatch(r"  \[S+E+M+T+P+C+·+\]", lines[1]) and len(lines[1]) == 2 + 52, lines[1]
    rows = {m.group(2): (int(m.group(3)) if m.group(3).isdigit() else round(float(m.group(3)[:-1]) * 1000),
                         m.group(5))
            for line in lines[2:] if (m := re.fullmatch(r"    (\S) (.+?)\s+(\S+)\s+(\d+\.\d)%\s*(.*)", line))}
    assert list(rows) == ["system prompt: brief", "system prompt: environment", "memory files (CLAUDE.md)",
                          "built-in tools", "MCP tools: ok", "messages", "free"]
    assert rows["memory files (CLAUDE.md)"][1] == "1 file" and rows["MCP tools: ok"][1] == "1 tool"
    assert rows["system prompt: brief"][0] > 1000  # the brief is several thousand characters
    # the reminder that opens the conversation is counted once, apart from the messages it sits in
    reminder = repl.parts.memory.reminder()
    assert repl.parts.agent.history[0]["content"][0]["text"] == reminder
    assert rows["messages"][1] == "2 messages" and rows["messages"][0] > 0
    assert f"        {session.work / 'CLAUDE.md'}  ~7" in lines
    # the tool definitions were counted by the mock's count-tokens (2 characters a token: twice the estimate)
    counts = [r for r in session.mock.requests if r["path"] == "/v1/messages/count_tokens"]
    assert len(counts) == 2
    assert lines[-1].startswith("    tool definitions counted by the API, the rest estimated")
    tools = rows["built-in tools"][0] + rows["MCP tools: ok"][0]
    estimate = sum(len(json.dumps({"name": t.name, "description": t.description, "input_schema": t.input_schema},
                                  ensure_ascii=False)) for t in repl.parts.agent.tools()) // 4
    assert 1.6 * estimate < tools < 2.4 * estimate
    used = sum(tokens for label, (tokens, _) in rows.items() if label != "free")
    assert abs(used + rows["free"][0] - 1_000_000) <= 200  # the rows ("2.5k") are rounded for display


@pytest.mark.parametrize("session", [{"MINI_CLAUDE_TOOL_SEARCH": "true"}], indirect=True)
async def test_slash_context_names_deferred_tools_apart(session: Session, capsys: pytest.CaptureFixture[str]) -> None:
    await session.repl._slash("/context")
    lines = capsys.readouterr().out.splitlines()
    assert not any("MCP tools: ok" in line for line in lines)
    assert any(re.fullmatch(r"    N system prompt: deferred MCP tool names\s+\d+\s+\d+\.\d%  for ToolSearch", line) for line in lines)
    assert any(re.fullmatch(r"    deferred, not sent: ok: 1 tool of 1 \(~\S+ tokens for all of them\) wait behind "
                            r"ToolSearch", line) for line in lines), lines


def test_the_key_is_named_by_its_source_never_shown(tmp_path: Path) -> None:
    from mini_claude.cli.slash.status import key_source
    from mini_claude.models.credentials import AnthropicCredentials, ApiKeyHelper, OpenAICredentials
    from mini_claude.settings import Settings

    helper = ApiKeyHelper("echo sk-from-helper", source="~/.claude/settings.json", cwd=tmp_path, env={}, ttl_s=60,
                          timeout_s=5)
    settings_env = Settings(env={"ANTHROPIC_API_KEY": SECRET})
    assert key_source(AnthropicCredentials(api_key=SECRET), {"ANTHROPIC_API_KEY": SECRET}, Settings()) == \
        "ANTHROPIC_API_KEY (environment)"
    assert key_source(AnthropicCredentials(api_key=SECRET), {"ANTHROPIC_API_KEY": SECRET}, settings_env) == \
        "ANTHROPIC_API_KEY (the env section of the settings)"
    assert key_source(AnthropicCredentials(api_key=SECRET), {}, Settings()) == "ANTHROPIC_API_KEY (the project's .env)"
    assert key_source(AnthropicCredentials(helper=helper), {}, Settings()) == \
        "the apiKeyHelper in ~/.claude/settings.json"
    assert key_source(AnthropicCredentials(auth_token=SECRET, api_key=SECRET), {}, Settings()) == \
        "ANTHROPIC_AUTH_TOKEN and ANTHROPIC_API_KEY"
    assert key_source(OpenAICredentials("unused", keyless=True), {}, Settings()) == \
        "none (OPENAI_BASE_URL's server needs no key)"
    assert key_source(OpenAICredentials(SECRET), {"OPENAI_API_KEY": SECRET}, Settings()) == \
        "OPENAI_API_KEY (environment)"


async def test_slash_doctor_reports_the_running_session(session: Session,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    await session.repl._slash("/doctor")
    out = capsys.readouterr().out
    lines = [line.strip() for line in out.splitlines()]
    assert "✔ credential   ANTHROPIC_API_KEY (environment) → anthropic" in lines
    assert f"✔ project      {session.work / '.claude' / 'settings.json'}: 1 allow rule" in lines
    assert re.search(r"^✔ ok +ready \(1 tool\)", "\n".join(lines), re.MULTILINE)  # the session's live server
    assert lines[-1] == "No problems found."
    assert SECRET not in out and SECRET[:8] not in out
    assert session.repl.parts.manager.states["ok"].status.value == "ready"  # a working server is not touched
