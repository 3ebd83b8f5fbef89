"""Where mini-claude keeps user state. Nothing is created at import time; callers create what they write."""

from __future__ import annotations

import os
import pwd
from collections.abc import Mapping
from pathlib import Path

__all__ = ["resolve_tool_path", "state_dir", "user_home"]


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


def resolve_tool_path(raw: str, cwd: Path, home: Path) -> str:
    """The one reading of a path a tool was given, shared by the permission gate and the tools themselves: absolute
    and normalised (`..` folded; symlinks kept: the gate resolves them when it matches).

    `~` and `~/x` are under `home`; `~user/x` is under that user's home directory (as bash and the tools' open()
    would read it) and stays a literal folder name `~user` when no such user exists, exactly as bash leaves it.
    Nothing else is expanded (`$HOME/x` is a folder named `$HOME`). A relative path is under `cwd`."""
    if raw == "~" or raw.startswith("~/"):
        target = str(home) + raw[1:]
    elif raw.startswith("~"):
        user, sep, rest = raw[1:].partition("/")
        try:
            user_dir = pwd.getpwnam(user).pw_dir if user else str(home)
        except (KeyError, ValueError):  # no such user (or a NUL in the name): bash keeps `~name` as written
            target = raw
        else:
            target = user_dir + (sep + rest if sep else "")
    else:
        target = raw
    if not os.path.isabs(target):
        target = os.path.join(cwd, target)
    normal = os.path.normpath(target)
    return "/" + normal.lstrip("/") if normal.startswith("//") else normal  # POSIX keeps `//x`; Linux reads /x
