"""The Markdown files of one kind that Claude Code reads from two folders, `~/.claude/<kind>/` (the user's) and
`<project>/.claude/<kind>/` (the repository's): sub-agent types (`agents`) and output styles (`output-styles`).

`markdown_files` lists them in the order they count (the user's, then the project's, each sorted by name), leaving
out a scope `--setting-sources` does not read and the project folder when it is the user's own (started in the home
folder: read once). A project file that leads outside the project (a link to `~/.ssh/id_rsa`, to a note of the
user's) is not listed: its text would become a prompt. Each folder that cannot be read and each such link is one
warning; nothing here reads a file's contents.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

__all__ = ["markdown_files"]


def markdown_files(kind: str, cwd: Path, home: Path, *, sources: Collection[str] | None = None
                   ) -> tuple[list[tuple[str, list[Path]]], list[str]]:
    """(scope, its `*.md` files) for "user" then "project", and the warnings (see the module docstring)."""
    found: list[tuple[str, list[Path]]] = []
    warnings: list[str] = []
    user_folder = home / ".claude" / kind
    for source, folder in (("user", user_folder), ("project", cwd / ".claude" / kind)):
        if sources is not None and source not in sources:
            continue
        if source == "project" and _same(folder, user_folder):
            continue
        try:
            paths = sorted(folder.glob("*.md")) if folder.is_dir() else []
        except OSError as exc:
            warnings.append(f"{folder}: {exc}")
            continue
        if source == "project":
            inside = []
            for path in paths:
                outside = _outside(path, cwd)
                if outside is None:
                    inside.append(path)
                else:
                    warnings.append(f"{path}: not loaded: it leads outside the project ({outside})")
            paths = inside
        found.append((source, paths))
    return found, warnings


def _outside(path: Path, cwd: Path) -> Path | None:
    """Where a project file really is, when that is outside the project (a link out of it), else None."""
    try:
        resolved = path.resolve()
        return None if resolved.is_relative_to(cwd.resolve()) else resolved
    except (OSError, RuntimeError):  # a link loop
        return path


def _same(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except (OSError, RuntimeError):
        return False
