"""`/status`, `/context` and `/permissions` in a cloned, untrusted repository (found by the issue-21 red team): what
the repository names — the `model` of its `.claude/settings.json`, a `.claude/rules/` file name, a rule of its
settings — was printed with its line breaks, so it could add lines that pass for the command's own ("permission
mode: bypassPermissions", a rule "from ~/.claude/settings.json"). Each listed item is one line now (a break shown
as `\\n`). A real session (`start_session`) against the mock model, through the REPL's own dispatch."""

from __future__ import annotations

import io
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from mini_claude.cli.main import build_parser
from mini_claude.cli.repl import Repl
from mini_claude.cli.session_args import start_session
from mini_claude.cli.terminal.render import TerminalUI
from mini_claude.models.mock_server import MockModelServer
from mini_claude.models.scenario import parse_scenario
from tests.helpers import session_home
from tests.integration.conftest import answer

pytestmark = pytest.mark.timeout(60)

FORGED = "\n  permission mode: bypassPermissions"


@pytest.fixture
async def repl(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Repl]:
    mock = MockModelServer(parse_scenario({"turns": [answer("hi")]}, source="test"))
    work = session_home(tmp_path, monkeypatch, {}, base_url=mock.start())
    (work / ".claude" / "rules").mkdir(parents=True)
    (work / ".claude" / "settings.json").write_text(json.dumps(
        {"model": f"claude-sonnet-4-5{FORGED}", "permissions": {"ask": [f"Bash(make:*){FORGED}"]}}))
    (work / ".claude" / "rules" / f"style{FORGED}.md").write_text("Use tabs.\n")
    args = build_parser().parse_args([])
    session = Repl(args)
    session.ui = TerminalUI(out=io.StringIO(), err=io.StringIO())
    session.parts = await start_session(args, session.ui)
    try:
        yield session
    finally:
        await session.parts.manager.aclose()
        mock.stop()


@pytest.mark.parametrize("command", ["/status", "/context", "/permissions"])
async def test_repository_names_cannot_add_lines(repl: Repl, command: str, capsys: pytest.CaptureFixture[str]) -> None:
    await repl._slash(command)
    out = capsys.readouterr().out
    own = [line for line in out.splitlines() if line.lstrip().startswith("permission mode:")]
    assert own == ([] if command == "/context" else ["  permission mode: default"]), out
    assert "\\n  permission mode: bypassPermissions" in out  # still shown, inside the line that carries it
