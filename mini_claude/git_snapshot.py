"""The repository's state at the start of a session: branch, short status and recent commits, read once with `git`.

`start_git_snapshot` starts the reading as a task beside the MCP servers' start-up; the conversation's first request
awaits it (`GitSnapshot.reminder` is what the model is told). It is quiet and bounded: outside a repository or
without `git` there is no snapshot and no process; each command's output is read up to `MAX_OUTPUT_BYTES` (the
process is killed beyond) and the whole reading to `GIT_TIMEOUT_S` (every process killed and reaped); any failure is
no snapshot, never an error.

A repository's own `.git/config` is a stranger's file when the folder is not trusted (an unpacked archive can ship
one): git runs commands it names (an fsmonitor, a clean filter, a signature program, …), and no list of switches
can be sure to turn every one off. So in an untrusted folder no git process runs at all: the branch is read from
`.git/HEAD` (a bounded read of a regular file; a name git would not accept for a branch, such as one spanning lines,
is no branch) and the status and log are not read. Every command in a trusted folder still runs with the fsmonitor
and signature checks switched off.

What the repository wrote (a branch name, file names, commit subjects) goes into the model's `<system-reminder>` with
every `<system-reminder` / `</system-reminder` tag in it made inert (`&lt;`), so that text cannot close the block and
open one of its own that would read as mini-claude's. Imports nothing of the rest of the product: the session starts it before its own
modules are loaded.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = ["GIT_TIMEOUT_S", "MAX_COMMITS", "MAX_OUTPUT_BYTES", "MAX_STATUS_CHARS", "GitSnapshot", "head_branch",
           "in_git_repository", "inert_reminder_tags", "read_git_snapshot", "start_git_snapshot"]

GIT_TIMEOUT_S = 2.0
MAX_OUTPUT_BYTES = 64 * 1024
MAX_STATUS_CHARS = 2_000
MAX_COMMITS = 5
MAX_SUBJECT_CHARS = 200  # a commit line is cut here
MAX_HEAD_BYTES = 4096  # .git/HEAD is one line
KILL_GRACE_S = 1.0  # for a killed git's pipe to close
# what `git check-ref-format` refuses in a branch name: control characters, blanks and ~ ^ : ? * [ \\
_NOT_IN_A_BRANCH_RE = re.compile(r"[\x00-\x20\x7f~^:?*\[\\]")
_REMINDER_TAG_RE = re.compile(r"<(?=\s*/?\s*system-reminder)", re.IGNORECASE)
_SAFE = ("--no-pager", "-c", "core.fsmonitor=false", "-c", "log.showSignature=false", "-c", "color.ui=false")


@dataclass(frozen=True)
class GitSnapshot:
    branch: str  # "" on a detached HEAD
    status: str | None  # `git status --short` lines, "" when clean, None when not read (an untrusted folder)
    commits: list[str]  # `git log --oneline`, newest first

    def reminder(self) -> str:
        """The snapshot as the model reads it at the start of the conversation."""
        if self.status is None:
            status = "(not read: this folder is not trusted, so git is not run in it)"
        elif len(self.status) > MAX_STATUS_CHARS:
            status = (self.status[:MAX_STATUS_CHARS].rsplit("\n", 1)[0]
                      + "\n[…cut: more changes than shown; run `git status` to see them all]")
        else:
            status = self.status or "(clean)"
        status = inert_reminder_tags(status)
        lines = ["<system-reminder>",
                 "Git state of the working directory when this session started (a snapshot: it is not updated as "
                 "files change; run git for the current state):",
                 f"Current branch: {inert_reminder_tags(self.branch) or '(detached HEAD)'}",
                 "", "Status:", status]
        if self.commits:
            lines += ["", "Recent commits:", *map(inert_reminder_tags, self.commits)]
        lines += ["", "mini-claude added this context itself; it is not part of the user's message.",
                  "</system-reminder>"]
        return "\n".join(lines)


def in_git_repository(cwd: Path) -> bool:
    """Whether `cwd` is inside a git work tree (a `.git` folder or file here or above): no process."""
    try:
        resolved = cwd.resolve()
        return any((folder / ".git").exists() for folder in (resolved, *resolved.parents))
    except OSError:
        return False


def start_git_snapshot(cwd: Path, env: Mapping[str, str], *, trusted: bool) -> asyncio.Task[GitSnapshot | None] | None:
    """The reading as a task on the running loop; None (no task, no process) outside a repository or without git."""
    if not in_git_repository(cwd):
        return None
    if not trusted:
        return asyncio.ensure_future(_untrusted_snapshot(cwd))
    git = shutil.which("git", path=env.get("PATH"))
    if git is None:
        return None
    return asyncio.ensure_future(read_git_snapshot(git, cwd, env))


async def _untrusted_snapshot(cwd: Path) -> GitSnapshot | None:
    """An untrusted folder's snapshot: the branch from `.git/HEAD`, nothing run (see the module docstring)."""
    branch = head_branch(cwd)
    return None if branch is None else GitSnapshot(branch, None, [])


def head_branch(cwd: Path) -> str | None:
    """The branch `.git/HEAD` names ("" when detached), read without git: None when there is no readable `.git`
    folder here or above (a worktree's `.git` file, a FIFO or an oversized HEAD are not followed)."""
    try:
        folders = (cwd.resolve(), *cwd.resolve().parents)
    except OSError:
        return None
    for folder in folders:
        if not (folder / ".git").exists():
            continue
        head = folder / ".git" / "HEAD"
        try:
            fd = os.open(head, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
        except OSError:
            return None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None
            text = os.read(fd, MAX_HEAD_BYTES).decode("utf-8", "replace").strip()
        except OSError:
            return None
        finally:
            os.close(fd)
        if not text.startswith("ref: refs/heads/"):
            return ""
        name = text.removeprefix("ref: refs/heads/")
        return None if _NOT_IN_A_BRANCH_RE.search(name) else _cut(name)  # not a branch git would make: no snapshot
    return None


def inert_reminder_tags(text: str) -> str:
    """Repository text for a reminder: a `<system-reminder` or `</system-reminder` tag in it made inert (also used
    for the memory files, agent/memory.py)."""
    return _REMINDER_TAG_RE.sub("&lt;", text)


async def read_git_snapshot(git: str, cwd: Path, env: Mapping[str, str], *,
                            timeout_s: float = GIT_TIMEOUT_S) -> GitSnapshot | None:
    """Branch, status and recent commits of a trusted folder: two commands run concurrently (the status with its
    branch line; the log); None when the first fails or both take longer than `timeout_s`."""
    run_env = {**env, "GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0"}
    tasks = [asyncio.ensure_future(_git(git, args, cwd, run_env))
             for args in (["status", "--short", "--branch"], ["log", "--oneline", f"-n{MAX_COMMITS}"])]
    try:
        head, log = await asyncio.wait_for(asyncio.gather(*tasks), timeout_s)
    except (TimeoutError, OSError):
        return None
    finally:
        for task in tasks:
            task.cancel()
    if head is None:
        return None
    branch_line, _, status = head.partition("\n")
    commits = [_cut(line) for line in (log or "").splitlines()[:MAX_COMMITS]]  # None: no commits yet
    return GitSnapshot(_cut(_branch_of(branch_line)), status.rstrip(), commits)


def _branch_of(line: str) -> str:
    """The branch named by `git status --branch`'s first line (`## main...origin/main [ahead 1]`, `## No commits yet
    on main`, `## HEAD (no branch)`); "" when detached."""
    name = line.removeprefix("## ").removeprefix("No commits yet on ").removeprefix("Initial commit on ")
    if name.startswith("HEAD (no branch)"):
        return ""
    return name.split("...", 1)[0].split(" [", 1)[0].strip()


def _cut(line: str) -> str:
    return line if len(line) <= MAX_SUBJECT_CHARS else line[:MAX_SUBJECT_CHARS] + "…"


async def _git(git: str, args: list[str], cwd: Path, env: dict[str, str]) -> str | None:
    """One command's stdout (bounded), None when it exits non-zero. Cancelled (the timeout): killed and reaped."""
    proc = await asyncio.create_subprocess_exec(git, *_SAFE, *args, cwd=cwd, env=env, stdin=asyncio.subprocess.DEVNULL,
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
    assert proc.stdout is not None
    try:
        try:
            out = await proc.stdout.readexactly(MAX_OUTPUT_BYTES)
        except asyncio.IncompleteReadError as short:  # the usual case: it all fitted
            out = short.partial
        if len(out) == MAX_OUTPUT_BYTES:  # more than we keep: no need to let it finish
            _kill(proc)
        elif await proc.wait() != 0:
            return None
        return out.decode("utf-8", "replace")
    finally:
        if proc.returncode is None:
            _kill(proc)
        # the pipe read to its end (what a killed git left in it): only then does asyncio count the process as
        # finished. Bounded: a grandchild holding the pipe open must not hold us (the child watcher reaps git
        # itself either way).
        with contextlib.suppress(TimeoutError):
            await asyncio.shield(asyncio.wait_for(_finish(proc), KILL_GRACE_S))


async def _finish(proc: asyncio.subprocess.Process) -> None:
    assert proc.stdout is not None
    while await proc.stdout.read(MAX_OUTPUT_BYTES):
        pass
    await proc.wait()


def _kill(proc: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError):
        proc.kill()
