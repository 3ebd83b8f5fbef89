"""The `Grep` tool (Claude Code's name and input keys): searches file contents with a regular expression.

It runs ripgrep when it is installed and a pure-Python search otherwise (both in grep_engines.py); both produce
the same formats:

    files_with_matches   path                      (newest modified first)
    content              path:line:text            (matches; `path-line-text` for context lines, `--` between groups;
                                                    `path:text` / `path-text` when `-n` is false)
    count                path:count                (matching lines per file; matches, in multiline mode)

Claude Code's input keys: pattern, path, glob, type (a ripgrep file type: grep_types.py), output_mode, `-i`, `-n`
(default true), `-A` / `-B` / `-C` (context; `context` is `-C`'s other spelling, and either wins over `-A`/`-B`),
multiline, head_limit (0: no limit) and offset (entries skipped before head_limit applies).

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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mini_claude.tools.base import ToolContext, ToolResult
from mini_claude.tools.grep_engines import GrepFound, GrepQuery, SkipFn, python_grep, rg_argv, run_rg
from mini_claude.tools.grep_types import FILE_TYPES, unknown_type_message
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


def _format(query: GrepQuery, found: GrepFound, page: _Page, ctx: ToolContext) -> ToolResult:
    lines = found.lines
    if query.mode == "files_with_matches":
        cwd = query.cwd
        lines = sorted(set(lines), key=lambda p: (-mtime(cwd / p), p))
    if lines and page.offset >= len(lines):
        more = "+" if found.partial or query.mode == "content" else ""
        return ToolResult.text(f"No entries at offset {page.offset}: the search found {len(lines)}{more}")
    if not lines:
        text = f"No matches for {query.pattern!r} in {query.root}"
        if found.partial:
            text += " (the search was stopped early; results may be incomplete)"
        if found.warning:
            text += f"\n({found.warning})"
        return ToolResult.text(text)
    notes = []
    max_results = page.limit
    shown = lines[page.offset:page.offset + max_results]
    unit = "lines" if query.mode == "content" else "files"
    if len(lines) > page.offset + max_results:
        more = "+" if found.partial or query.mode == "content" else ""
        which = (f"entries {page.offset + 1}-{page.offset + len(shown)}" if page.offset
                 else f"the first {max_results}")
        notes.append(f"showing {which} of {len(lines)}{more} {unit}; narrow the search, or use offset and "
                     "head_limit for more")
    elif page.offset:
        notes.append(f"showing entries {page.offset + 1}-{page.offset + len(shown)} of {len(lines)} {unit}")
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


@dataclass(frozen=True)
class _Page:
    """Which entries of the results are shown: `limit` of them after skipping `offset`."""

    limit: int
    offset: int = 0

    @property
    def end(self) -> int:
        return self.offset + self.limit


def _skip_for(ctx: ToolContext, root: Path) -> SkipFn:
    """Files a deny rule covers for Grep (`Read(.env.local)`, `Grep(secrets/**)`) are never searched or shown; nor
    are files holding secrets (`.env`, a private key) found inside a searched folder: one named as the search's
    own path was asked about (or allowed) by the gate."""
    return lambda path: ctx.is_denied(path, "Grep") or (path != root and ctx.is_secret(path))


def _one_line(text: str) -> str:
    return " ".join(part.strip() for part in text.strip().splitlines() if part.strip())


def _count(args: dict[str, Any], key: str) -> int | str | None:
    """A non-negative whole number under `key` (None when absent), or the error message."""
    value = args.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return f"{key} must be a whole number of 0 or more"
    return value


def _flag(args: dict[str, Any], key: str, default: bool) -> bool | str:
    value = args.get(key)
    if value is None:
        return default
    return value if isinstance(value, bool) else f"{key} must be true or false"


class GrepTool:
    """Searches file contents with a regular expression (ripgrep when available, else Python)."""

    name = "Grep"
    description = (
        "Search file contents for a regular expression. output_mode: `files_with_matches` (default) lists matching "
        "files, newest first; `content` shows matching lines as `path:line:text` (context lines as "
        "`path-line-text`; `-n: false` leaves the line numbers out); `count` shows `path:count`. Paths are relative "
        "to the searched path (default: the working directory). Narrow the files with `glob` (e.g. `*.py`, "
        "`*.{ts,tsx}`, `!*.min.js`) or `type` (a ripgrep file type such as `py`, `js`, `rust`, `go`). In content "
        "mode `-A`/`-B`/`-C` add lines after / before / around each match. `multiline: true` lets a pattern span "
        "lines (`.` then matches newlines too). Binary files and .git are skipped (and, when ripgrep is installed, "
        f"files excluded by .gitignore). At most head_limit files or lines are shown (default {DEFAULT_MAX_RESULTS}, "
        "0 for no limit) after skipping the first `offset`; long lines are cut at "
        f"{GREP_MAX_LINE_CHARS} characters. Use Glob to find files by name."
    )
    read_only = True

    def __init__(
        self, *, rg_path: str | None = None, use_ripgrep: bool = True, timeout_s: float = GREP_TIMEOUT_S
    ) -> None:
        """`rg_path` names the ripgrep binary (default: `rg` on PATH, looked up per call); `use_ripgrep=False`
        forces the Python search."""
        context_note = "(content mode; ignored otherwise)"
        self.input_schema: dict[str, Any] = {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "pattern": {"type": "string", "description": "The regular expression to search for."},
                "path": {"type": "string", "description": "A file or directory to search (default: the working "
                         "directory)."},
                "glob": {"type": "string", "description": "Only search files matching this glob, e.g. `*.py`."},
                "type": {"type": "string", "description": "Only search files of this ripgrep file type, e.g. "
                         "`py`, `js`, `ts`, `rust`, `go`, `java`, `md`."},
                "output_mode": {"type": "string", "enum": list(_OUTPUT_MODES), "default": "files_with_matches"},
                "-i": {"type": "boolean", "default": False, "description": "Case-insensitive search."},
                "-n": {"type": "boolean", "default": True, "description": "Show line numbers " + context_note + "."},
                "-A": {"type": "integer", "minimum": 0, "description": "Lines to show after each match "
                       + context_note + "."},
                "-B": {"type": "integer", "minimum": 0, "description": "Lines to show before each match "
                       + context_note + "."},
                "-C": {"type": "integer", "minimum": 0, "description": "Lines to show before and after each match "
                       + context_note + "."},
                "context": {"type": "integer", "minimum": 0, "description": "The same as -C."},
                "multiline": {"type": "boolean", "default": False, "description": "Let the pattern span lines; "
                              "`.` matches newlines too."},
                "head_limit": {"type": "integer", "minimum": 0, "description": "At most this many files or lines "
                               f"(default {DEFAULT_MAX_RESULTS}; 0: no limit)."},
                "offset": {"type": "integer", "minimum": 0, "description": "Skip this many files or lines first "
                           "(default 0), to page through long results with head_limit."},
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
        query, page = query_or_error
        rg = self.ripgrep()
        if rg is not None:
            return await self._run_rg(rg, query, page, ctx)
        return await self._run_python(query, page, ctx)

    def _parse(self, args: dict[str, Any], ctx: ToolContext) -> tuple[GrepQuery, _Page] | str:
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
        file_type = args.get("type") or None
        if file_type is not None and (not isinstance(file_type, str) or file_type not in FILE_TYPES):
            return unknown_type_message(str(file_type))
        flags = {key: _flag(args, key, default) for key, default in (("-i", False), ("-n", True),
                                                                       ("multiline", False))}
        counts = {key: _count(args, key) for key in ("-A", "-B", "-C", "context", "head_limit", "offset")}
        problem = next((v for v in (*flags.values(), *counts.values()) if isinstance(v, str)), None)
        if problem is not None:
            return problem
        around = counts["context"] if counts["context"] is not None else counts["-C"]
        before = around if around is not None else counts["-B"]
        after = around if around is not None else counts["-A"]
        content = mode == "content"
        limit = counts["head_limit"]
        limit = DEFAULT_MAX_RESULTS if limit is None else (limit or MAX_MAX_RESULTS)
        query = GrepQuery(pattern, root, mode, file_glob, bool(flags["-i"]),
                          before=int(before or 0) if content else 0, after=int(after or 0) if content else 0,
                          line_numbers=bool(flags["-n"]), file_type=file_type, multiline=bool(flags["multiline"]))
        return query, _Page(min(int(limit), MAX_MAX_RESULTS), int(counts["offset"] or 0))

    async def _run_rg(self, rg: str, query: GrepQuery, page: _Page, ctx: ToolContext) -> ToolResult:
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
                return await self._run_python(query, page, ctx)
            reason = _one_line(stderr)[:300]
            found.warning = f"some files could not be searched{': ' + reason if reason else ''}"
        return _format(query, found, page, ctx)

    async def _run_python(self, query: GrepQuery, page: _Page, ctx: ToolContext) -> ToolResult:
        flags = re.IGNORECASE if query.case_insensitive else 0
        if query.multiline:
            flags |= re.DOTALL | re.MULTILINE
        try:
            regex = re.compile(query.pattern, flags)
        except re.error as exc:
            return ToolResult.error(f"invalid regular expression {query.pattern!r}: {exc}")
        stop = threading.Event()
        deadline = time.monotonic() + self.timeout_s
        try:
            found = await asyncio.to_thread(python_grep, query, regex, stop, deadline, page.end,
                                            _skip_for(ctx, query.root))
        except asyncio.CancelledError:
            stop.set()  # the thread cannot be cancelled; tell it to stop at the next file
            raise
        return _format(query, found, page, ctx)
