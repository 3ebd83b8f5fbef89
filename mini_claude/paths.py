"""Where mini-claude keeps user state. Nothing is created at import time; callers create what they write."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

__all__ = ["claude_home", "state_dir", "user_home"]


def user_home(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    return Path(env.get("HOME") or Path.home())


def claude_home(env: Mapping[str, str] | None = None) -> Path:
    """`~/.claude` (Claude Code's user config dir; its settings.json is shared with Claude Code)."""
    return user_home(env) / ".claude"


def state_dir(env: Mapping[str, str] | None = None) -> Path:
    """`$MINI_CLAUDE_STATE_DIR`, else `$XDG_STATE_HOME/mini-claude`, else `~/.local/state/mini-claude`."""
    env = os.environ if env is None else env
    if env.get("MINI_CLAUDE_STATE_DIR"):
        return Path(env["MINI_CLAUDE_STATE_DIR"])
    base = env.get("XDG_STATE_HOME") or str(user_home(env) / ".local" / "state")
    return Path(base) / "mini-claude"
