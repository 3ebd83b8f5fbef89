"""CLAUDE.md through `mini-claude -p` (a real subprocess, the real SDK, the mock model): what the model's system
prompt holds, and that a repository's import of a file outside the project is refused with a warning."""

from __future__ import annotations

from tests.helpers import system_text
from tests.integration.conftest import Cli, answer


def test_claude_md_reaches_the_model(cli: Cli) -> None:
    (cli.work / "CLAUDE.md").write_text("Always answer in French. @docs/extra.md @~/secret.txt\n")
    (cli.work / "docs").mkdir()
    (cli.work / "docs" / "extra.md").write_text("Project codename: HERON")
    (cli.home / "secret.txt").write_text("hunter2")
    (cli.home / ".claude").mkdir()
    (cli.home / ".claude" / "CLAUDE.md").write_text("The user likes short answers.")
    mock = cli.mock([answer("d'accord")])
    result = cli.run("-p", "hi")
    assert result.rc == 0, result.stderr
    system = system_text(mock.requests[0]["body"])
    assert "Always answer in French." in system and "Project codename: HERON" in system
    assert "The user likes short answers." in system and "hunter2" not in system
    assert "memory: " in result.stderr and "@~/secret.txt not imported" in result.stderr
