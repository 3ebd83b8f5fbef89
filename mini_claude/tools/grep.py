"""The `Grep` tool (Claude Code's name and input keys): searches file contents with a regular expression.

It runs ripgrep when it is installed and a pure-Python search otherwise (both in grep_engines.py); both produce
the same formats:

    files_with_matches   path                      (newest modified first)
    content              path:line:text            (matches; `path-line-text` for context lines, `--` between groups)
    count                path:count                (matching lines per file)

Paths are relative to the searched directory (a header names it when it is not the working directory). Files a
permission deny rule covers (`ToolContext.is_denied`) are left out, by both engines.
Differences that remain: ripgrep also skips files its ignore rules (.gitignore, .ignore) exclude, and its regex
dialect is Rust's rather than Python's.
"""

from __future__ import annotations

import asyncio
import re
import shutil
import stat
import threading
import time
from pathlib import Path
from typing import Any

from mini_claude.tools.base import ToolContext, ToolResult
from mini_claude.tools.grep_engines import GrepFound, GrepQuery, SkipFn, python_grep, rg_argv, run_rg
from mini_claude.tools.search_paths import mtime, results_header, search_root

__all__ = [
    "DEFAULT_MAX_RESULTS",
    "GREP_MAX_OUTPUT_CHARS",
    "GREP_TIMEOUT_S",
    "GrepTool",
]

DEFAULT_MAX_RESULTS = 250
MAX_MAX_RESULTS = 5000
GREP_TIMEOUT_S = 60.0
GREP_MAX_OUTPUT_CHARS = 100_000
GREP_MAX_LINE_CHARS = 500
_OUTPUT_MODES = ("files_with_matches", "content", "count")


def _truncate_line(line: str) -> str:
    if len(line) <= GREP_MAX_LINE_CHARS:
        return line
    return f"{line[:GREP_MAX_LINE_CHARS]} … [line truncated: {len(line)} characters]"


def _format(query: GrepQuery, found: GrepFound, max_results: int, ctx: ToolContext) -> ToolResult:
    lines = found.lines
    if query.mode == "files_with_matches":
        cwd = query.cwd
        lines = sorted(set(lines), key=lambda p: (-mtime(cwd / p), p))
    if not lines:
        text = f"No matches for {query.pattern!r} in {query.root}"
        if found.partial:
            text += " (the search was stopped early; results may be incomplete)"
        if found.warning:
            text += f"\n({found.warning})"
        return ToolResult.text(text)
    notes = []
    shown = lines[:max_results]
    unit = "lines" if query.mode == "content" else "files"
    if len(lines) > max_results:
        more = "+" if found.partial or query.mode == "content" else ""
        notes.append(f"showing the first {max_results} of {len(lines)}{more} {unit}; narrow the search or raise head_limit")
    elif found.partial:
        notes.append("the search was stopped early; results may be incomplete")
    body = "\n".join(_truncate_line(line) for line in shown)
    if len(body) > GREP_MAX_OUTPUT_CHARS:
        body = body[:GREP_MAX_OUTPUT_CHARS].rsplit("\n", 1)[0]
        notes.append(f"output cut at {GREP_MAX_OUTPUT_CHARS} characters; narrow the search")
    if found.warning:
        notes.append(found.warning)
    header = results_header(query.cwd, ctx)
    text = header + body
    if notes:
        text += f"\n\n({'; '.join(notes)})"
    return ToolResult.text(text)


def _skip_for(ctx: ToolContext, root: Path) -> SkipFn:
    """Files a deny rule covers for Grep (`Read(.env.local)`, `Grep(secrets/**)`) are never searched or shown; nor
    are files holding secrets (`.env`, a private key) found inside a searched folder: one named as the search's
    own path was asked about (or allowed) by the gate."""
    return lambda path: ctx.is_denied(path, "Grep") or (path != root and ctx.is_secret(path))


def _one_line(text: str) -> str:
    return " ".join(part.strip() for part in text.strip().splitlines() if part.strip())


class GrepTool:
    """Searches file contents with a regular expression (ripgrep when available, else Python)."""

    name = "Grep"
    description = (
        "Search file contents for a regular expression. output_mode: `files_with_matches` (default) lists matching "
        "files, newest first; `content` shows matching lines as `path:line:text` (with `-C` lines of context around "
        "them as `path-line-text`); `count` shows `path:count`. Paths are relative to the searched path (default: "
        "the working directory). Filter files with `glob` (e.g. `*.py`, `*.{ts,tsx}`, `!*.min.js`). Binary files "
        "and .git are skipped (and, when ripgrep is installed, files excluded by .gitignore). At most head_limit "
        f"files or lines are shown (default {DEFAULT_MAX_RESULTS}); long lines are cut at {GREP_MAX_LINE_CHARS} "
        "characters. Use Glob to find files by name."
    )
    read_only = True

    def __init__(
        self, *, rg_path: str | None = None, use_ripgrep: bool = True, timeout_s: float = GREP_TIMEOUT_S
    ) -> None:
        """`rg_path` names the ripgrep binary (default: `rg` on PATH, looked up per call); `use_ripgrep=False`
        forces the Python search."""
        self.input_schema: dict[str, Any] = {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "pattern": {"type": "string", "description": "The regular expression to search for."},
                "path": {"type": "string", "description": "A file or directory to search (default: the working "
                         "directory)."},
                "glob": {"type": "string", "description": "Only search files matching this glob, e.g. `*.py`."},
                "output_mode": {"type": "string", "enum": list(_OUTPUT_MODES), "default": "files_with_matches"},
                "-i": {"type": "boolean", "default": False, "description": "Case-insensitive search."},
                "-C": {"type": "integer", "minimum": 0, "description": "Lines of context around each match "
                       "(content mode)."},
                "head_limit": {"type": "integer", "minimum": 1, "maximum": MAX_MAX_RESULTS, "description": "At "
                               f"most this many files or lines (default {DEFAULT_MAX_RESULTS})."},
            },
            "required": ["pattern"],
        }
        self.rg_path = rg_path
        self.use_ripgrep = use_ripgrep
        self.timeout_s = timeout_s

    def ripgrep(self) -> str | None:
        """The ripgrep binary this tool would use now, or None for the Python search."""
        if not self.use_ripgrep:
            return None
        return self.rg_path or shutil.which("rg")

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        query_or_error = self._parse(args, ctx)
        if isinstance(query_or_error, str):
            return ToolResult.error(query_or_error)
        query, max_results = query_or_error
        rg = self.ripgrep()
        if rg is not None:
            return await self._run_rg(rg, query, max_results, ctx)
        return await self._run_python(query, max_results, ctx)

    def _parse(self, args: dict[str, Any], ctx: ToolContext) -> tuple[GrepQuery, int] | str:
        pattern = args.get("pattern")
        if not isinstance(pattern, str) or pattern == "":
            return "pattern must be a non-empty string"
        root = search_root(args, ctx)
        if isinstance(root, str):
            return root
        try:
            st = root.stat()
        except OSError:
            return f"{root} does not exist"
        if not (stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode)):
            return f"{root} is not a file or directory"
        mode = args.get("output_mode") or "files_with_matches"
        if mode not in _OUTPUT_MODES:
            return f"output_mode must be one of {', '.join(_OUTPUT_MODES)}"
        file_glob = args.get("glob") or None
        if file_glob is not None and not isinstance(file_glob, str):
            return "glob must be a string"
        case_insensitive = args.get("-i") or False
        if not isinstance(case_insensitive, bool):
            return "-i must be true or false"
        context = args.get("-C") or 0
        if isinstance(context, bool) or not isinstance(context, int) or context < 0:
            return "-C must be a non-negative integer"
        max_results = args.get("head_limit") or DEFAULT_MAX_RESULTS
        if isinstance(max_results, bool) or not isinstance(max_results, int) or max_results < 1:
            return "head_limit must be a positive integer"
        max_results = min(max_results, MAX_MAX_RESULTS)
        query = GrepQuery(pattern, root, mode, file_glob, case_insensitive, context if mode == "content" else 0)
        return query, max_results

    async def _run_rg(self, rg: str, query: GrepQuery, max_results: int, ctx: ToolContext) -> ToolResult:
        try:
            found, code, stderr = await run_rg(rg_argv(rg, query), query, self.timeout_s,
                                               _skip_for(ctx, query.root))
        except OSError as exc:
            return ToolResult.error(f"could not run ripgrep ({rg}): {exc.strerror or exc}")
        if code == 2:
            if not found.lines:
                try:
                    re.compile(query.pattern)
                except re.error:
                    reason = _one_line(stderr) or "ripgrep failed"
                    return ToolResult.error(f"invalid regular expression {query.pattern!r}: {reason}")
                # ripgrep's Rust dialect lacks look-around and back-references, which Python's has.
                return await self._run_python(query, max_results, ctx)
            reason = _one_line(stderr)[:300]
            found.warning = f"some files could not be searched{': ' + reason if reason else ''}"
        return _format(query, found, max_results, ctx)

    async def _run_python(self, query: GrepQuery, max_results: int, ctx: ToolContext) -> ToolResult:
        flags = re.IGNORECASE if query.case_insensitive else 0
        try:
            regex = re.compile(query.pattern, flags)
        except re.error as exc:
            return ToolResult.error(f"invalid regular expression {query.pattern!r}: {exc}")
        stop = threading.Event()
        deadline = time.monotonic() + self.timeout_s
        try:
            found = await asyncio.to_thread(python_grep, query, regex, stop, deadline, max_results,
                                            _skip_for(ctx, query.root))
        except asyncio.CancelledError:
            stop.set()  # the thread cannot be cancelled; tell it to stop at the next file
            raise
        return _format(query, found, max_results, ctx)
