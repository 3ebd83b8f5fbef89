"""SIGTERM and SIGHUP (a `kill`, a closed terminal, a supervisor stopping us) end a session the way Ctrl+C does:
the running session's task is cancelled, so every `finally` runs — background commands, foreground commands and MCP
servers are stopped and reaped, hooks' SessionEnd fires — and `mini-claude` exits with 128 + the signal's number,
as shells report a death by that signal. Without this the default action would end the process at once, leaving
every child behind. A second signal of either kind while that clean-up runs gets the default action, once every
shell command's process group still running has been killed (`procgroup.kill_tracked_groups`): a stuck clean-up
can be cut short, yet no command outlives mini-claude."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from types import FrameType

from mini_claude.procgroup import kill_tracked_groups

__all__ = ["TERMINATING_SIGNALS", "end_session_on_terminate", "terminated_by"]

TERMINATING_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
_received: list[int] = []


def end_session_on_terminate() -> None:
    """From inside the session's main task: turn the next SIGTERM or SIGHUP into its cancellation."""
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    if task is None:
        return
    for sig in TERMINATING_SIGNALS:
        # a loop that takes no signal handlers (not the main thread, not a Unix loop) keeps the default action:
        # nothing to clean up there that the caller's own teardown does not already do
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(sig, _stop, loop, task, sig)


def terminated_by() -> int | None:
    """The signal that ended the session (None: none did)."""
    return _received[0] if _received else None


def _stop(loop: asyncio.AbstractEventLoop, task: asyncio.Task[object], sig: int) -> None:
    _received.append(sig)
    for other in TERMINATING_SIGNALS:  # the next one ends us at once: a stuck clean-up can still be ended
        if loop.remove_signal_handler(other):  # True only where end_session_on_terminate installed one
            signal.signal(other, _die_now)
    task.cancel()


def _die_now(sig: int, _frame: FrameType | None) -> None:
    """The second signal: kill the commands still running, then die of the signal (its default action)."""
    kill_tracked_groups()
    signal.signal(sig, signal.SIG_DFL)
    os.kill(os.getpid(), sig)
