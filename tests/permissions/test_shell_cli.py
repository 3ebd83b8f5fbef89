"""Hole 4 end to end: the real CLI (`python -m mini_claude -p`) against the mock model, running the real bash tool.
A `#` comment holding a quote no longer hides the next line from an allow rule, and under `--yolo` a deny rule
`Bash(rm:*)` holds against compound commands, `!` and ANSI-C quoting."""

from __future__ import annotations

import pytest

from tests.integration.conftest import Cli, answer, result_text, tool_results, tool_use

pytestmark = pytest.mark.timeout(120)



def test_a_comment_with_a_quote_does_not_hide_the_next_line_from_an_allow_rule(cli: Cli) -> None:
    command = "git status #'\ntouch PWNED\n#'"
    mock = cli.mock([tool_use("Bash", {"command": command}), answer("done")])
    r = cli.run("-p", "go", "--allowedTools", "Bash(git:*)")
    assert r.rc == 0 and "denied on the way" in r.stderr, r.stderr  # answered; a call was denied on the way
    [result] = tool_results(mock)
    assert result.get("is_error") is True
    assert result_text(result) == (
        'permission denied for Bash: not allowed in non-interactive mode; allow with --yolo or add '
        '"Bash(touch:*)" to permissions.allow in .claude/settings.json')
    assert not (cli.work / "PWNED").exists()


@pytest.mark.parametrize("command", [
    "{ rm victim; }",
    "if true; then rm victim; fi",
    "! rm victim",
    "while rm victim; do break; done",
    "$'rm' victim",
    "$'\\x72m' victim",
    "r''m victim",
    "f() { rm victim; }; f",
    "bash <<'EOF'\nrm victim\nEOF",
    "echo rm victim | sh",
])
def test_deny_rule_holds_under_yolo(cli: Cli, command: str) -> None:
    victim = cli.work / "victim"
    victim.write_text("keep me")
    mock = cli.mock([tool_use("Bash", {"command": command}), answer("done")])
    r = cli.run("-p", "go", "--yolo", "--disallowedTools", "Bash(rm:*)")
    assert r.rc == 0 and "denied on the way" in r.stderr, r.stderr  # answered; a call was denied on the way
    [result] = tool_results(mock)
    assert result.get("is_error") is True
    assert result_text(result) == 'permission denied for Bash: denied by rule "Bash(rm:*)" from --disallowedTools'
    assert victim.read_text() == "keep me"
