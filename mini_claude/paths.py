"""Where mini-claude keeps user state. Nothing is created at import time; callers create what they write."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

__all__ = ["state_dir", "user_home"]


def user_home(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    return Path(env.get("HOME") or Path.home())


def state_dir(env: Mapping[str, str] | None = None) -> Path:
    """`$MINI_CLAUDE_STATE_DIR`, else `$XDG_STATE_HOME/mini-claude`, else `~/.local/state/mini-claude`.

    `env` must be the real process environment, never one with a project's `.env` merged in: the state directory
    holds approvals, trust and tokens, so a repository must not be able to move it into itself."""
    env = os.environ if env is None else env
    if env.get("MINI_CLAUDE_STATE_DIR"):
        return Path(env["MINI_CLAUDE_STATE_DIR"])
    base = env.get("XDG_STATE_HOME") or str(user_home(env) / ".local" / "state")
    return Path(base) / "mini-claude"
