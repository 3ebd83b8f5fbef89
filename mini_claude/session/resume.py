"""Saving a session's conversation as it goes, and picking up an old one: `continue_` (the newest for this folder),
`resume` (an id or its prefix; without one, the front end's `pick`), `fork` (go on from it under a new id). The
files are mini_claude.agent.sessions'; the CLI's picker and listing are cli/resume.py. The session's checkpoints
of file changes (agent/checkpoints.py, for `/rewind`) are kept beside its file and follow it when it is resumed (a fork gets its own copy)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Awaitable, Callable
from pathlib import Path

from mini_claude.agent.checkpoints import Checkpoints
from mini_claude.agent.sessions import (
    SessionInfo,
    SessionLog,
    checkpoints_dir,
    list_sessions,
    load_session,
    replay_session,
    sessions_dir,
)
from mini_claude.errors import ConfigError
from mini_claude.paths import state_dir
from mini_claude.session.parts import SessionParts, SessionUI

__all__ = ["PICKER_ROWS", "PickFn", "record_session", "resume_session"]

PickFn = Callable[[list[SessionInfo]], Awaitable[SessionInfo | None]]
PICKER_ROWS = 20


def record_session(parts: SessionParts) -> SessionLog:
    """Start saving this session's conversation (a new file named by its id)."""
    log = SessionLog.create(state_dir(parts.env), parts.agent.ctx.cwd, parts.session_id)
    parts.agent.on_history = log.sync
    parts.agent.checkpoints = Checkpoints(checkpoints_dir(log.path), parts.agent.history)
    parts.session_log = log
    return log


async def resume_session(parts: SessionParts, *, continue_: bool, resume: str | None, ui: SessionUI,
                         pick: PickFn | None, fork: bool = False) -> bool:
    """Load the session the flags name into the agent and keep writing to its file (`fork`: to a new file under
    this session's own id, the old one left as it was); False when none was asked for. Raises ConfigError when the
    named one does not exist (or there is none to continue)."""
    if not continue_ and resume is None:
        return False
    cwd = parts.agent.ctx.cwd
    saved = list_sessions(state_dir(parts.env), cwd)
    chosen: SessionInfo | None
    if continue_:
        chosen = saved[0] if saved else None
        if chosen is None:
            raise ConfigError(f"no saved conversation to continue in {cwd}")
    elif resume:
        chosen = next((s for s in saved if s.id == resume or s.id.startswith(resume)), None)
        if chosen is None:
            raise ConfigError(f"no saved conversation {resume!r} for {cwd} (saved in "
                              f"{sessions_dir(state_dir(parts.env), cwd)})")
    else:
        if pick is None:
            raise ConfigError("--resume needs a session ID without a terminal (or use --continue)")
        if not saved:
            ui.info("no saved conversations for this folder")
            return False
        chosen = await pick(saved[:PICKER_ROWS])
        if chosen is None:
            return False
    raw = replay_session(chosen.path)
    history = load_session(chosen.path)  # raw, with a crash's unanswered tool calls closed
    previous = parts.session_log
    if fork:  # the conversation goes on in this session's own file; the old one stays as it was
        log = SessionLog.create(state_dir(parts.env), cwd, parts.session_id)
        _copy_checkpoints(checkpoints_dir(chosen.path), checkpoints_dir(log.path))  # its changes rewind too
    else:
        parts.session_id = chosen.id
        log = SessionLog(chosen.path, chosen.id, cwd, written=raw)  # what the file holds; the closing comes next
    if previous is not None and previous is not log:
        previous.close()
    parts.agent.history[:] = history
    if parts.agent.on_reset is not None:  # tools tool_search found in the other conversation are not kept
        parts.agent.on_reset(parts.agent.history)
    parts.agent.on_history = log.sync
    # the file changes of a resumed session can still be rewound (a fork, from its own copy)
    parts.agent.checkpoints = Checkpoints(checkpoints_dir(log.path), parts.agent.history)
    parts.session_log = log
    log.sync(parts.agent.history)  # a crash's unanswered tool calls, closed by load_session, are saved too
    how = f"forked {chosen.id} as {parts.session_id}" if fork else f"resumed {chosen.id}"
    ui.info(f"{how} ({len(history)} messages): {chosen.first_prompt}")
    return True


def _copy_checkpoints(source: Path, target: Path) -> None:
    """A forked session's own copy of the checkpoints of the one it came from (none when it had none)."""
    if source.is_dir() and not source.is_symlink() and not target.exists():
        try:
            shutil.copytree(source, target, symlinks=True)
            os.chmod(target, 0o700)
        except OSError:
            pass  # the fork goes on; only its rewind of the earlier changes is lost
