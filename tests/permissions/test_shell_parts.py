"""The bash-tree walk behind Bash rules: which commands a command line runs, what makes it opaque, what deny rules
see, and where tree-sitter's reading differs from bash's (those places are opaque and looked into by deny rules)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from mini_claude.permissions import MatchEnv, RuleSet, ToolCall, split_shell_command
from mini_claude.permissions.shell import deny_candidates

# 1,000 typical commands matched against allow, ask and deny rules: measured at ~0.3 s of this process's CPU time
# (not wall time, which CI's other worker stretches as it likes); the bound leaves room for a slow machine.
MATCH_1000_BOUND_S = 3.0


@pytest.fixture
def env(tmp_path: Path) -> MatchEnv:
    return MatchEnv(cwd=tmp_path, home=tmp_path)


def allows(rules: list[str], command: str, env: MatchEnv) -> bool:
    return RuleSet.from_strings(allow=rules).match_allow(ToolCall("Bash", {"command": command}), env) is not None


def denies_rm(command: str, env: MatchEnv) -> bool:
    return RuleSet.from_strings(deny=["Bash(rm:*)"]).match_deny(ToolCall("Bash", {"command": command}), env) \
        is not None


@pytest.mark.parametrize(("command", "parts"), [
    ("git status #'\ntouch PWNED\n#'", ("git status", "touch PWNED")),
    ("{ rm x; }", ("rm x",)),
    ("if true; then rm x; elif a; then b; else c; fi", ("true", "rm x", "a", "b", "c")),
    ("! rm x", ("rm x",)),
    ("while rm x; do :; done", ("rm x", ":")),
    ("until a; do b; done", ("a", "b")),
    ("case x in a) rm x;; *) b;; esac", ("rm x", "b")),
    ("f() { rm x; }; f", ("rm x", "f")),
    ("function g { rm x; }", ("rm x",)),
    ("(a; b) | c |& d", ("a", "b", "c", "d")),
    ("a & b", ("a", "b")),
    ("cat <<EOF | grep x\nbody\nEOF", ("cat", "grep x")),
    ("python - <<'EOF'\nprint(1)\nEOF", ("python -",)),
    ("A=/tmp/evil; git status", ("A=/tmp/evil", "git status")),
    ("export A=1 && [[ -f x ]] && (( 2 > 1 ))", ("export A=1", "[[ -f x ]]", "(( 2 > 1 ))")),
    ("git status 2>/dev/null --short", ("git status --short",)),
])
def test_every_command_bash_runs_is_a_part(command: str, parts: tuple[str, ...]) -> None:
    split = split_shell_command(command)
    assert split.parts == parts
    assert not split.opaque, split.why_opaque


@pytest.mark.parametrize(("command", "why"), [
    ("git status $(rm x)", "command substitution"),
    ("git status `rm x`", "command substitution"),
    ("git status <(rm x)", "command substitution"),
    # a redirection to a file is a write the gate judges (test_hidden_writes.py); one it cannot name is opaque
    ("git status > \"$out\"", "output redirection to a path the gate cannot know"),
    ("git status >& $out", "output redirection to a path the gate cannot know"),
    ("git status > *.txt", "output redirection to a path the gate cannot know"),
    ("git status <& out", "output redirection to a file"),
    ("git status < /dev/tcp/example.com/80", "a network redirection"),
    ("git status 'open", "a parse error"),
    ("$'rm' x", "the command name is not a plain word"),
    ('"r"m x', "the command name is not a plain word"),
    ("r''m x", "the command name is not a plain word"),
    ("\\rm x", "the command name is not a plain word"),
    ("$cmd x", "the command name is not a plain word"),
    ("g*t status", "the command name is not a plain word"),
    ("for PATH in /tmp/evil; do git status; done", "a for loop (it assigns a variable)"),
    ("git status ${PATH:=/tmp/evil}", "an expansion that assigns a variable"),
    ("git status $((PATH=0))", "an expansion that assigns a variable"),
    # bash evaluates a variable's value as arithmetic (`a[$(cmd)]` in it runs cmd), or as code
    ("(( n > 1 ))", "an arithmetic command over a variable (bash evaluates its value as arithmetic, which can run "
                    "code)"),
    ("PATH=/tmp/evil; git status", "an assignment to PATH can make bash or a program run code from it"),
    # places where tree-sitter reads differently from bash
    ("! until rm x; do :; done", "a reserved word the parser took for a command"),
    ("cat <<EOF |& sh\nrm x\nEOF |& cat\nEOF", "a heredoc the parser misread"),
    ("bash <<'EOF'\n\\rm x\nEOF", "a heredoc the parser misread"),
    ("git status a#b\n\\rm x", "a word the parser misread"),
    ("git status\\\nx", "a line continuation inside a word"),
    ("echo `git status # x`; rm x", "a parse error"),
])
def test_what_the_walk_cannot_vouch_for_is_opaque(command: str, why: str, env: MatchEnv) -> None:
    assert split_shell_command(command).why_opaque == why
    assert not allows(["Bash(git status:*)", "Bash(echo:*)", "Bash(cat:*)", "Bash(bash:*)"], command, env)


@pytest.mark.parametrize("command", [
    "{ rm x; }", "if true; then rm x; fi", "! rm x", "while rm x; do :; done", "until rm x; do :; done",
    "case a in a) rm x;; esac", "$'rm' x", "$'\\x72m' x", "$'\\162\\155' x", '"r"m x', "r''m x", "r\\m x",
    "\\rm x", "{rm,x}", "r\\\nm x", "x=rm; $x y", "x=r; y=m; $x$y z", "${u:-rm} x", "r${u}m x", "$(echo rm) x",
    '"$(echo r)m" x', "`printf %s rm` x", "f() { rm x; }; f", "git() { rm x; }; git status",
    "bash <<'EOF'\nrm x\nEOF", "bash -s <<< 'rm x'", ". /dev/stdin <<< 'rm x'", "echo rm x | bash",
    "echo 'r\"m\" x' | sh", "cat <<EOF | sh\nrm x\nEOF", "eval 'eval \"r\"m x'", "sh -c 'eval \"$1\"' _ 'rm x'",
    "x=rm; eval '$x y'", "find . -exec rm {} \\;", "command -p rm x", "exec -a n rm x", "builtin eval 'rm x'",
    "coproc rm x", "nice -n 1 rm x", "trap 'rm x' EXIT", "shopt -s expand_aliases\nalias z='rm x'\nz",
    "read v <<< rm; $v x", "IFS=,; c=rm,x; $c", "! until rm x; do :; done", "git status a#b\n\\rm x",
    "cat <<EOF |& sh\nrm x\nEOF |& cat\nEOF", "echo `git status # x`; rm x",
])
def test_deny_rule_sees_every_way_to_run_rm(command: str, env: MatchEnv) -> None:
    assert denies_rm(command, env)


def test_eval_nested_deeper_than_we_open_is_still_denied(env: MatchEnv) -> None:
    command = "r''m x"
    for _ in range(8):
        command = "eval '" + command.replace("'", "'\"'\"'") + "'"
    assert denies_rm(command, env)


@pytest.mark.parametrize("command", [
    "git commit -m 'rm old files'", "echo rm", "cat <<'EOF'\nrm x\nEOF", "git status # rm x", "rmdir build",
    "echo '$(rm x)'",
])
def test_deny_rule_does_not_catch_rm_as_data(command: str, env: MatchEnv) -> None:
    assert not denies_rm(command, env)


def test_compound_commands_of_allowed_parts_are_allowed(env: MatchEnv) -> None:
    rules = ["Bash(git status:*)", "Bash(git diff:*)", "Bash(grep:*)", "Bash(cat:*)"]
    assert allows(rules, "if git diff --quiet; then git status; fi", env)
    assert allows(rules, "{ git status; git diff; } 2>&1 | grep x", env)
    assert allows(rules, "cat <<'EOF' | grep x\n$(rm x)\nEOF", env)  # a quoted heredoc is data
    assert not allows(rules, "cat <<EOF | grep x\n$(rm x)\nEOF", env)  # an unquoted one runs $(...)
    assert allows(["Bash(python -:*)"], "python - <<'EOF'\nprint(1)\nEOF", env)
    assert not allows(["Bash(python)"], "python - <<'EOF'\nprint(1)\nEOF", env)


def test_hostile_nesting_does_not_exhaust_the_stack(env: MatchEnv) -> None:
    command = "echo " + "$(" * 3000 + "rm x" + ")" * 3000
    assert split_shell_command(command).opaque
    assert "rm x" in deny_candidates(command)
    assert denies_rm("{ " * 2000 + "rm x; " + "}; " * 2000, env)


def test_matching_stays_cheap(env: MatchEnv) -> None:
    typical = ["git status", "ls -la src", "npm test -- --watch=false", "git diff HEAD~1 -- src/app.py | head -50",
               "python -m pytest -q tests/test_x.py 2>&1 | tail -20", "cd frontend && npm run build",
               "grep -rn 'TODO' src/ | wc -l", "find . -name '*.py' -newer setup.py", "git log --oneline -10",
               "cat package.json | jq .scripts", 'echo "$HOME"', "make -j4 && ./bin/app --help"]
    commands = [f"{c} # {i}" for i in range(84) for c in typical][:1000]  # distinct: no cache hits
    rules = RuleSet.from_strings(allow=["Bash(git status:*)", "Bash(ls:*)", "Bash(npm test:*)"],
                                 deny=["Bash(rm:*)", "Bash(git push:*)"], ask=["Bash(curl:*)"])
    split_shell_command("warm up the parser")
    started = time.process_time()
    for command in commands:
        call = ToolCall("Bash", {"command": command})
        rules.match_deny(call, env)
        rules.match_ask(call, env)
        rules.match_allow(call, env)
    elapsed = time.process_time() - started
    print(f"1,000 commands matched in {elapsed:.3f} s of CPU")
    assert elapsed < MATCH_1000_BOUND_S, f"1,000 commands took {elapsed:.2f} s"
