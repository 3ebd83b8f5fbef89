"""What the search tools share: where a search starts, how its result paths are headed, which directories are
never searched, and file modification times for newest-first ordering."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from mini_claude.tools.base import ToolContext

__all__ = ["SKIP_DIRS", "mtime", "results_header", "search_root"]

# Never searched by glob or grep (ripgrep is told the same with `--glob !.git`).
SKIP_DIRS = frozenset({".git"})


def search_root(args: dict[str, Any], ctx: ToolContext) -> Path | str:
    """The absolute path to search (`args["path"]` resolved against cwd, default cwd), or an error message."""
    raw = args.get("path")
    if raw is None or raw == "":
        return Path(os.path.abspath(ctx.cwd))
    if not isinstance(raw, str):
        return "path must be a string"
    return Path(os.path.abspath(ctx.resolve(raw)))


def results_header(root: Path, ctx: ToolContext) -> str:
    """Names the directory results are relative to, unless it is the working directory."""
    if root == Path(os.path.abspath(ctx.cwd)):
        return ""
    return f"(paths relative to {root})\n"


def mtime(path: Path) -> float:
    """`path`'s modification time (the link's own for a dangling symlink; 0.0 when it cannot be read)."""
    try:
        return path.stat().st_mtime
    except OSError:
        try:
            return path.lstat().st_mtime
        except OSError:
            return 0.0

