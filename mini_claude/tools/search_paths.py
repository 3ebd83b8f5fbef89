"""What the search tools share: where a search starts, how its result paths are headed, which directories are
never searched, and file modification times for newest-first ordering."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from mini_claude.tools.base import ToolContext

__all__ = ["SKIP_DIRS", "mtime", "results_header", "search_root", "split_glob"]

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


def split_glob(pattern: str) -> tuple[str, str]:
    """A glob pattern's leading wildcard-free folders and the rest: ("/a/b/*.py") -> ("/a/b", "*.py"). The glob
    tool walks from the first and the permission gate checks it (one reading): `..` may appear only there."""
    parts = Path(pattern).parts
    base: list[str] = []
    for part in parts[:-1]:
        if any(c in part for c in "*?[{"):
            break
        base.append(part)
    rest = parts[len(base):]
    return (str(Path(*base)) if base else "", str(Path(*rest)) if rest else "")


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

