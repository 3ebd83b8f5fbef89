"""The execution oracle: run one command with real bash in a scratch directory and report what actually ran.

Two independent witnesses, per command:

- `strace -f -e trace=execve` on the bash process: every program any process of the command started (real
  programs by absolute path included, `/bin/rm`), read from the trace file after the run;
- stub programs on PATH that record their own execution: a marker file named after the stub in MARK_DIR.

PATH holds the stubs and a few real programs the attacks need (awk, sed, perl, python3, tar, find, xargs, env,
base64, make, ssh, bash as sh): `git` is a no-op stub for the allow property and the real git for the deny one.
The environment is only what is set here (HOME, PATH, MARK_DIR, FUNCNEST, no system git config), so nothing
outside the scratch directory is reached by name.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path

BASH = "/bin/bash"
RUN_TIMEOUT_S = 5.0
FUNCNEST = "6"  # generated functions named `git` call `git`: bash's own recursion limit keeps them finite
_MARK = ': > "${MARK_DIR:?}/%s"\n'
# Stubs that mark and then behave as the real program would (wrappers run their command).
_STUBS = {
    "sudo": 'while [ $# -gt 0 ]; do case "$1" in -u|-g) shift 2;; -*) shift;; *) break;; esac; done\nexec "$@"\n',
    "timeout": 'while [ $# -gt 0 ]; do case "$1" in -s|-k) shift 2;; -*) shift;; *) break;; esac; done\n'
               'shift\nexec "$@"\n',
    "nohup": 'exec "$@"\n',
    "nice": 'case "$1" in -n) shift 2;; -[0-9]*) shift;; esac\nexec "$@"\n',
}
_MARKER_ONLY = ("rm", "touch", "cat", "ls", "f", "x", "foo")
# `timeout` / `nohup` / `nice` only change how an allowed command runs (allow rules look through them).
NO_MARK = frozenset({"timeout", "nohup", "nice"})
REAL = ("awk", "sed", "perl", "python3", "tar", "find", "xargs", "env", "base64", "make", "ssh", "sleep")
_EXECVE_RE = re.compile(r'^(\d+)\s+execve\("((?:[^"\\]|\\.)*)"')
_RESUMED_RE = re.compile(r"^(\d+)\s+<\.\.\. execve resumed>.*= (-?\d+)")
_RESULT_RE = re.compile(r"\) = (-?\d+)")


def make_bin(bin_dir: Path, *, real_git: bool) -> Path:
    """The PATH directory: stubs, real programs by symlink, bash as bash and sh."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    for name in (*_STUBS, *_MARKER_ONLY):
        script = bin_dir / name
        script.write_text("#!/bin/sh\n" + ("" if name in NO_MARK else _MARK % name) + _STUBS.get(name, ""))
        script.chmod(0o755)
    git = bin_dir / "git"
    if real_git:
        git.symlink_to(shutil.which("git") or "/usr/bin/git")
    else:
        git.write_text("#!/bin/sh\nexit 0\n")
        git.chmod(0o755)
    for name in REAL:
        found = shutil.which(name)
        if found:
            (bin_dir / name).symlink_to(found)
    for shell in ("bash", "sh"):
        (bin_dir / shell).symlink_to(BASH)
    return bin_dir


@dataclass(frozen=True)
class Ran:
    """What one command did: the programs started (basenames, in order, bash itself left out), the stubs that
    marked, the files left in the work directory besides `victim`, whether `victim` is gone, a timeout."""

    programs: tuple[str, ...]
    marks: frozenset[str]
    files: frozenset[str]
    victim_gone: bool
    timed_out: bool


def run(command: str, bin_dir: Path, scratch: Path, strace: str) -> Ran:
    """Run `command` as the bash tool does (`bash -c`) under strace, in a fresh directory under `scratch`."""
    work, marks, home = scratch / "work", scratch / "marks", scratch / "home"
    for d in (work, marks, home):
        d.mkdir(parents=True)
    (work / "victim").write_text("keep me")
    trace = scratch / "trace"
    env = {"PATH": str(bin_dir), "MARK_DIR": str(marks), "FUNCNEST": FUNCNEST, "HOME": str(home),
           "GIT_CONFIG_NOSYSTEM": "1", "LC_ALL": "C"}
    argv = [strace, "-f", "-qq", "-e", "trace=execve", "-e", "signal=none", "-o", str(trace), BASH, "-c", command]
    proc = subprocess.Popen(argv, cwd=work, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True)
    timed_out = False
    try:
        # The pipe closes only when every process holding it (background jobs included) has exited.
        proc.communicate(timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        timed_out = True
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
    programs = started_programs(trace.read_text(errors="replace") if trace.exists() else "")
    left = frozenset(p.name for p in work.iterdir() if p.name != "victim")
    return Ran(programs[1:], frozenset(p.name for p in marks.iterdir()), left, not (work / "victim").exists(),
               timed_out)


def started_programs(trace: str) -> tuple[str, ...]:
    """Basenames of the programs a trace shows started (successful execve, split lines joined)."""
    pending: dict[str, str] = {}
    started: list[str] = []
    for line in trace.splitlines():
        call = _EXECVE_RE.match(line)
        if call:
            pid, path = call.groups()
            if "<unfinished ...>" in line:
                pending[pid] = path
            else:
                result = _RESULT_RE.search(line)
                if result and result.group(1) == "0":
                    started.append(os.path.basename(path))
            continue
        resumed = _RESUMED_RE.match(line)
        if resumed and resumed.group(1) in pending:
            path = pending.pop(resumed.group(1))
            if resumed.group(2) == "0":
                started.append(os.path.basename(path))
    return tuple(started)
