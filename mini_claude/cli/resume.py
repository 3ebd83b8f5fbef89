"""The CLI's side of saved sessions: `describe` and `age` (a session in the `/resume` picker), and the compact
view of a resumed conversation printed before the prompt (cli/terminal/conversation.py, re-exported). Saving and
resuming (`--continue`, `--resume ID`, `--fork-session`) are the session layer's (session/resume.py), re-exported
here."""

from __future__ import annotations

import time

from mini_claude.agent.sessions import SessionInfo
from mini_claude.cli.terminal.conversation import RESUME_EXCHANGES, conversation_lines
from mini_claude.session.resume import PICKER_ROWS, PickFn, record_session, resume_session

__all__ = ["PICKER_ROWS", "RESUME_EXCHANGES", "PickFn", "age", "conversation_lines", "describe", "record_session",
           "resume_session"]


def age(modified: float, now: float | None = None) -> str:
    """`5 min ago`, `3 h ago`, `2 d ago`."""
    seconds = (now if now is not None else time.time()) - modified
    return (f"{int(seconds // 60)} min ago" if seconds < 3600 else f"{int(seconds // 3600)} h ago"
            if seconds < 86400 else f"{int(seconds // 86400)} d ago")


def describe(info: SessionInfo, now: float | None = None) -> str:
    """`3 h ago · 12 KB · fix the login bug`."""
    return f"{age(info.modified, now)} · {max(1, info.size // 1024)} KB · {info.first_prompt or '(no prompt)'}"
