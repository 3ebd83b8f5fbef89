"""The daily sweep of the state folder: every store's clean-up, run at most once a day, in a background thread, so
that nothing a session does at start-up grows with the size of the state folder.

What it cleans (each owner module says why and how; docs/ARCHITECTURE.md lists every file and its bound):

* MCP tool pins (`mcp-pins/`): entries unused for 30 days, groups of project folders that no longer exist, old
  store entries never adopted (`PinStore.prune`);
* sessions (`sessions/`): older than 30 days, beyond the newest 200 per folder, of folders that no longer exist;
* tool-output spill files (`tool-output/`): older than 7 days, and the oldest past 1 GiB in all;
* server logs (`mcp-logs/`): of servers that wrote nothing for 30 days;
* project-server approvals and trusted folders: the records of folders that no longer exist;
* files set aside as unusable (`*.bad`) or migrated (`*.migrated`): 30 days after that happened (and the temp
  files of writes a crash interrupted, 30 days old);
* the REPL's input history (`repl-history`, prompt_toolkit's file): cut to its last `MAX_REPL_HISTORY_BYTES`.

The era memory and the OAuth store bound themselves when they are written. `.last-sweep`'s mtime says when the last
sweep began; a sweep another process is running is not started twice (a non-blocking lock).
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from mini_claude.agent.sessions import prune_sessions
from mini_claude.mcp.approval import ApprovalStore
from mini_claude.mcp.host.server_log import prune_server_logs
from mini_claude.mcp.pinning import PinStore
from mini_claude.spill import SPILL_ROOT_NAME, cap_spills, sweep_old_spills
from mini_claude.statefile import exclusive, write_state_bytes
from mini_claude.trust import TrustStore

__all__ = ["ASIDE_MAX_AGE_S", "MAX_REPL_HISTORY_BYTES", "REPL_HISTORY_NAME", "SWEEP_EVERY_S", "SweepReport",
           "sweep_in_background", "sweep_state", "trim_history"]

log = logging.getLogger(__name__)

SWEEP_EVERY_S = 24 * 3600
ASIDE_MAX_AGE_S = 30 * 24 * 3600
REPL_HISTORY_NAME = "repl-history"
MAX_REPL_HISTORY_BYTES = 1024 * 1024
_MARKER = ".last-sweep"
_LOCK = ".sweep.lock"
_ASIDE_SUFFIXES = (".bad", ".migrated")


@dataclass
class SweepReport:
    """How much each clean-up removed (`ran` is False when another process was sweeping)."""

    ran: bool = False
    removed: dict[str, int] = field(default_factory=dict)


def sweep_state(state: Path, *, now: float | None = None, keep_spill: Path | None = None) -> SweepReport:
    """Run every clean-up on the state folder `state` now (see the module docstring). `keep_spill`: the running
    session's spill folder, never capped. Never raises: a clean-up that fails is logged and the others go on."""
    now = time.time() if now is None else now
    report = SweepReport()
    if not state.is_dir():
        return report
    with exclusive(state / _LOCK, blocking=False) as held:
        if not held:
            return report
        report.ran = True
        spills = state / SPILL_ROOT_NAME
        steps: dict[str, Callable[[], int]] = {
            "pins": lambda: PinStore.default({"MINI_CLAUDE_STATE_DIR": str(state)}).prune(now=now),
            "sessions": lambda: prune_sessions(state, now=now),
            "spills": lambda: (sweep_old_spills(spills, keep=keep_spill, now=now)
                               + cap_spills(spills, keep=keep_spill)),
            "server logs": lambda: prune_server_logs(state / "mcp-logs", now=now),
            "approvals": lambda: ApprovalStore.default({"MINI_CLAUDE_STATE_DIR": str(state)}).prune(),
            "trusted folders": lambda: TrustStore.in_state_dir(state).prune(),
            "set-aside files": lambda: _remove_asides(state, now - ASIDE_MAX_AGE_S),
            "repl history": lambda: int(trim_history(state / REPL_HISTORY_NAME)),
        }
        for name, step in steps.items():
            try:
                report.removed[name] = step()
            except Exception:  # a courtesy: one failing clean-up never stops the others, nor the session
                log.exception("state sweep: cleaning %s failed", name)
    done = {name: count for name, count in report.removed.items() if count}
    if done:
        log.info("state sweep of %s removed %s", state, ", ".join(f"{n} {name}" for name, n in done.items()))
    return report


def sweep_in_background(state: Path, *, keep_spill: Path | None = None, now: float | None = None
                        ) -> threading.Thread | None:
    """Start `sweep_state` in a daemon thread when the last sweep began over `SWEEP_EVERY_S` ago (or never);
    the thread, or None when no sweep is due. Costs one stat when none is due."""
    now = time.time() if now is None else now
    marker = state / _MARKER
    try:
        if now - marker.stat().st_mtime < SWEEP_EVERY_S:
            return None
    except FileNotFoundError:
        pass
    except OSError:
        return None
    if not state.is_dir():
        return None  # nothing to sweep yet (and no folder is created just for the marker)
    try:
        marker.touch(mode=0o600)
        os.utime(marker, (now, now))
    except OSError:
        return None
    thread = threading.Thread(target=sweep_state, args=(state,), kwargs={"keep_spill": keep_spill},
                              name="mini-claude-state-sweep", daemon=True)
    thread.start()
    return thread


def _remove_asides(folder: Path, cutoff: float) -> int:
    removed = 0
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return 0
    for entry in entries:
        # set aside or migrated, or the temp file of a write a crash interrupted (`.<name>.<random>.tmp`)
        if not (entry.name.endswith(_ASIDE_SUFFIXES) or (entry.name.startswith(".") and entry.name.endswith(".tmp"))):
            continue
        with contextlib.suppress(OSError):
            if entry.stat(follow_symlinks=False).st_mtime < cutoff:
                os.unlink(entry.path)
                removed += 1
    return removed


def trim_history(path: Path, max_bytes: int = MAX_REPL_HISTORY_BYTES) -> bool:
    """Cut prompt_toolkit's history file to its last `max_bytes`, at an entry boundary (each entry starts with a
    `# <time>` line); True when it was cut. Never raises."""
    try:
        size = os.stat(path, follow_symlinks=False).st_size
        if size <= max_bytes:
            return False
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        with os.fdopen(fd, "rb") as handle:
            handle.seek(size - max_bytes)
            tail = handle.read(max_bytes)
        start = tail.find(b"\n# ")
        write_state_bytes(path, tail[start + 1:] if start >= 0 else b"")
    except OSError as exc:
        log.debug("cannot trim %s: %s", path, exc)
        return False
    return True
