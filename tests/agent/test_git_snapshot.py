"""The git snapshot (git_snapshot.py) with real git and with stand-in `git` programs: what it reads, that the status
is read only in a trusted folder, that it is bounded in output and time (a stuck git is killed and reaped), and that
outside a repository or without git nothing runs."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from mini_claude.git_snapshot import (
    MAX_OUTPUT_BYTES,
    MAX_STATUS_CHARS,
    GitSnapshot,
    read_git_snapshot,
    start_git_snapshot,
)
from tests.helpers import require

pytestmark = pytest.mark.timeout(60)


def _git() -> str:
    found = shutil.which("git")
    if found is None:
        require("git", "the snapshot is read with git")
    return found


def _run(git: str, cwd: Path, env: dict[str, str], *commands: list[str]) -> None:
    for args in commands:
        subprocess.run([git, *args], cwd=cwd, env=env, check=True, timeout=30, capture_output=True)


def _alive(pids: list[int]) -> bool:
    """Whether any of `pids` still has a process table entry (running, or a zombie nobody has reaped)."""
    return any(Path(f"/proc/{pid}").exists() for pid in pids)


def _fake_git(tmp_path: Path, body: str) -> str:
    script = tmp_path / "bin" / "git"
    script.parent.mkdir(exist_ok=True)
    script.write_text(f"#!/bin/sh\n{body}\n")
    script.chmod(0o755)
    return str(script)


async def test_branch_status_and_commits_of_a_real_repository(tmp_path: Path) -> None:
    git = _git()
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com"}
    _run(git, tmp_path, env, ["init", "-q", "-b", "work"], ["commit", "-q", "--allow-empty", "-m", "one"],
         ["commit", "-q", "--allow-empty", "-m", "two"])
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "new.txt").write_text("x")
    below = start_git_snapshot(tmp_path / "sub", env, trusted=True)  # a repository above counts
    assert below is not None and (await below) is not None
    (tmp_path / "sub" / "new.txt").rename(tmp_path / "new.txt")
    task = start_git_snapshot(tmp_path, env, trusted=True)
    assert task is not None
    snapshot = await task
    assert snapshot is not None and snapshot.branch == "work" and snapshot.status == "?? new.txt"
    assert [line.split(" ", 1)[1] for line in snapshot.commits] == ["two", "one"]
    # not trusted: its .git/config is a stranger's, so no git runs (a git on PATH that leaves a mark proves it)
    marker = tmp_path / "git-ran"
    fake = _fake_git(tmp_path, f"touch {marker}\nexit 0")
    untrusted_task = start_git_snapshot(tmp_path, {**env, "PATH": str(Path(fake).parent)}, trusted=False)
    assert untrusted_task is not None
    untrusted = await untrusted_task
    assert untrusted == GitSnapshot("work", None, []) and not marker.exists()
    assert "(not read: this folder is not trusted" in untrusted.reminder()


async def test_a_repository_without_commits_and_a_folder_outside_any(tmp_path: Path) -> None:
    git = _git()
    _run(git, tmp_path, dict(os.environ), ["init", "-q", "-b", "main", str(tmp_path / "repo")])
    snapshot = await read_git_snapshot(git, tmp_path / "repo", os.environ)
    assert snapshot == GitSnapshot("main", "", [])
    assert "Status:\n(clean)\n" in snapshot.reminder() and "Recent commits" not in snapshot.reminder()
    (tmp_path / "plain").mkdir()
    assert start_git_snapshot(tmp_path / "plain", os.environ, trusted=True) is None  # no repository: no process


async def test_without_git_nothing_runs(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    assert start_git_snapshot(tmp_path, {"PATH": str(tmp_path / "empty")}, trusted=True) is None


async def test_a_flood_of_status_is_cut_and_its_git_killed(tmp_path: Path) -> None:
    git = _fake_git(tmp_path, 'case "$*" in *status*) echo "## main"; exec yes "?? some/file.txt";; *) echo main;; esac')
    snapshot = await read_git_snapshot(git, tmp_path, os.environ)
    assert snapshot is not None and snapshot.status is not None
    assert len(snapshot.status) < MAX_OUTPUT_BYTES + 1
    reminder = snapshot.reminder()
    assert len(reminder) < MAX_STATUS_CHARS + 1000 and "[…cut: more changes than shown" in reminder


async def test_a_stuck_git_is_given_up_killed_and_reaped(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    git = _fake_git(tmp_path, f'echo $$ >> {pids}; exec sleep 30')
    began = time.monotonic()
    assert await read_git_snapshot(git, tmp_path, os.environ, timeout_s=0.5) is None
    assert time.monotonic() - began < 5
    started = [int(pid) for pid in pids.read_text().split()]
    assert len(started) == 2
    # polled without blocking the loop: a child watcher may reap through it
    deadline = time.monotonic() + 10
    while _alive(started):
        assert time.monotonic() < deadline, "a killed git was not reaped"
        await asyncio.sleep(0.05)


async def test_a_failing_git_is_no_snapshot(tmp_path: Path) -> None:
    git = _fake_git(tmp_path, "echo 'fatal: not a git repository' >&2; exit 128")
    assert await read_git_snapshot(git, tmp_path, os.environ) is None


@pytest.mark.parametrize(("line", "branch"), [("## main", "main"), ("## main...origin/main [ahead 1]", "main"),
                                              ("## No commits yet on dev", "dev"), ("## HEAD (no branch)", ""),
                                              ("## feat/x...up/feat/x", "feat/x")])
def test_the_branch_of_a_status_branch_line(line: str, branch: str) -> None:
    from mini_claude.git_snapshot import _branch_of

    assert _branch_of(line) == branch
