"""The `Glob` tool: finds files by name pattern, newest modified first, relative to the searched directory. Files
a permission deny rule covers (`Read(.env.local)`, `Glob(secrets/**)`: `ToolContext.is_denied`) are not listed,
nor matches a symlink led out of the searched folder to a place the gate would ask about (`is_private`)."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import Any

from mini_claude.tools.base import ToolContext, ToolResult
from mini_claude.tools.search_paths import SKIP_DIRS, mtime, results_header, search_root, split_glob

__all__ = ["GLOB_MAX_RESULTS", "GlobTool"]

GLOB_MAX_RESULTS = 500
# glob stops walking after this long / this many matches and says the list is partial.
GLOB_TIMEOUT_S = 30.0
GLOB_MAX_SCANNED = 200_000


def _glob_root(root: Path, pattern: str) -> tuple[Path, str]:
    """The directory to walk and the pattern relative to it."""
    base, rest = split_glob(pattern)
    return (Path(os.path.abspath(root / base)) if base else root), rest


def _glob_sync(root: Path, pattern: str, ctx: ToolContext) -> tuple[list[tuple[float, str]], bool]:
    """(mtime, relative path) of each match a deny rule does not withhold, and whether the walk was cut short. A
    match a symlink led out of the searched folder to a place the session may not read unasked is dropped."""
    deadline = time.monotonic() + GLOB_TIMEOUT_S
    found: list[tuple[float, str]] = []
    partial = False
    real_root = os.path.realpath(root).rstrip("/") + "/"
    for match in root.glob(pattern):
        try:
            rel = match.relative_to(root)
        except ValueError:
            rel = Path(os.path.relpath(match, root))
        if SKIP_DIRS.intersection(rel.parts) or ctx.is_denied(match, "Glob"):
            continue
        if not os.path.realpath(match).startswith(real_root) and ctx.is_private(match):
            continue
        name = rel.as_posix()
        if match.is_dir():
            name += "/"
        found.append((mtime(match), name))
        if len(found) >= GLOB_MAX_SCANNED or time.monotonic() > deadline:
            partial = True
            break
    found.sort(key=lambda item: (-item[0], item[1]))
    return found, partial


class GlobTool:
    """Finds files by name pattern."""

    name = "Glob"
    description = (
        "Find files whose paths match a glob pattern, e.g. `**/*.py` (recursive) or `src/*.ts`. `*` matches within "
        "one path component, `**` matches any number of directories. Results are paths relative to the searched "
        "directory (path, default: the working directory), newest modified first; directories end with `/`; .git "
        f"is skipped. At most {GLOB_MAX_RESULTS} results are shown. Use Grep to search file contents."
    )
    read_only = True

    def __init__(self, *, max_results: int = GLOB_MAX_RESULTS) -> None:
        self.input_schema: dict[str, Any] = {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "pattern": {"type": "string", "description": "The glob pattern, e.g. `**/*.py`."},
                "path": {"type": "string", "description": "The directory to search (default: the working directory)."},
            },
            "required": ["pattern"],
        }
        self.max_results = max_results

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        pattern = args.get("pattern")
        if not isinstance(pattern, str) or not pattern.strip():
            return ToolResult.error("pattern must be a non-empty string")
        root = search_root(args, ctx)
        if isinstance(root, str):
            return ToolResult.error(root)
        root, rest = _glob_root(root, pattern)
        if not rest:
            return ToolResult.error(f"pattern {pattern!r} has no file name part to match")
        if ".." in Path(rest).parts:
            return ToolResult.error(f"pattern {pattern!r} has `..` after a wildcard; put the folder to search in "
                                    "`path` (or before the first wildcard)")
        if not root.is_dir():
            what = "is not a directory" if root.exists() else "does not exist"
            return ToolResult.error(f"{root} {what}")
        try:
            found, partial = await asyncio.to_thread(_glob_sync, root, rest, ctx)
        except (ValueError, NotImplementedError) as exc:
            return ToolResult.error(f"invalid glob pattern {pattern!r}: {exc}")
        if not found:
            return ToolResult.text(f"No files found matching {pattern!r} in {root}")
        lines = [name for _, name in found[: self.max_results]]
        text = results_header(root, ctx) + "\n".join(lines)
        notes = []
        if len(found) > self.max_results:
            notes.append(
                f"showing the {self.max_results} newest of {len(found)}{'+' if partial else ''} matches; "
                "use a more specific pattern or path"
            )
        elif partial:
            notes.append("the search was stopped early; results are incomplete, use a more specific pattern or path")
        if notes:
            text += f"\n\n({'; '.join(notes)})"
        return ToolResult.text(text)
