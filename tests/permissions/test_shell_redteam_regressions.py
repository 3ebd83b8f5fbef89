"""One exact command per bypass class the shell red team (tests/redteam/) or its growth turned up: each got past
the deny rule `Bash(rm:*)` in bypassPermissions mode (or an everyday allow rule) before the fix named beside it.
Each is judged by the real gate; the ones marked `runs` were also seen running `rm` with real bash."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from mini_claude.permissions import PermissionGate, PermissionMode, RuleSet
from mini_claude.tools.shell import BashTool

CANNOT_SEE = ', so deny rule "Bash(rm:*)" in rules cannot see what it runs; bypassPermissions mode refuses such a ' \
             "command while a Bash deny or ask rule is in force"


def bypass_reason(command: str, cwd: Path) -> str:
    gate = PermissionGate(PermissionMode.BYPASS, RuleSet.from_strings(deny=["Bash(rm:*)"]), ask=None, cwd=cwd)
    decision = asyncio.run(gate.check(BashTool(), {"command": command}))
    assert not decision.allowed, command
    return decision.reason.removeprefix("permission denied for Bash: ")


@pytest.mark.parametrize(("command", "why"), [
    # wrapper options were read past the wrapped command: `command`'s -v seen in awk's `-v x=1` (red team, runs)
    ("command awk -v x=1 'BEGIN{system(\"rm victim\")}' /dev/null",
     "awk runs a program that can start commands (system, pipes, getline)"),
    # an unquoted glob in the command name: bash runs the file it matches (`/bin/rm`)
    ("/bin/r? victim", "its command name is computed when it runs (an expansion or a glob pattern)"),
    # ... also where the parser splits the pattern into several words (red team, runs)
    ("find . -maxdepth 0 -exec /bin/r[m] victim \\;", "find -exec runs a command whose name the gate cannot know"),
    # sed's short-option clusters carry the script: `-e'…'`, `-ne…`
    ("sed -e'1e rm victim' <<< x", "sed runs a script that can start commands (the e command or flag)"),
    ("sed '-ne1e rm victim' <<< x", "sed runs a script that can start commands (the e command or flag)"),
    # find puts a found file's name where `{}` is: a file named "rm victim" becomes the code
    ("find . -name 'rm*' -exec sh -c {} \\;", "sh -c runs its argument as shell code"),
    # env defines a bash function from an environment entry that is no shell assignment
    ("env 'BASH_FUNC_git%%=() { r\"\"m victim; }' bash -c 'git status'",
     "an assignment to BASH_FUNC_git%% can make bash or a program run code from it"),
    # an interactive or login shell runs start-up files the model can write in bypass mode
    ("bash -ic 'git status'", "bash -ic runs its start-up files"),
    # strace pipes its log to a command
    ("strace -o '|r\"\"m victim' true", "strace |r\"\"m victim runs a command"),
    # printf's -v with the name attached is still a name, its subscript arithmetic
    ("printf '-va[$(r\"\"m victim)]' x", "printf gets a variable name with a subscript, or one the gate cannot know: "
                                          "a subscript is arithmetic that can run code"),
    # ... and an option word that is an expansion may be `-v` with its name (red team, runs)
    ("echo 'a[$(rm victim)]'; printf -v\"$_\" x", "printf gets a variable name with a subscript, or one the gate "
                                                  "cannot know: a subscript is arithmetic that can run code"),
    # tar's -I inside a cluster of short options
    ("tar -cI 'r\"\"m victim' -f /dev/null x", "tar -I is --use-compress-program, which runs a command as the compressor"),
])
def test_bypass_mode_refuses_what_the_deny_rule_cannot_see(command: str, why: str, tmp_path: Path) -> None:
    assert bypass_reason(command, tmp_path) == why + CANNOT_SEE


def test_a_new_wrapper_is_looked_through_by_the_deny_rule(tmp_path: Path) -> None:
    assert bypass_reason("ssh-agent rm victim", tmp_path) == 'denied by rule "Bash(rm:*)" in rules'
