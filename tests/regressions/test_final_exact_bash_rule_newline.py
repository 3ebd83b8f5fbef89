"""Final attack (gate): an exact Bash rule allowed a command that differs from it by a newline, and an "always"
answer to a multi-line command saved such a rule.

`_bash_allow` compared an exact rule with the whole command after collapsing every whitespace run to one space, so
`Bash(echo start; echo rm -rf ~)` — the user's approval of two harmless echos — also allowed
`echo start; echo<newline>rm -rf ~`, which runs `rm -rf ~`: to the shell a newline ends a command, a space does
not. The other way round, "always" on `cd /tmp<newline>rm -rf build` saved `Bash(cd /tmp rm -rf build)`, a rule
naming a command the user was never shown. Now an exact rule judges a whole command only when its blanks are
spaces and tabs (what the shell reads as one), and a command with a newline (or other whitespace) inside it gets
no "always" rule: yes is a yes for that call."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mini_claude.permissions import PermissionMode
from mini_claude.permissions.gate import PermissionGate
from mini_claude.permissions.rules import RuleSet
from mini_claude.tools.shell import BashTool


def _gate(tmp_path: Path, asked: list[str], allow: list[str], answer: str = "no") -> PermissionGate:
    async def ask(tool: Any, args: dict[str, Any]) -> str:
        asked.append(args["command"])
        return answer

    return PermissionGate(PermissionMode.DEFAULT, RuleSet.from_strings(allow=allow), ask=ask, cwd=tmp_path,
                          home=tmp_path / "home")


async def test_an_exact_rule_does_not_allow_the_command_with_a_newline_for_a_space(tmp_path: Path) -> None:
    asked: list[str] = []
    gate = _gate(tmp_path, asked, ["Bash(echo start; echo rm -rf ~)", "Bash(echo a && echo b c)"])
    bash = BashTool()
    for command in ("echo start; echo\nrm -rf ~", "echo a && echo b\nc", "echo start; echo\r\nrm -rf ~"):
        decision = await gate.check(bash, {"command": command})
        assert not decision.allowed, command
    assert asked == ["echo start; echo\nrm -rf ~", "echo a && echo b\nc", "echo start; echo\r\nrm -rf ~"]
    # what the rules name still runs unasked, spaces and tabs read as the shell reads them, a trailing newline too
    for command in ("echo start; echo rm -rf ~", "echo start;\techo  rm -rf ~", "echo a && echo b c\n"):
        assert (await gate.check(bash, {"command": command})).allowed, command
    assert len(asked) == 3


async def test_always_on_a_multi_line_command_remembers_no_rule_that_names_another(tmp_path: Path) -> None:
    asked: list[str] = []
    gate = _gate(tmp_path, asked, [], answer="always")
    bash = BashTool()
    multi = "cd /tmp\nrm -rf build-of-this-test"
    assert gate.always_rules(bash, {"command": multi}) == []
    decision = await gate.check(bash, {"command": multi})
    assert decision.allowed and "nothing is remembered" in decision.reason
    await gate.check(bash, {"command": multi})
    await gate.check(bash, {"command": "cd /tmp rm -rf build-of-this-test"})
    assert asked == [multi, multi, "cd /tmp rm -rf build-of-this-test"]  # nothing remembered: each one asks
    # a one-line compound command is still remembered exactly, as before
    assert gate.always_rules(bash, {"command": "echo a;  echo b"}) == ["Bash(echo a; echo b)"]
