"""Issue 29: a repository's custom command runs under its `allowed-tools` once the folder is trusted (as the user's
own commands do), its rules never outweigh a deny rule and never outlive its run; what they do not allow is asked
about where the gate can ask, and refused where it cannot (`-p`). In an untrusted folder nothing widens
(test_command_expansion.py keeps that case). Real CLI and mock model, real bash, real files; the gate's part with a
real PermissionGate and the real Bash tool."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mini_claude.agent.commands import CommandStopped, command_rules, expand_command, load_commands
from mini_claude.permissions.gate import PermissionGate
from mini_claude.permissions.modes import PermissionMode
from mini_claude.permissions.rules import RuleSet
from mini_claude.tools.base import ToolContext
from mini_claude.tools.shell import BashTool
from tests.integration.conftest import Cli, answer, result_text, tool_results, tool_use

pytestmark = pytest.mark.timeout(120)


def trust_in_claude_code(home: Path, folder: Path) -> None:
    """Trust `folder` as Claude Code records it: ~/.claude.json projects[path].hasTrustDialogAccepted."""
    (home / ".claude.json").write_text(json.dumps({"projects": {str(folder.resolve()): {
        "hasTrustDialogAccepted": True}}}))


def project_command(work: Path, name: str, text: str) -> None:
    folder = work / ".claude" / "commands"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.md").write_text(text)


def test_a_trusted_folders_command_runs_under_its_allowed_tools(cli: Cli) -> None:
    trust_in_claude_code(cli.home, cli.work)
    project_command(cli.work, "mk", "---\nallowed-tools: Bash(touch:*), Bash(echo:*)\n---\n"
                                    "Made: !`touch made && echo made-it`\n")
    mock = cli.mock([tool_use("Bash", {"command": "touch by-the-model"}),
                     tool_use("Bash", {"command": "rm made"}),
                     answer("done")])
    r = cli.run("-p", "/mk")
    assert r.rc == 0, r.stderr
    assert mock.requests[0]["body"]["messages"][0]["content"][0]["text"] == "Made: made-it"
    assert (cli.work / "made").exists() and (cli.work / "by-the-model").exists()  # the `!` line and the tool call
    beyond = result_text(tool_results(mock)[1])  # beyond the command's rules: -p cannot ask, so it is refused
    assert beyond.startswith("permission denied for Bash: not allowed in non-interactive mode"), beyond
    assert (cli.work / "made").exists()


def test_a_deny_rule_outweighs_a_trusted_commands_allowed_tools(cli: Cli) -> None:
    trust_in_claude_code(cli.home, cli.work)
    (cli.home / ".claude").mkdir()
    (cli.home / ".claude" / "settings.json").write_text(json.dumps({"permissions": {"deny": ["Bash(touch:*)"]}}))
    project_command(cli.work, "mk", "---\nallowed-tools: Bash\n---\nMade: !`touch made`\n")
    mock = cli.mock([answer("never")])
    r = cli.run("-p", "/mk")
    assert r.rc == 1 and "/mk: stopped, nothing was run or sent: !`touch made`" in r.stderr, r.stderr
    assert "denied by rule" in r.stderr
    assert not (cli.work / "made").exists() and mock.requests == []


def test_trust_given_to_another_folder_does_not_count(cli: Cli, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    trust_in_claude_code(cli.home, other)
    project_command(cli.work, "mk", "---\nallowed-tools: Bash(touch:*)\n---\nMade: !`touch made`\n")
    mock = cli.mock([answer("never")])
    r = cli.run("-p", "/mk")
    assert r.rc == 1 and "not allowed in non-interactive mode" in r.stderr, r.stderr
    assert not (cli.work / "made").exists() and mock.requests == []


def _gate(work: Path, home: Path, *, deny: tuple[str, ...] = (), ask: Any = None) -> PermissionGate:
    return PermissionGate(PermissionMode.DEFAULT, RuleSet.from_strings(deny=deny), ask=ask, cwd=work, home=home)


def _commands(tmp_path: Path, text: str) -> tuple[Path, Path, Any]:
    work, home = tmp_path / "work", tmp_path / "home"
    home.mkdir()
    project_command(work, "mk", text)
    found, problems = load_commands(work, home)
    assert problems == []
    return work, home, found["/mk"]


async def test_the_rules_hold_for_the_run_alone_and_answers_given_meanwhile_stay(tmp_path: Path) -> None:
    work, home, command = _commands(tmp_path, "---\nallowed-tools: Bash(touch:*)\n---\nMake it.\n")
    assert command.scope == "project" and command.granted(trusted=False) == ()
    assert command.granted(trusted=True) == ("Bash(touch:*)",)
    gate = _gate(work, home, deny=("Bash(touch secret*)",))
    bash = BashTool()
    with command_rules(gate, command, trusted=False):  # untrusted: nothing widens
        assert not (await gate.check(bash, {"command": "touch a"})).allowed
    with command_rules(gate, command, trusted=True):
        assert (await gate.check(bash, {"command": "touch a"})).allowed
        denied = await gate.check(bash, {"command": "touch secret.txt"})  # the deny rule still wins
        assert not denied.allowed and "denied by rule" in denied.reason
        gate.allow_for_session(["Bash(ls:*)"])  # an "always" answered during the run
    assert [r.text for r in gate.rules.allow] == ["Bash(ls:*)"]  # it stays; the command's rule is gone
    assert not (await gate.check(bash, {"command": "touch a"})).allowed
    with pytest.raises(RuntimeError), command_rules(gate, command, trusted=True):
        raise RuntimeError("the run failed")
    assert [r.text for r in gate.rules.allow] == ["Bash(ls:*)"]  # taken out on a failure too


async def test_a_bang_line_beyond_the_rules_is_asked_about_where_the_gate_asks(tmp_path: Path) -> None:
    work, home, command = _commands(tmp_path, "---\nallowed-tools: Bash(touch:*)\n---\n"
                                              "A: !`touch first`\nB: !`mkdir second`\n")
    asked: list[str] = []
    answers = ["no"]

    async def ask(tool: Any, args: dict[str, Any]) -> str:
        asked.append(args["command"])
        return answers.pop(0)

    gate = _gate(work, home, ask=ask)
    ctx = ToolContext(cwd=work, spill_dir=tmp_path / "spill", home=home)
    with command_rules(gate, command, trusted=True), pytest.raises(CommandStopped) as stopped:
        await expand_command(command, "", gate=gate, shell=BashTool(), ctx=ctx)
    assert asked == ["mkdir second"]  # `touch first` is the command's own rule: not asked about
    assert "!`mkdir second`" in str(stopped.value)
    assert not (work / "first").exists() and not (work / "second").exists()  # a "no": nothing ran
    answers.append("yes")
    with command_rules(gate, command, trusted=True):
        expansion = await expand_command(command, "", gate=gate, shell=BashTool(), ctx=ctx)
    assert asked == ["mkdir second", "mkdir second"]
    assert (work / "first").exists() and (work / "second").is_dir()
    assert expansion.text.startswith("A:")


async def test_untrusted_the_same_line_is_asked_about_too_never_allowed_unasked(tmp_path: Path) -> None:
    work, home, command = _commands(tmp_path, "---\nallowed-tools: Bash(touch:*)\n---\nA: !`touch first`\n")
    asked: list[str] = []

    async def ask(tool: Any, args: dict[str, Any]) -> str:
        asked.append(args["command"])
        return "no"

    gate = _gate(work, home, ask=ask)
    ctx = ToolContext(cwd=work, spill_dir=tmp_path / "spill", home=home)
    with command_rules(gate, command, trusted=False), pytest.raises(CommandStopped):
        await expand_command(command, "", gate=gate, shell=BashTool(), ctx=ctx)
    assert asked == ["touch first"] and not (work / "first").exists()


def test_untrusted_the_warning_names_the_commands_whose_allowed_tools_were_ignored(cli: Cli) -> None:
    project_command(cli.work, "mk", "---\nallowed-tools: Bash(touch:*)\n---\nMade: !`touch made`\n")
    project_command(cli.work, "plain", "Nothing to grant.\n")
    cli.mock([answer("never")])
    r = cli.run("-p", "/mk")
    [line] = [line for line in r.stderr.splitlines() if "is not trusted" in line]
    assert "ignored .claude/commands allowed-tools (/mk) — run `mini-claude trust`" in line, line
    assert not (cli.work / "made").exists()
