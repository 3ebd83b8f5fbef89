"""Test helpers for real server processes: paths to the faulty servers, and asserting processes are gone."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from mini_claude.mcp.transports.stdio import StdioParams

__all__ = [
    "FAULTY_SERVER",
    "assert_group_gone",
    "assert_pid_gone",
    "faulty_params",
    "is_zombie",
    "pid_exists",
    "read_pidfile",
]

SERVERS_DIR = Path(__file__).resolve().parent / "servers"
FAULTY_SERVER = SERVERS_DIR / "faulty_server.py"


def faulty_params(mode: str = "normal", *extra: str, env: dict[str, str] | None = None) -> StdioParams:
    """StdioParams that run the faulty server in `mode` with this interpreter."""
    return StdioParams(command=sys.executable, args=[str(FAULTY_SERVER), "--mode", mode, *extra], env=env)


def _proc_stat(pid: int) -> tuple[str, int, int] | None:
    """(state, ppid, pgrp) of `pid` from /proc, or None when there is no such process (or no /proc)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # the fields after the parenthesised command name (which may itself contain spaces or parentheses)
    fields = stat[stat.rfind(")") + 2 :].split()
    return fields[0], int(fields[1]), int(fields[2])


def is_zombie(pid: int) -> bool:
    """True when `pid` is a zombie (exited, not yet reaped). Linux only (reads /proc); False elsewhere."""
    info = _proc_stat(pid)
    return info is not None and info[0] == "Z"


def pid_exists(pid: int) -> bool:
    """True when a process (zombie included) has this pid."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _is_dead(pid: int) -> bool:
    """Gone, or a zombie that is not ours to reap (an orphan waiting for init, which may poll slowly)."""
    if not pid_exists(pid):
        return True
    info = _proc_stat(pid)
    return info is not None and info[0] == "Z" and info[1] != os.getpid()


def _group_members(pgid: int) -> list[int]:
    if not Path("/proc/self/stat").exists():  # no /proc: ask the kernel whether the group is non-empty
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return []
        except PermissionError:
            pass
        return [pgid]
    members = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            info = _proc_stat(int(entry.name))
            if info is not None and info[2] == pgid:
                members.append(int(entry.name))
    return members


def assert_pid_gone(pid: int, *, within_s: float = 0.0) -> None:
    """Assert `pid` is dead and, if it was our child, reaped (no zombie of ours).

    `within_s` allows for a signal to land. An orphan (a grandchild) killed but still a zombie under init counts
    as dead: reaping it is init's job, and some inits poll only every couple of seconds.
    """
    deadline = time.monotonic() + within_s
    while not _is_dead(pid):
        if time.monotonic() >= deadline:
            state = "a zombie we never reaped" if is_zombie(pid) else "still running"
            raise AssertionError(f"pid {pid} is {state}")
        time.sleep(0.02)


def assert_group_gone(pgid: int, *, within_s: float = 1.0) -> None:
    """Assert nothing in process group `pgid` is alive (and none of its members is a zombie of ours)."""
    deadline = time.monotonic() + within_s
    while True:
        alive = [pid for pid in _group_members(pgid) if not _is_dead(pid)]
        if not alive:
            return
        if time.monotonic() >= deadline:
            raise AssertionError(f"process group {pgid} still has live members: {alive}")
        time.sleep(0.02)


def read_pidfile(path: Path, *, within_s: float = 5.0) -> int:
    """The pid a server wrote to `path` (it writes atomically), waiting up to `within_s` for the file."""
    deadline = time.monotonic() + within_s
    while not path.exists():
        if time.monotonic() >= deadline:
            raise AssertionError(f"{path} was never written")
        time.sleep(0.01)
    return int(path.read_text())
