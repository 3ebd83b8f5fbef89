"""Outside review (issue 28, round 2): tree-sitter-bash reads a carriage return, vertical tab or form feed as a blank,
bash as a word character — so in `echo hi \\r# ; touch x` the parser saw a comment and bash ran `touch x`: allowed by
`Bash(echo:*)`, by acceptEdits, past a `Bash(touch:*)` deny rule in bypass mode, and (7b) `\\rpwd` ran a program named
`\\rpwd` from PATH. Each case is first run with real bash to prove the hidden command runs."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from mini_claude.permissions import PermissionGate, PermissionMode, RuleSet
from mini_claude.tools.shell import BashTool


def _gate(tmp_path: Path, mode: PermissionMode = PermissionMode.DEFAULT, allow: tuple[str, ...] = (),
          deny: tuple[str, ...] = ()) -> PermissionGate:
    rules = RuleSet().with_allow(list(allow)) if allow else RuleSet()
    if deny:
        rules = rules.with_cli(allow=[], deny=list(deny))
    return PermissionGate(mode, rules, ask=None, cwd=tmp_path, home=tmp_path / "home")


@pytest.mark.parametrize("control", ["\r", "\v", "\f"])
def test_bash_really_runs_the_hidden_command(tmp_path: Path, control: str) -> None:
    subprocess.run(["bash", "-c", f"echo hi {control}# ; touch marker"], cwd=tmp_path, capture_output=True, timeout=10)
    assert (tmp_path / "marker").exists()


@pytest.mark.parametrize("control", ["\r", "\v", "\f"])
async def test_a_prefix_rule_does_not_cover_it(tmp_path: Path, control: str) -> None:
    decision = await _gate(tmp_path, allow=("Bash(echo:*)",)).check(BashTool(), {"command": f"echo hi {control}# ; "
                                                                                            "touch marker"})
    assert not decision.allowed


async def test_accept_edits_does_not_run_it(tmp_path: Path) -> None:
    decision = await _gate(tmp_path, PermissionMode.ACCEPT_EDITS).check(BashTool(), {"command": "mkdir -p d \r# ; "
                                                                                                  "touch /tmp/x"})
    assert not decision.allowed


async def test_a_deny_rule_is_not_evaded_in_bypass_mode(tmp_path: Path) -> None:
    gate = _gate(tmp_path, PermissionMode.BYPASS, deny=("Bash(touch:*)",))
    assert not (await gate.check(BashTool(), {"command": "echo hi \r# ; touch marker"})).allowed


@pytest.mark.parametrize("command", ["\rpwd", "echo hi;\rpwd", "pwd\v", "echo a\f"])
async def test_printing_commands_with_word_controls_ask(tmp_path: Path, command: str) -> None:
    assert not (await _gate(tmp_path).check(BashTool(), {"command": command})).allowed
