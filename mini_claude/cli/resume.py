"""The CLI's side of saved sessions: `describe` (a line of the REPL's `/resume` picker). Saving and resuming
(`--continue`, `--resume ID`, `--fork-session`) are the session layer's (session/resume.py), re-exported here."""

from __future__ import annotations

import time

from mini_claude.agent.sessions import SessionInfo
from mini_claude.session.resume import PICKER_ROWS, PickFn, record_session, resume_session

__all__ = ["PICKER_ROWS", "PickFn", "describe", "record_session", "resume_session"]


def describe(info: SessionInfo, now: float | None = None) -> str:
    """`3 h ago · 12 KB · fix the login bug`."""
    age = (now if now is not None else time.time()) - info.modified
    when = f"{int(age // 60)} min ago" if age < 3600 else f"{int(age // 3600)} h ago" if age < 86400 \
        else f"{int(age // 86400)} d ago"
    return f"{when} · {max(1, info.size // 1024)} KB · {info.first_prompt or '(no prompt)'}"
