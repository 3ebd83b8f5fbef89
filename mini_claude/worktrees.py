"""The main working tree of a linked git worktree, found without running git (an untrusted folder runs nothing).

A linked worktree (`git worktree add`) has a `.git` *file* saying `gitdir: <common>/worktrees/<name>`; that folder
holds `commondir` (the repository's shared `.git`) and `gitdir` (the path back to this `.git` file). The main
worktree is the folder whose `.git` folder is the common one. The back link must match, that folder must sit in the
common one's `worktrees/` (where git puts it: a folder the project ships cannot name another repository as its
common one) and the main worktree's `.git` must be that very folder, or there is no answer: a `.git` file alone
decides nothing.

What it is used for: the local MCP switches (`disabledMcpTools`, `disabledMcpServers`, `disabledMcpjsonServers`
in `.claude/settings.local.json`) are the repository's, shared by its worktrees: a linked worktree reads the main
worktree's local file as well as its own, and `mcp disable … -s local` there writes the main worktree's file, so a
choice made in one worktree holds in all. These keys only switch things off, so reading another folder's file can
never widen what a session may do.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

__all__ = ["main_worktree", "shared_local_settings"]

_MAX_POINTER_BYTES = 4096


def main_worktree(cwd: Path) -> Path | None:
    """`cwd`'s place in the main worktree when `cwd` is inside a linked worktree (the same relative folder), else
    None (a main worktree, no repository, or anything that does not check out)."""
    try:
        here = cwd.resolve()
        root = next((folder for folder in (here, *here.parents) if os.path.lexists(folder / ".git")), None)
        if root is None or not (root / ".git").is_file() or (root / ".git").is_symlink():
            return None
        pointer = _read_small(root / ".git")
        if pointer is None or not pointer.startswith("gitdir:"):
            return None
        gitdir = (root / pointer.removeprefix("gitdir:").strip()).resolve()
        common_text = _read_small(gitdir / "commondir")
        back = _read_small(gitdir / "gitdir")
        if common_text is None or back is None:
            return None
        common = (gitdir / common_text.strip()).resolve()
        if (gitdir / back.strip()).resolve() != (root / ".git").resolve():
            return None
        if gitdir.parent != common / "worktrees":  # git keeps a linked worktree's folder in the common one
            return None
        main = common.parent
        git = main / ".git"
        if common.name != ".git" or git.is_symlink() or not git.is_dir() or git.resolve() != common:
            return None
        return main / here.relative_to(root)
    except (OSError, ValueError):
        return None


def shared_local_settings(cwd: Path) -> dict[str, Any]:
    """The main worktree's `.claude/settings.local.json` object when `cwd` is in a linked worktree; {} otherwise
    (also when missing or unreadable). Callers read only keys that switch things off from it."""
    main = main_worktree(cwd)
    if main is None:
        return {}
    from mini_claude.jsonfile import read_json_object

    return read_json_object(main / ".claude" / "settings.local.json", "settings.local.json", []) or {}


def _read_small(path: Path) -> str | None:
    """A small regular file's text, not through a symlink; None otherwise."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return os.read(fd, _MAX_POINTER_BYTES).decode("utf-8", "replace")
    except OSError:
        return None
    finally:
        os.close(fd)
