"""Issue 27's outside review, one test per finding, with the real programs and marker files: each command is first
run by bash to prove it really runs code, writes the file or prints the key; then the gate, under the user's
everyday rule, must not let it run unasked (and in bypassPermissions mode with `Bash(rm:*)` denied, must refuse the
`rm` variant); the model key must not reach a command's output. Only the gate's and the Bash tool's public surface
is used, so the same file runs against a8a012a, where every test here fails.

1. abbreviated long options: `git grep --open-files-in-pa`, `git ls-remote --upload-pa`, `tar --to-com`,
   `tar --checkpoint-ac`, `zip --unzip-com`;
2. programs missing from the table: `rg --pre`, `sort --compress-program`, `split --filter`;
3. a read command's file-writing option: `git log --output=.git/config`;
4. the model key in every command's environment: `echo $ANTHROPIC_API_KEY`.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from mini_claude.permissions import PermissionGate, PermissionMode, RuleSet
from mini_claude.tools.base import ToolContext
from mini_claude.tools.shell import BashTool
from tests.helpers import require_program

MARK = "MARKER-RAN"


def _workspace(tmp: Path) -> Path:
    work = tmp / "work"
    work.mkdir()
    for name in ("git", "tar", "zip", "rg", "sort", "split"):
        require_program(name, "the review's findings are run with the real program")
    env = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=work, check=True, capture_output=True, env=env, timeout=30)
    git("init", "-q")
    (work / "notes.txt").write_text("word\nsecond line\n")
    (work / "big.txt").write_text("".join(f"line {n}\n" for n in range(20000)))
    (work / "victim").write_text("keep me\n")
    git("add", "notes.txt")
    git("-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q", "-m",
        "[core]\n\tfsmonitor = touch FSMONITOR-RAN\n")
    subprocess.run(["tar", "-cf", "a.tar", "notes.txt"], cwd=work, check=True, timeout=30)
    return work


def _bash(command: str, work: Path) -> None:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["bash", "-c", command], cwd=work, capture_output=True, env=env, timeout=60)


def _decide(command: str, work: Path, mode: PermissionMode, allow: tuple[str, ...] = (),
            deny: tuple[str, ...] = ()) -> bool:
    gate = PermissionGate(mode, RuleSet.from_strings(allow=allow, deny=deny), ask=None, cwd=work, home=work.parent)
    return asyncio.run(gate.check(BashTool(env={}), {"command": command})).allowed


CODE = [  # (the user's rule, a command that runs `touch MARKER-RAN`)
    ("Bash(git grep:*)", f"git grep --open-files-in-pa='touch {MARK}' word"),
    ("Bash(git ls-remote:*)", f"git ls-remote --upload-pa='touch {MARK}' ."),
    ("Bash(tar:*)", f"tar -xf a.tar --to-com='touch {MARK}'"),
    ("Bash(tar:*)", f"tar -cf out.tar --checkpoint=1 --checkpoint-ac=exec='touch {MARK}' big.txt"),
    ("Bash(zip:*)", f"zip -q out.zip notes.txt -T --unzip-com='touch {MARK}'"),
    ("Bash(rg:*)", "rg --pre=sh word payload.sh"),
    ("Bash(sort:*)", "sort -S 1K -T sorttmp --compress-program=sh big.txt"),
    ("Bash(split:*)", f"split -n 1 --filter='touch {MARK}' notes.txt"),
]


@pytest.mark.parametrize(("rule", "command"), CODE, ids=[c for _, c in CODE])
def test_an_option_that_runs_code_asks_under_the_programs_rule(tmp_path: Path, rule: str, command: str) -> None:
    work = _workspace(tmp_path)
    (work / "payload.sh").write_text(f"word\ntouch {MARK}\n")
    (work / "sorttmp").mkdir()
    if "compress-program" in command:  # sort hands its temporary files through `sh -d` when decompressing
        shutil.copy(work / "big.txt", work / "big2.txt")
        (work / "big.txt").write_text(f"touch {MARK}\n" * 20000)
    _bash(command, work)
    assert (work / MARK).exists(), f"bash ran {command!r} without running the marker (the test is not real)"
    (work / MARK).unlink()
    assert not _decide(command, work, PermissionMode.DEFAULT, allow=(rule,)), f"{command!r} ran under {rule}"


@pytest.mark.parametrize("command", [
    "git grep --open-files-in-pa='rm victim' word",
    "tar -xf a.tar --to-com='rm victim'",
    "split -n 1 --filter='rm victim' notes.txt",
])
def test_bypass_mode_refuses_rm_hidden_in_an_option_while_rm_is_denied(tmp_path: Path, command: str) -> None:
    work = _workspace(tmp_path)
    _bash(command, work)
    assert not (work / "victim").exists(), f"bash ran {command!r} without removing victim (the test is not real)"
    assert not _decide(command, work, PermissionMode.BYPASS, deny=("Bash(rm:*)",))


def test_git_log_output_into_git_config_asks(tmp_path: Path) -> None:
    work = _workspace(tmp_path)
    command = "git log -1 --format=%B --output=.git/config"
    original = (work / ".git" / "config").read_text()
    _bash(command, work)
    assert "fsmonitor = touch FSMONITOR-RAN" in (work / ".git" / "config").read_text()  # the write is real
    (work / ".git" / "config").write_text(original)
    assert not _decide(command, work, PermissionMode.DEFAULT, allow=("Bash(git log:*)",))


def test_the_model_key_does_not_reach_a_commands_output(tmp_path: Path) -> None:
    work = _workspace(tmp_path)
    key = "sk-ant-review-canary-0123456789abcdef"
    tool = BashTool(env={"PATH": os.environ["PATH"], "HOME": str(tmp_path), "ANTHROPIC_API_KEY": key})
    command = "echo $ANTHROPIC_API_KEY"
    assert key in subprocess.run(["bash", "-c", command], env={"ANTHROPIC_API_KEY": key}, capture_output=True,
                                 text=True, timeout=30).stdout  # a plain shell shows it
    assert _decide(command, work, PermissionMode.DEFAULT, allow=("Bash(echo:*)",))
    result = asyncio.run(tool.run({"command": command}, ToolContext(cwd=work, spill_dir=tmp_path / "spill")))
    assert key not in result.as_text()
