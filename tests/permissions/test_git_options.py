"""Issue 27, findings 1 and 3 for git: git's options read the way git reads them (options/git.py).

Each finding runs the real git with a marker (it really runs or writes: the test is real), then the real gate:
under the user's everyday rule in default mode it asks, and in bypass mode with a `Bash(rm:*)` deny rule in force
a command that could run `rm` unseen is refused. Then the parser against git's own answers (abbreviations,
negations, ambiguity, clusters, both value forms), a property over every prefix of every code-running option, and
the everyday forms that must stay allowed.
"""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path
from typing import Any, ClassVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mini_claude.permissions import PermissionGate, PermissionMode, RuleSet
from mini_claude.permissions.options import git_tables
from mini_claude.permissions.options.git import git_findings
from mini_claude.permissions.options.spec import Arg, Effect

pytestmark = pytest.mark.timeout(120)


class Bash:
    name = "Bash"
    read_only = False
    description = "bash"
    input_schema: ClassVar[dict[str, Any]] = {"type": "object"}


class Asker:
    def __init__(self) -> None:
        self.asked: list[str] = []

    async def __call__(self, tool: Any, args: dict[str, Any]) -> str:
        self.asked.append(args["command"])
        return "no"


def repo(tmp_path: Path) -> Path:
    """A git repository with one commit whose message is fsmonitor configuration, as a cloned one could be."""
    work = tmp_path / "work"
    work.mkdir()
    env = {"GIT_CONFIG_NOSYSTEM": "1", "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    for args in (["init", "-q"], ["config", "user.email", "a@b"], ["config", "user.name", "a"]):
        subprocess.run(["git", *args], cwd=work, check=True, env=env)
    (work / "x.txt").write_text("x\n")
    subprocess.run(["git", "add", "."], cwd=work, check=True, env=env)
    subprocess.run(["git", "commit", "-qm", "[core]\n\tfsmonitor = touch FSMONITOR-RAN\n"], cwd=work, check=True,
                   env=env)
    return work


def bash(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", command], cwd=cwd, capture_output=True, text=True, timeout=60,
                          env={"GIT_CONFIG_NOSYSTEM": "1", "HOME": str(cwd.parent), "PATH": "/usr/bin:/bin",
                               "GIT_PAGER": "cat", "PAGER": "cat"}, stdin=subprocess.DEVNULL)


async def decide(cwd: Path, command: str, mode: str = "default", allow: tuple[str, ...] = (),
                 deny: tuple[str, ...] = ()) -> tuple[bool, str, list[str]]:
    asker = Asker()
    gate = PermissionGate(PermissionMode.parse(mode), RuleSet().with_cli(allow=list(allow), deny=list(deny)),
                          ask=asker, cwd=cwd, home=cwd.parent / "home")
    d = await gate.check(Bash(), {"command": command})  # type: ignore[arg-type]
    return d.allowed, d.reason, asker.asked


# ------------------------------------------------------------------------------------------ the findings

CODE_FINDINGS = [
    ("Bash(git grep:*)", "git grep --open-files-in-pa='touch MARK' x"),
    ("Bash(git grep:*)", "git grep -O'touch MARK' x"),
    ("Bash(git ls-remote:*)", "git ls-remote --upload-pa='touch MARK' ."),
    ("Bash(git ls-remote:*)", "git ls-remote --upload-pack 'touch MARK' ."),
]


@pytest.mark.parametrize(("rule", "command"), CODE_FINDINGS)
async def test_abbreviated_code_options_run_and_now_ask(tmp_path: Path, rule: str, command: str) -> None:
    work = repo(tmp_path)
    bash(command, work)
    assert (work / "MARK").exists()  # git really ran it
    (work / "MARK").unlink()
    allowed, _, asked = await decide(work, command, allow=(rule,))
    assert not allowed and asked == [command]
    assert not (work / "MARK").exists()


@pytest.mark.parametrize("command", [
    "git grep --open-files-in-pa='rm victim' x",
    "git ls-remote --upload-pa='rm victim' .",
    "git grep --open-files-in-pager='rm victim' x",
])
async def test_bypass_with_a_deny_rule_refuses_what_it_cannot_see(tmp_path: Path, command: str) -> None:
    work = repo(tmp_path)
    (work / "victim").write_text("v")
    bash(command, work)
    assert not (work / "victim").exists()  # the real git ran rm
    (work / "victim").write_text("v")
    allowed, reason, _ = await decide(work, command, "bypassPermissions", deny=("Bash(rm:*)",))
    assert not allowed
    assert reason.startswith("permission denied for Bash: git ") and " runs " in reason, reason
    assert "cannot see what it runs" in reason, reason
    assert (work / "victim").exists()


async def test_log_output_writes_git_config_and_now_asks(tmp_path: Path) -> None:
    work = repo(tmp_path)
    command = "git log -1 --format=%B --output=.git/config"
    original = (work / ".git" / "config").read_text()
    bash(command, work)
    assert "fsmonitor = touch FSMONITOR-RAN" in (work / ".git" / "config").read_text()  # the write is real
    bash("git status", work)
    assert (work / "FSMONITOR-RAN").exists()  # and the next git status runs it
    (work / ".git" / "config").write_text(original)
    for spelled in (command, "git log -1 --format=%B --output .git/config", "git log -1 -p --output=.git/config"):
        allowed, _, asked = await decide(work, spelled, allow=("Bash(git log:*)",))
        assert not allowed and asked == [spelled]
    [found] = git_findings(shlex.split(command), 0)
    assert (found.effect, found.path, found.index) == (Effect.WRITES, ".git/config", 4)


# ------------------------------------------------------------------------------------------ the parser

def effects(command: str) -> list[tuple[str, str | None]]:
    return [(f.effect.value, f.path) for f in git_findings(shlex.split(command), 0)]


@pytest.mark.parametrize(("command", "expected"), [
    # parse-options: prefixes, an exact name wins, ambiguity, negation and its prefixes
    ("git grep --open-files-in-pager=x p", [("code", None)]),
    ("git grep --open=x p", [("code", None)]),
    ("git grep --no-open-files-in-pager p", []),
    ("git grep --no-op p", []),
    ("git grep --no-in p", [("unknown", None)]),  # --no-index or --no-invert-match: git refuses it too
    ("git grep --n p", [("unknown", None)]),
    ("git grep --line p", []),  # --line-number
    ("git commit --no-verify -m x", []),
    ("git commit --verify -m x", []),  # the negation of --no-verify
    ("git commit --ver -m x", [("unknown", None)]),  # --verbose or --verify
    ("git push --rec=x", [("unknown", None)]),  # --recurse-submodules or --receive-pack
    ("git push --recei=x", [("code", None)]),
    ("git push --receive-pack x", [("code", None)]),
    ("git fetch --upload-pack=x", [("code", None)]),
    ("git clone -u x src dst", [("code", None)]),
    ("git clone --conf core.fsmonitor=x src dst", [("code", None)]),
    ("git rebase -ix ls main", [("code", None), ("code", None)]),  # a cluster: -i, then -x with its value
    ("git rebase -xls main", [("code", None)]),
    ("git rebase --exe=ls main", [("code", None)]),
    ("git rebase --onto main -- --exec=ls", []),  # after --, an operand
    ("git grep --end-of-options --open-files-in-pager=x", []),
    ("git grep -e --open-files-in-pager=x", []),  # the value of -e
    ("git grep -n3 foo", []),
    ("git status --porc", []),
    ("git status --frob", [("unknown", None)]),
    ("git status --porcelain=v2", []),
    ("git status --short=x", [("unknown", None)]),  # a flag given a value
    # revision.c and diff.c: whole names, both value forms, unknown options do not stop git
    ("git log --outp=F", [("unknown", None)]),
    ("git log --output F", [("writes", "F")]),
    ("git log --output=F", [("writes", "F")]),
    ("git log --bogus --output=F", [("unknown", None), ("writes", "F")]),
    ("git log --format --output=F", [("unknown", None)]),  # --format takes its value attached only
    ("git log --no-ext-d", []),
    ("git log --no-e", [("unknown", None)]),  # --no-exit-code or --no-ext-diff: git refuses it too
    ("git diff --output=out.patch", [("writes", "out.patch")]),
    ("git show --output=o HEAD", [("writes", "o")]),
    ("git range-diff --outp=F a b", [("unknown", None)]),  # range-diff abbreviates: --output or --output-indicator-*
    ("git format-patch -o out -1", [("writes", "out")]),
    ("git format-patch --output-directory=out -1", [("writes", "out")]),
    ("git archive -o a.tar HEAD", [("writes", "a.tar")]),
    ("git archive --remote=. --exec=x HEAD", [("code", None)]),
    ("git bundle create b.bundle HEAD", [("writes", "b.bundle")]),
    ("git stash list --output=F", [("writes", "F")]),  # git stash list passes its options to git log
    ("git reflog --output=F", [("writes", "F")]),
    ("git blame --porc f", []),
    ("git blame --output=F f", [("writes", "F")]),
    # git.c's own options: whole names only
    ("git -c core.pager=x log", [("code", None)]),
    ("git -C sub log --output=F", [("code", None), ("writes", "sub/F")]),  # git writes sub/F
    ("git -C /r -C sub log --output=F", [("code", None), ("code", None), ("writes", "/r/sub/F")]),
    ("git --git-dir=x status", [("code", None)]),
    ("git --git-di=x status", [("unknown", None)]),
    ("git --no-pager log", []),
    ("git --bare status", [("code", None)]),
    ("git frob", [("code", None)]),
    ("git config user.name x", [("code", None), ("writes", ".git/config")]),
    ("git config --global --add a.b c", [("code", None), ("writes", "~/.gitconfig")]),
    ("git config -fCLAUDE.md a b", [("reads", "CLAUDE.md"), ("code", None), ("writes", "CLAUDE.md")]),
    ("git config --unset core.fsmonitor", [("code", None), ("writes", ".git/config")]),
    ("git branch -vu origin/main", [("writes", ".git/config")]),
    ("git branch --set-upstream-to=origin/main", [("writes", ".git/config")]),
    ("git branch -a", []),
    ("git config --ed", [("code", None)]),
    ("git config --get user.name", []),
    ("git config --get-r user", []),
    ("git maintenance start", [("code", None)]),
])
def test_git_reads_options_so(command: str, expected: list[tuple[str, str | None]]) -> None:
    assert effects(command) == expected


def test_a_word_the_gate_cannot_know_may_be_the_worst_option() -> None:
    assert [f.effect for f in git_findings(["git", "grep", None], 0)] == [Effect.UNKNOWN]  # it may be -Ocmd
    assert [(f.effect, f.path) for f in git_findings(["git", "log", None], 0)] == [(Effect.WRITES, None)]
    assert [f.effect for f in git_findings(["git", "stash", None], 0)] == [Effect.UNKNOWN]  # it may be `list`
    assert git_findings(["git", "log", "--", None], 0) == []
    assert git_findings(["git", "grep", "-e", None], 0) == []  # a value, not an option
    assert git_findings(["git", "add", None], 0) == []  # no option of git add runs or writes anything


def test_a_subcommand_without_options_makes_every_option_unknown() -> None:
    assert effects("git stash clear --foo") == [("unknown", None)]


@pytest.mark.parametrize(("command", "accepted"), [
    ("git grep --open-files-in-pa='touch MARK' x", True),
    ("git grep --no-in x", False),
    ("git log --outp=MARK", False),
    ("git log --outpu=MARK", False),
    ("git log --output MARK", True),
    ("git commit --ver -m x --allow-empty", False),
    ("git --git-di=.git status", False),
    ("git status --porc", True),
])
def test_the_real_git_agrees(tmp_path: Path, command: str, accepted: bool) -> None:
    """What the tables say git refuses, git refuses; what they resolve, git runs."""
    work = repo(tmp_path)
    r = bash(command, work)
    assert (r.returncode == 0) == accepted, r.stderr
    if "MARK" in command:
        assert (work / "MARK").exists() == accepted


# ------------------------------------------------------------------------------------------ a property

_CODE_OPTIONS = sorted({(key, o.names, o.arg) for key in ("grep", "ls-remote", "clone", "fetch", "push", "pull",
                                                          "rebase", "archive", "init", "merge", "config")
                        for o in (git_tables.table(key) or git_tables.table("log")).options  # type: ignore[union-attr]
                        if o.effect is Effect.CODE and any(n.startswith("--") for n in o.names)})


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(_CODE_OPTIONS), st.integers(min_value=0, max_value=60), st.booleans())
def test_every_unambiguous_prefix_of_a_code_option_is_code(case: tuple[str, tuple[str, ...], Arg], cut: int,
                                                           attached: bool) -> None:
    key, names, arg = case
    long = next(n for n in names if n.startswith("--"))
    prefix = long[:max(3, len(long) - cut)]
    spec = git_tables.table(key)
    assert spec is not None
    # other options this prefix may name: by their name, or (for `--no-X`) by the X git also accepts
    others = [n for o in spec.options for n in o.names if o.names != names
              and (n.startswith(prefix) or (n.startswith("--no-") and "--" + n[5:] != prefix
                                             and ("--" + n[5:]).startswith(prefix)))]
    words = [f"{prefix}=v"] if attached else [prefix, "v"] if arg is Arg.REQUIRED else [prefix]
    argv = ["git", key, *words, "x"]
    found = [f for f in git_findings(argv, 0) if f.index == 2]
    assert [f.effect for f in found] in ([Effect.CODE], [Effect.UNKNOWN])
    if arg is Arg.NO and attached:
        assert [f.effect for f in found] == [Effect.UNKNOWN]
    elif others and long not in others and prefix != long:
        assert [f.effect for f in found] == [Effect.UNKNOWN]  # ambiguous
    else:
        assert [f.effect for f in found] == [Effect.CODE], (argv, found)


# ------------------------------------------------------------------------------------------ usability

EVERYDAY = [
    ("Bash(git status:*)", "git status -sb"),
    ("Bash(git status:*)", "git status --porcelain=v1 -uno"),
    ("Bash(git log:*)", "git log --oneline -n 5"),
    ("Bash(git log:*)", "git log --format=%H --since=2.weeks"),
    ("Bash(git log:*)", "git log -p -- path"),
    ("Bash(git log:*)", "git log --graph --decorate --all -20"),
    ("Bash(git log:*)", "git log --author='A B' --grep fix --stat"),
    ("Bash(git diff:*)", "git diff --stat HEAD~1"),
    ("Bash(git diff:*)", "git diff --name-only"),
    ("Bash(git diff:*)", "git diff --cached -U3 --color=never"),
    ("Bash(git show:*)", "git show HEAD:file"),
    ("Bash(git show:*)", "git show --stat -p HEAD~2"),
    ("Bash(git grep:*)", "git grep -n foo"),
    ("Bash(git grep:*)", "git grep -il --untracked 'a b' -- src"),
    ("Bash(git branch:*)", "git branch -a"),
    ("Bash(git branch:*)", "git branch --show-current"),
    ("Bash(git ls-files:*)", "git ls-files -z"),
    ("Bash(git rev-parse:*)", "git rev-parse --show-toplevel"),
    ("Bash(git rev-parse:*)", "git rev-parse --abbrev-ref HEAD"),
    ("Bash(git blame:*)", "git blame -L 1,5 f"),
    ("Bash(git remote:*)", "git remote -v"),
    ("Bash(git stash list:*)", "git stash list"),
    ("Bash(git stash:*)", "git stash push -m wip"),
    ("Bash(git tag:*)", "git tag -l"),
    ("Bash(git fetch:*)", "git fetch --prune origin"),
    ("Bash(git add:*)", "git add -A"),
    ("Bash(git commit:*)", "git commit -m 'fix: x' --no-verify"),
    ("Bash(git checkout:*)", "git checkout -b feature"),
    ("Bash(git switch:*)", "git switch -c feature"),
    ("Bash(git config:*)", "git config --get user.name"),
    ("Bash(git config:*)", "git config user.email"),
    ("Bash(git describe:*)", "git describe --tags --always"),
    ("Bash(git shortlog:*)", "git shortlog -sn"),
    ("Bash(git reflog:*)", "git reflog -n 10"),
    ("Bash(git rev-list:*)", "git rev-list --count HEAD"),
    ("Bash(git cat-file:*)", "git cat-file -p HEAD"),
    ("Bash(git merge-base:*)", "git merge-base HEAD main"),
    ("Bash(git ls-tree:*)", "git ls-tree -r --name-only HEAD"),
    ("Bash(git for-each-ref:*)", "git for-each-ref --format='%(refname)' refs/heads"),
    ("Bash(git:*)", "git --no-pager log --oneline -3"),
]


@pytest.mark.parametrize(("rule", "command"), EVERYDAY)
async def test_everyday_forms_stay_allowed(tmp_path: Path, rule: str, command: str) -> None:
    allowed, reason, asked = await decide(tmp_path, command, allow=(rule,))
    assert allowed and asked == [], reason


# ------------------------------------------------------------------------------------------ the oracle

def spellings(long: str, short: str | None, value: str) -> list[list[str]]:
    """Every prefix of `long` in both value forms, its `--no-` forms, and the short option attached and apart."""
    forms: list[list[str]] = []
    for n in range(3, len(long) + 1):
        p = long[:n]
        forms += [[f"{p}={value}"], [p, value], [f"--no-{p[2:]}"], [f"--no-{p[2:]}={value}"]]
    if short:
        forms += [[f"{short}{value}"], [short, value]]
    return forms


@pytest.mark.parametrize(("sub", "long", "short", "tail"), [
    ("grep", "--open-files-in-pager", "-O", ["x"]),
    ("ls-remote", "--upload-pack", None, ["."]),
    ("ls-remote", "--exec", None, ["."]),
])
def test_every_spelling_git_runs_is_code_or_unknown(tmp_path: Path, sub: str, long: str, short: str | None,
                                                    tail: list[str]) -> None:
    """The oracle is what the real git does: every spelling that ran the marker command is one the gate flags."""
    work = repo(tmp_path)
    ran = 0
    for words in spellings(long, short, "touch MARK"):
        argv = ["git", sub, *words, *tail]
        bash(shlex.join(argv), work)
        if (work / "MARK").exists():
            ran += 1
            (work / "MARK").unlink()
            assert {f.effect for f in git_findings(argv, 0) if f.index == 2} <= {Effect.CODE, Effect.UNKNOWN}
            assert any(f.index == 2 for f in git_findings(argv, 0)), argv
    assert ran >= len(long) - 4  # most prefixes ran it: the oracle itself works


@pytest.mark.parametrize("sub", ["log", "show", "diff", "range-diff", "format-patch", "blame", "shortlog"])
def test_every_spelling_that_writes_a_file_is_a_write_or_unknown(tmp_path: Path, sub: str) -> None:
    work = repo(tmp_path)
    tails = {"show": ["HEAD"], "diff": ["HEAD"], "range-diff": ["HEAD...HEAD"], "format-patch": ["-1"],
             "blame": ["x.txt"], "shortlog": ["HEAD"], "log": ["-1"]}
    wrote = 0
    for words in [*spellings("--output", None, "OUT"), *spellings("--output-directory", "-o", "OUT")]:
        argv = ["git", sub, *words, *tails[sub]]
        bash(shlex.join(argv), work)
        if (work / "OUT").exists():
            wrote += 1
            subprocess.run(["rm", "-rf", str(work / "OUT")], check=True)
            found = [f for f in git_findings(argv, 0) if f.index in (2, 3)]
            assert found and all(f.effect is Effect.UNKNOWN or (f.effect is Effect.WRITES and f.path == "OUT")
                                 for f in found), (argv, found)
    assert wrote >= 2, sub
