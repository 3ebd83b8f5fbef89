"""The search tools: `glob` (file names) and `grep` (file contents).

`grep` runs ripgrep when it is installed (in its own process group, with a timeout, killed on cancel) and a
pure-Python search otherwise; both produce the same formats:

    files_with_matches   path                      (newest modified first)
    content              path:line:text            (matches; `path-line-text` for context lines, `--` between groups)
    count                path:count                (matching lines per file)

Paths are relative to the searched directory (a header names it when it is not the working directory).
Differences that remain: ripgrep also skips files its ignore rules (.gitignore, .ignore) exclude, and its regex
dialect is Rust's rather than Python's.
"""

from __future__ import annotations

import asyncio
import fnmatch
import os
import re
import shutil
import stat
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mini_claude.tools.base import ToolContext, ToolResult
from mini_claude.tools.shell import terminate_group, wait_for_exit

__all__ = [
    "DEFAULT_MAX_RESULTS",
    "GLOB_MAX_RESULTS",
    "GREP_MAX_OUTPUT_CHARS",
    "GREP_TIMEOUT_S",
    "GlobTool",
    "GrepTool",
]

GLOB_MAX_RESULTS = 500
# glob stops walking after this long / this many matches and says the list is partial.
GLOB_TIMEOUT_S = 30.0
GLOB_MAX_SCANNED = 200_000
DEFAULT_MAX_RESULTS = 250
MAX_MAX_RESULTS = 5000
GREP_TIMEOUT_S = 60.0
GREP_MAX_OUTPUT_CHARS = 100_000
GREP_MAX_LINE_CHARS = 500
# Raw ripgrep output read at most; past it the search is stopped and the results are marked partial.
RG_MAX_OUTPUT_BYTES = 16 * 1024 * 1024
RG_MAX_STDERR_BYTES = 8192
_READ_CHUNK_BYTES = 64 * 1024
_SNIFF_BYTES = 8192
_SKIP_DIRS = frozenset({".git"})
_OUTPUT_MODES = ("files_with_matches", "content", "count")


# --------------------------------------------------------------------------------------------------------------
# Shared helpers


def _search_root(args: dict[str, Any], ctx: ToolContext) -> Path | str:
    raw = args.get("path")
    if raw is None or raw == "":
        return Path(os.path.abspath(ctx.cwd))
    if not isinstance(raw, str):
        return "path must be a string"
    return Path(os.path.abspath(ctx.resolve(raw)))


def _header(root: Path, ctx: ToolContext) -> str:
    """Names the directory results are relative to, unless it is the working directory."""
    if root == Path(os.path.abspath(ctx.cwd)):
        return ""
    return f"(paths relative to {root})\n"


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        try:
            return path.lstat().st_mtime
        except OSError:
            return 0.0


# --------------------------------------------------------------------------------------------------------------
# glob


def _split_literal_prefix(pattern: str) -> tuple[str, str]:
    """Move leading wildcard-free components of `pattern` into a base: ("/a/b/*.py") -> ("/a/b", "*.py")."""
    parts = Path(pattern).parts
    base: list[str] = []
    for part in parts[:-1]:
        if any(c in part for c in "*?["):
            break
        base.append(part)
    rest = parts[len(base) :]
    return (str(Path(*base)) if base else "", str(Path(*rest)) if rest else "")


def _glob_root(root: Path, pattern: str) -> tuple[Path, str]:
    """The directory to walk and the pattern relative to it."""
    base, rest = _split_literal_prefix(pattern)
    return (Path(os.path.abspath(root / base)) if base else root), rest


def _glob_sync(root: Path, pattern: str) -> tuple[list[tuple[float, str]], bool]:
    """(mtime, relative path) of each match, and whether the walk was cut short."""
    deadline = time.monotonic() + GLOB_TIMEOUT_S
    found: list[tuple[float, str]] = []
    partial = False
    for match in root.glob(pattern):
        try:
            rel = match.relative_to(root)
        except ValueError:
            rel = Path(os.path.relpath(match, root))
        if _SKIP_DIRS.intersection(rel.parts):
            continue
        name = rel.as_posix()
        if match.is_dir():
            name += "/"
        found.append((_mtime(match), name))
        if len(found) >= GLOB_MAX_SCANNED or time.monotonic() > deadline:
            partial = True
            break
    found.sort(key=lambda item: (-item[0], item[1]))
    return found, partial


class GlobTool:
    """Finds files by name pattern."""

    name = "glob"
    description = (
        "Find files whose paths match a glob pattern, e.g. `**/*.py` (recursive) or `src/*.ts`. `*` matches within "
        "one path component, `**` matches any number of directories. Results are paths relative to the searched "
        "directory (path, default: the working directory), newest modified first; directories end with `/`; .git "
        f"is skipped. At most {GLOB_MAX_RESULTS} results are shown. Use grep to search file contents."
    )
    read_only = True

    def __init__(self, *, max_results: int = GLOB_MAX_RESULTS) -> None:
        self.input_schema: dict[str, Any] = {
            "type": "object",
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
        root = _search_root(args, ctx)
        if isinstance(root, str):
            return ToolResult.error(root)
        root, rest = _glob_root(root, pattern)
        if not rest:
            return ToolResult.error(f"pattern {pattern!r} has no file name part to match")
        if not root.is_dir():
            what = "is not a directory" if root.exists() else "does not exist"
            return ToolResult.error(f"{root} {what}")
        try:
            found, partial = await asyncio.to_thread(_glob_sync, root, rest)
        except (ValueError, NotImplementedError) as exc:
            return ToolResult.error(f"invalid glob pattern {pattern!r}: {exc}")
        if not found:
            return ToolResult.text(f"No files found matching {pattern!r} in {root}")
        lines = [name for _, name in found[: self.max_results]]
        text = _header(root, ctx) + "\n".join(lines)
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


# --------------------------------------------------------------------------------------------------------------
# grep: the search request and result shaping shared by both engines


@dataclass
class _Query:
    pattern: str
    root: Path  # a directory, or a single file
    mode: str
    file_glob: str | None
    case_insensitive: bool
    context: int

    @property
    def cwd(self) -> Path:
        return self.root if self.root.is_dir() else self.root.parent


@dataclass
class _Found:
    lines: list[str] = field(default_factory=list)  # in the mode's format, without the final sort for files mode
    partial: bool = False  # stopped early (timeout, too much output)
    warning: str = ""  # e.g. some files could not be read


def _truncate_line(line: str) -> str:
    if len(line) <= GREP_MAX_LINE_CHARS:
        return line
    return f"{line[:GREP_MAX_LINE_CHARS]} … [line truncated: {len(line)} characters]"


def _format(query: _Query, found: _Found, max_results: int, ctx: ToolContext) -> ToolResult:
    lines = found.lines
    if query.mode == "files_with_matches":
        cwd = query.cwd
        lines = sorted(set(lines), key=lambda p: (-_mtime(cwd / p), p))
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
        notes.append(f"showing the first {max_results} of {len(lines)}{more} {unit}; narrow the search or raise max_results")
    elif found.partial:
        notes.append("the search was stopped early; results may be incomplete")
    body = "\n".join(_truncate_line(line) for line in shown)
    if len(body) > GREP_MAX_OUTPUT_CHARS:
        body = body[:GREP_MAX_OUTPUT_CHARS].rsplit("\n", 1)[0]
        notes.append(f"output cut at {GREP_MAX_OUTPUT_CHARS} characters; narrow the search")
    if found.warning:
        notes.append(found.warning)
    header = _header(query.cwd, ctx)
    text = header + body
    if notes:
        text += f"\n\n({'; '.join(notes)})"
    return ToolResult.text(text)


# --------------------------------------------------------------------------------------------------------------
# grep: ripgrep


def _rg_argv(rg: str, query: _Query) -> list[str]:
    argv = [rg, "--no-config", "--color=never", "--hidden", "--glob", "!.git", "--no-messages"]
    if query.case_insensitive:
        argv.append("--ignore-case")
    if query.file_glob:
        argv += ["--glob", query.file_glob]
    if query.mode == "files_with_matches":
        argv.append("--files-with-matches")
    elif query.mode == "count":
        argv += ["--count", "--with-filename", "--sort=path"]
    else:
        argv += ["--line-number", "--no-heading", "--with-filename", "--sort=path"]
        if query.context:
            argv += ["--context", str(query.context)]
    target = "." if query.root.is_dir() else query.root.name
    return [*argv, "--regexp", query.pattern, "--", target]


def _rg_lines(stdout: bytes) -> list[str]:
    lines = stdout.decode("utf-8", "replace").splitlines()
    return [line[2:] if line.startswith("./") else line for line in lines]


async def _run_rg(argv: list[str], cwd: Path, timeout_s: float) -> tuple[_Found, int | None, str]:
    """Run ripgrep; returns what it found, its exit code (None when stopped) and its stderr."""
    proc = await asyncio.create_subprocess_exec(
        *argv,
        cwd=cwd,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    assert proc.stdout is not None and proc.stderr is not None
    out = bytearray()
    err = bytearray()
    found = _Found()

    async def pump_out(stream: asyncio.StreamReader) -> None:
        while chunk := await stream.read(_READ_CHUNK_BYTES):
            out.extend(chunk)
            if len(out) >= RG_MAX_OUTPUT_BYTES:
                found.partial = True
                return

    async def pump_err(stream: asyncio.StreamReader) -> None:
        while chunk := await stream.read(_READ_CHUNK_BYTES):
            if len(err) < RG_MAX_STDERR_BYTES:
                err.extend(chunk[: RG_MAX_STDERR_BYTES - len(err)])

    readers = [asyncio.create_task(pump_out(proc.stdout)), asyncio.create_task(pump_err(proc.stderr))]
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    try:
        await asyncio.wait({readers[0]}, timeout=timeout_s)
        if not readers[0].done():
            found.partial = True  # timed out
        elif not found.partial:
            # stdout closed: ripgrep is finishing; its exit code tells errors from "no match".
            found.partial = not await wait_for_exit(proc, max(deadline - loop.time(), 0.0))
    finally:
        await terminate_group(proc)
        for task in readers:
            if not task.done():
                task.cancel()
        await asyncio.wait(readers)
    if found.partial and len(out) >= RG_MAX_OUTPUT_BYTES:
        # The last line may be cut.
        out = out[: out.rfind(b"\n") + 1]
    found.lines = _rg_lines(bytes(out))
    returncode = None if found.partial else proc.returncode
    return found, returncode, bytes(err).decode("utf-8", "replace")


def _one_line(text: str) -> str:
    return " ".join(part.strip() for part in text.strip().splitlines() if part.strip())


# --------------------------------------------------------------------------------------------------------------
# grep: pure Python


def _expand_braces(pattern: str) -> list[str]:
    """`*.{ts,tsx}` -> [`*.ts`, `*.tsx`] (one level at a time, nested braces expand recursively)."""
    start = pattern.find("{")
    end = pattern.find("}", start + 1)
    if start < 0 or end < 0:
        return [pattern]
    head, body, tail = pattern[:start], pattern[start + 1 : end], pattern[end + 1 :]
    return [expanded for alt in body.split(",") for expanded in _expand_braces(head + alt + tail)]


def _glob_filter(file_glob: str | None) -> Any:
    """A predicate on a relative posix path implementing ripgrep's --glob for the common cases."""
    if not file_glob:
        return lambda rel: True
    negate = file_glob.startswith("!")
    patterns = _expand_braces(file_glob[1:] if negate else file_glob)

    def matches(rel: str) -> bool:
        name = rel.rsplit("/", 1)[-1]
        for p in patterns:
            if "/" not in p:
                if fnmatch.fnmatchcase(name, p):
                    return True
                continue
            p = p.lstrip("/")
            if fnmatch.fnmatchcase(rel, p) or (p.startswith("**/") and fnmatch.fnmatchcase(rel, p[3:])):
                return True
        return False

    return (lambda rel: not matches(rel)) if negate else matches


def _walk(directory: Path, prefix: str = "") -> Iterator[tuple[Path, str]]:
    """Regular files under `directory` (symlinks not followed), in path order like `rg --sort=path`."""
    try:
        entries = sorted(os.scandir(directory), key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        rel = prefix + entry.name
        try:
            if entry.is_dir(follow_symlinks=False):
                if entry.name not in _SKIP_DIRS:
                    yield from _walk(Path(entry.path), rel + "/")
            elif entry.is_file(follow_symlinks=False):
                yield Path(entry.path), rel
        except OSError:
            continue


def _python_grep(
    query: _Query, regex: re.Pattern[str], stop: threading.Event, deadline: float, max_lines: int
) -> _Found:
    """Search like ripgrep would; content mode stops once it has more than `max_lines` lines."""
    found = _Found()
    if query.root.is_dir():
        accept = _glob_filter(query.file_glob)
        files: Iterator[tuple[Path, str]] = ((p, rel) for p, rel in _walk(query.root) if accept(rel))
    else:
        files = iter([(query.root, query.root.name)])
    unreadable = 0
    out = found.lines
    out_bytes = 0
    printed = [0]  # set once a content line was written (for the `--` separator)
    for path, rel in files:
        if query.mode == "content" and len(out) > max_lines:
            break
        if stop.is_set() or time.monotonic() > deadline or out_bytes > RG_MAX_OUTPUT_BYTES:
            found.partial = True
            break
        try:
            with open(path, "rb") as f:
                if b"\0" in f.read(_SNIFF_BYTES):
                    continue
                f.seek(0)
                before = len(out)
                _search_file(f, rel, regex, query, out, printed)
                out_bytes += sum(len(line) for line in out[before:])
        except OSError:
            unreadable += 1
    if unreadable:
        found.warning = f"{unreadable} file(s) could not be read"
    return found


def _search_file(
    f: Any, rel: str, regex: re.Pattern[str], query: _Query, out: list[str], printed: list[int]
) -> None:
    """Append this file's results to `out` in the query's format. `printed[0]` is 1 once any content line was
    written (context groups of different files are separated by `--`, like ripgrep)."""
    count = 0
    ctx_n = query.context
    before: deque[tuple[int, str]] = deque(maxlen=ctx_n)
    last_out = 0  # line number of the last line written for this file
    after_left = 0
    for lineno, raw in enumerate(f, 1):
        line = raw.decode("utf-8", "replace").rstrip("\n").removesuffix("\r")
        hit = regex.search(line) is not None
        if query.mode == "files_with_matches":
            if hit:
                out.append(rel)
                return
            continue
        if query.mode == "count":
            count += hit
            continue
        if hit:
            first = before[0][0] if before else lineno
            if ctx_n and printed[0] and (last_out == 0 or first > last_out + 1):
                out.append("--")
            for n, text in before:
                out.append(f"{rel}-{n}-{text}")
            before.clear()
            out.append(f"{rel}:{lineno}:{line}")
            printed[0] = 1
            last_out = lineno
            after_left = ctx_n
        elif after_left:
            out.append(f"{rel}-{lineno}-{line}")
            last_out = lineno
            after_left -= 1
        elif ctx_n:
            before.append((lineno, line))
    if query.mode == "count" and count:
        out.append(f"{rel}:{count}")


# --------------------------------------------------------------------------------------------------------------
# grep: the tool


class GrepTool:
    """Searches file contents with a regular expression (ripgrep when available, else Python)."""

    name = "grep"
    description = (
        "Search file contents for a regular expression. output_mode: `files_with_matches` (default) lists matching "
        "files, newest first; `content` shows matching lines as `path:line:text` (with `context` lines around "
        "them as `path-line-text`); `count` shows `path:count`. Paths are relative to the searched path (default: "
        "the working directory). Filter files with `glob` (e.g. `*.py`, `*.{ts,tsx}`, `!*.min.js`). Binary files "
        "and .git are skipped (and, when ripgrep is installed, files excluded by .gitignore). At most max_results "
        f"files or lines are shown (default {DEFAULT_MAX_RESULTS}); long lines are cut at {GREP_MAX_LINE_CHARS} "
        "characters. Use glob to find files by name."
    )
    read_only = True

    def __init__(
        self, *, rg_path: str | None = None, use_ripgrep: bool = True, timeout_s: float = GREP_TIMEOUT_S
    ) -> None:
        """`rg_path` names the ripgrep binary (default: `rg` on PATH, looked up per call); `use_ripgrep=False`
        forces the Python search."""
        self.input_schema: dict[str, Any] = {
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "The regular expression to search for."},
                "path": {"type": "string", "description": "A file or directory to search (default: the working "
                         "directory)."},
                "glob": {"type": "string", "description": "Only search files matching this glob, e.g. `*.py`."},
                "output_mode": {"type": "string", "enum": list(_OUTPUT_MODES), "default": "files_with_matches"},
                "case_insensitive": {"type": "boolean", "default": False},
                "context": {"type": "integer", "minimum": 0, "description": "Lines of context around each match "
                            "(content mode)."},
                "max_results": {"type": "integer", "minimum": 1, "maximum": MAX_MAX_RESULTS, "description": "At most "
                                f"this many files or lines (default {DEFAULT_MAX_RESULTS})."},
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

    def _parse(self, args: dict[str, Any], ctx: ToolContext) -> tuple[_Query, int] | str:
        pattern = args.get("pattern")
        if not isinstance(pattern, str) or pattern == "":
            return "pattern must be a non-empty string"
        root = _search_root(args, ctx)
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
        case_insensitive = args.get("case_insensitive") or False
        if not isinstance(case_insensitive, bool):
            return "case_insensitive must be true or false"
        context = args.get("context") or 0
        if isinstance(context, bool) or not isinstance(context, int) or context < 0:
            return "context must be a non-negative integer"
        max_results = args.get("max_results") or DEFAULT_MAX_RESULTS
        if isinstance(max_results, bool) or not isinstance(max_results, int) or max_results < 1:
            return "max_results must be a positive integer"
        max_results = min(max_results, MAX_MAX_RESULTS)
        query = _Query(pattern, root, mode, file_glob, case_insensitive, context if mode == "content" else 0)
        return query, max_results

    async def _run_rg(self, rg: str, query: _Query, max_results: int, ctx: ToolContext) -> ToolResult:
        try:
            found, code, stderr = await _run_rg(_rg_argv(rg, query), query.cwd, self.timeout_s)
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

    async def _run_python(self, query: _Query, max_results: int, ctx: ToolContext) -> ToolResult:
        flags = re.IGNORECASE if query.case_insensitive else 0
        try:
            regex = re.compile(query.pattern, flags)
        except re.error as exc:
            return ToolResult.error(f"invalid regular expression {query.pattern!r}: {exc}")
        stop = threading.Event()
        deadline = time.monotonic() + self.timeout_s
        try:
            found = await asyncio.to_thread(_python_grep, query, regex, stop, deadline, max_results)
        except asyncio.CancelledError:
            stop.set()  # the thread cannot be cancelled; tell it to stop at the next file
            raise
        return _format(query, found, max_results, ctx)
