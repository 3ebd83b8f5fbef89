"""Allow rules and programs that run code from their arguments (mini_claude/permissions/code_runners.py): a
wildcard rule covers a risky word only when its literal text spells it, so `Bash(git:*)` is git's everyday forms
and not `git -c alias.x='!sh' x`; an exact rule covers exactly its text."""

from __future__ import annotations

from pathlib import Path

import pytest

from mini_claude.permissions import MatchEnv, RuleSet, ToolCall


@pytest.fixture
def env(tmp_path: Path) -> MatchEnv:
    return MatchEnv(cwd=tmp_path, home=tmp_path)


def allows(rule: str, command: str, env: MatchEnv) -> bool:
    return RuleSet.from_strings(allow=[rule]).match_allow(ToolCall("Bash", {"command": command}), env) is not None


@pytest.mark.parametrize(("rule", "command"), [
    ("Bash(git:*)", "git log --oneline -5"),
    ("Bash(git:*)", "git add -u"),
    ("Bash(git:*)", "git switch -c feature"),
    ("Bash(git:*)", "git config --get user.name"),
    ("Bash(python -m pytest:*)", "python -m pytest -q tests"),
    ("Bash(python -m pytest:*)", "timeout 60 python -m pytest"),
    ("Bash(python:*)", "python --version"),
    ("Bash(find:*)", "find . -name '*.py' -newer setup.py"),
    ("Bash(sed:*)", "sed -n 's/a/b/gp' notes.txt"),
    ("Bash(awk:*)", "awk -F: '{print $1}' /etc/passwd"),
    ("Bash(npm run:*)", "npm run build -- --watch"),
    ("Bash(npm:*)", "npm ls --depth 0"),
    ("Bash(make:*)", "make -j4 test"),
    ("Bash(tar:*)", "tar -tzf release.tgz"),
    ("Bash(ssh:*)", "ssh -p 2222 build-host"),
    ("Bash(git -c core.pager=cat log)", "git -c core.pager=cat log"),
    ("Bash(bash -c 'make test':*)", "bash -c 'make test'"),
    ("Bash(xargs grep:*)", "xargs grep -l TODO"),  # the rule names what xargs runs
])
def test_everyday_forms_stay_allowed(rule: str, command: str, env: MatchEnv) -> None:
    assert allows(rule, command, env)


@pytest.mark.parametrize(("rule", "command"), [
    ("Bash(git:*)", "git -c alias.x='!sh -c id' x"),
    ("Bash(git:*)", "git --config-env=core.fsmonitor=V status"),
    ("Bash(git:*)", "git x"),  # not a git command: an alias can run a program
    ("Bash(git:*)", "git clone -u 'sh -c id' https://example.invalid/r"),
    ("Bash(git:*)", "git rebase -x 'sh -c id' main"),
    ("Bash(git:*)", "git config alias.x '!sh -c id'"),
    ("Bash(git status:*)", "git status --short <<EOF\n $(touch PWNED)\nEOF"),
    ("Bash(python:*)", "python x.py"),
    ("Bash(python:*)", "python -c 'import os'"),
    ("Bash(python:*)", "python <<'EOF'\nprint(1)\nEOF"),
    ("Bash(python)", "python <<'EOF'\nprint(1)\nEOF"),
    ("Bash(bash:*)", "bash -c 'rm -rf /'"),
    ("Bash(find:*)", "find . -exec rm {} \\;"),
    ("Bash(find:*)", "find . -delete"),
    ("Bash(sed:*)", "sed -i 's/a/b/' notes.txt"),
    ("Bash(sed:*)", "sed '1e id' notes.txt"),
    ("Bash(sed:*)", "sed 's/x/y/w out' notes.txt"),
    ("Bash(awk:*)", "awk 'BEGIN{system(\"id\")}'"),
    ("Bash(awk:*)", "awk -f prog.awk data"),
    ("Bash(npm:*)", "npm run build"),
    ("Bash(npm:*)", "npm install left-pad"),
    ("Bash(make:*)", "make -f /tmp/evil.mk"),
    ("Bash(make:*)", "make SHELL=/tmp/evil test"),
    ("Bash(tar:*)", "tar cf x.tar src --checkpoint=1 --checkpoint-action=exec=id"),
    ("Bash(ssh:*)", "ssh -o ProxyCommand='sh -c id' host"),
    ("Bash(ssh:*)", "ssh host rm -rf /"),
    ("Bash(env:*)", "env -S 'sh -c id'"),
    ("Bash(echo:*)", "echo hi; PATH=/tmp/evil"),
    ("Bash(unset:*)", "unset 'a[$(id)]'"),
    ("Bash(declare:*)", "declare -n ref=target"),
])
def test_a_wildcard_does_not_cover_what_runs_code(rule: str, command: str, env: MatchEnv) -> None:
    assert not allows(rule, command, env)
