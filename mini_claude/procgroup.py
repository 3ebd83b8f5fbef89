"""Signalling a child's process group: the one helper the commands we start in their own group share (the shell
tool's commands, hooks), and the groups still running (`track_group` / `forget_group`), which `kill_tracked_groups`
ends at once when mini-claude must die without its clean-up (a second SIGTERM or SIGHUP, cli/terminate.py).
Nothing happens at import."""

from __future__ import annotations

import os
import signal

__all__ = ["forget_group", "kill_tracked_groups", "signal_group", "track_group"]

_tracked: set[int] = set()  # process groups started and not yet ended


def signal_group(pgid: int, sig: int) -> bool:
    """Send `sig` to process group `pgid`; False when no process is left in it (or it is not ours to signal)."""
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def track_group(pgid: int) -> None:
    """Remember a process group we started, until `forget_group`."""
    _tracked.add(pgid)


def forget_group(pgid: int) -> None:
    """The group has been ended and its leader reaped."""
    _tracked.discard(pgid)


def kill_tracked_groups() -> None:
    """SIGKILL every group still remembered (no waiting, safe in a signal handler): the process is about to die
    without running its clean-up."""
    for pgid in list(_tracked):
        signal_group(pgid, signal.SIGKILL)
