"""The two engines behind the `Grep` tool, and the query and result they share: ripgrep run as a subprocess
(own process group, bounded output, killed on timeout or cancel) and a pure-Python search producing the same
lines (used when ripgrep is missing, or when its Rust regex dialect rejects a pattern Python accepts).

Both take a `skip(path)` predicate (the permission deny rules): the Python search never opens a skipped file;
ripgrep's output names each file unambiguously (`--null`), and every line of a skipped file is dropped before
anything else sees it.

Multiline mode (`rg -U --multiline-dotall`): the Python search runs the pattern over the whole file with
re.DOTALL | re.MULTILINE; every line a match spans is a matching line, and `count` counts matches rather than
lines, as ripgrep does in that mode. Line numbers are always asked of ripgrep (they tell a match line from a
context line) and left out afterwards when the query says so."""

from __future__ import annotations

import asyncio
import bisect
import fnmatch
import os
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mini_claude.tools.grep_types import FILE_TYPES, type_matches
from mini_claude.tools.search_paths import SKIP_DIRS
from mini_claude.tools.shell import terminate_group, wait_for_exit

__all__ = [
    "RG_MAX_OUTPUT_BYTES",
    "RG_MAX_STDERR_BYTES",
    "GrepFound",
    "GrepQuery",
    "SkipFn",
    "python_grep",
    "rg_argv",
    "run_rg",
]

# Raw ripgrep output read at most; past it the search is stopped and the results are marked partial.
RG_MAX_OUTPUT_BYTES = 16 * 1024 * 1024
RG_MAX_STDERR_BYTES = 8192
_READ_CHUNK_BYTES = 64 * 1024
_SNIFF_BYTES = 8192
_RG_LINE_SEP_RE = re.compile(r"\d+([:-])")  # `12:` a match line, `12-` a context line

# Is this file (absolute path) withheld from search results?
SkipFn = Callable[[Path], bool]


def _skip_nothing(path: Path) -> bool:
    return False


@dataclass
class GrepQuery:
    """One grep request, validated."""

    pattern: str
    root: Path  # a directory, or a single file
    mode: str
    file_glob: str | None
    case_insensitive: bool
    before: int = 0  # context lines before / after each match (content mode)
    after: int = 0
    line_numbers: bool = True  # content mode: `path:12:text` (else `path:text`)
    file_type: str | None = None  # a key of grep_types.FILE_TYPES
    multiline: bool = False

    @property
    def cwd(self) -> Path:
        return self.root if self.root.is_dir() else self.root.parent


@dataclass
class GrepFound:
    """What an engine found, before the tool shapes it into a result."""

    lines: list[str] = field(default_factory=list)  # in the mode's format, without the final sort for files mode
    partial: bool = False  # stopped early (timeout, too much output)
    warning: str = ""  # e.g. some files could not be read


# --------------------------------------------------------------------------------------------------------------
# ripgrep


def rg_argv(rg: str, query: GrepQuery) -> list[str]:
    """ripgrep's command line for `query`, to be run in `query.cwd`."""
    # --null: a NUL after each file name, so a name is told from the line text even when it holds `:` or `-12-`
    argv = [rg, "--no-config", "--color=never", "--hidden", "--glob", "!.git", "--no-messages", "--null"]
    if query.case_insensitive:
        argv.append("--ignore-case")
    if query.multiline:
        argv += ["--multiline", "--multiline-dotall"]
    if query.file_glob:
        argv += ["--glob", query.file_glob]
    if query.file_type:
        # our definition of the type, not this ripgrep's own: the two engines then search the same files
        argv += ["--type-clear", query.file_type]
        for glob in FILE_TYPES[query.file_type]:
            argv += ["--type-add", f"{query.file_type}:{glob}"]
        argv += ["--type", query.file_type]
    if query.mode == "files_with_matches":
        argv.append("--files-with-matches")
    elif query.mode == "count":
        argv += ["--count", "--with-filename", "--sort=path"]
    else:
        argv += ["--line-number", "--no-heading", "--with-filename", "--sort=path"]
        if query.before:
            argv += ["--before-context", str(query.before)]
        if query.after:
            argv += ["--after-context", str(query.after)]
    target = "." if query.root.is_dir() else query.root.name
    return [*argv, "--regexp", query.pattern, "--", target]


def _strip_dot(path: str) -> str:
    return path[2:] if path.startswith("./") else path


def _rg_entries(text: str, mode: str, line_numbers: bool = True) -> Iterator[tuple[str | None, str]]:
    """(file name or None, display line) for each line of ripgrep's `--null` output."""
    if mode == "files_with_matches":
        for name in re.split("[\0\n]", text):
            if name:
                yield _strip_dot(name), _strip_dot(name)
        return
    for line in text.split("\n"):
        line = line.removesuffix("\r")
        name, nul, rest = line.partition("\0")
        if not nul:
            if line:
                yield None, _strip_dot(line)  # `--` between context groups
            continue
        name = _strip_dot(name)
        sep = ":"
        if mode == "content" and (m := _RG_LINE_SEP_RE.match(rest)):
            sep = m.group(1)
            if not line_numbers:
                rest = rest[m.end():]
        yield name, f"{name}{sep}{rest}"


def _rg_lines(stdout: bytes, query: GrepQuery, skip: SkipFn) -> list[str]:
    lines: list[str] = []
    for name, line in _rg_entries(stdout.decode("utf-8", "replace"), query.mode, query.line_numbers):
        if name is not None and skip(query.cwd / name):
            continue
        if line == "--" and (not lines or lines[-1] == "--"):
            continue  # the group between two separators belonged to a skipped file
        lines.append(line)
    if lines and lines[-1] == "--":
        lines.pop()
    return lines


async def run_rg(argv: list[str], query: GrepQuery, timeout_s: float,
                 skip: SkipFn = _skip_nothing) -> tuple[GrepFound, int | None, str]:
    """Run ripgrep (`rg_argv(query)`) in `query.cwd`; returns what it found (files `skip` names dropped), its exit
    code (None when stopped) and its stderr."""
    proc = await asyncio.create_subprocess_exec(
        *argv,
        cwd=query.cwd,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    assert proc.stdout is not None and proc.stderr is not None
    out = bytearray()
    err = bytearray()
    found = GrepFound()

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
        out = out[: out.rfind(b"\0" if query.mode == "files_with_matches" else b"\n") + 1]
    found.lines = _rg_lines(bytes(out), query, skip)
    returncode = None if found.partial else proc.returncode
    return found, returncode, bytes(err).decode("utf-8", "replace")


# --------------------------------------------------------------------------------------------------------------
# pure Python


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
                if entry.name not in SKIP_DIRS:
                    yield from _walk(Path(entry.path), rel + "/")
            elif entry.is_file(follow_symlinks=False):
                yield Path(entry.path), rel
        except OSError:
            continue


def python_grep(
    query: GrepQuery, regex: re.Pattern[str], stop: threading.Event, deadline: float, max_lines: int,
    skip: SkipFn = _skip_nothing,
) -> GrepFound:
    """Search like ripgrep would, never opening a file `skip` names; content mode stops once it has more than
    `max_lines` lines."""
    found = GrepFound()
    if query.root.is_dir():
        by_glob = _glob_filter(query.file_glob)
        file_type = query.file_type

        def accept(rel: str) -> bool:
            return by_glob(rel) and (file_type is None or type_matches(file_type, rel.rsplit("/", 1)[-1]))

        files: Iterator[tuple[Path, str]] = (
            (p, rel) for p, rel in _walk(query.root) if accept(rel) and not skip(p))
    else:
        files = iter([(query.root, query.root.name)] if not skip(query.root) else [])
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
    f: Any, rel: str, regex: re.Pattern[str], query: GrepQuery, out: list[str], printed: list[int]
) -> None:
    """Append this file's results to `out` in the query's format. `printed[0]` is 1 once any content line was
    written (context groups of different files are separated by `--`, like ripgrep)."""
    if query.multiline:
        _search_whole(f.read().decode("utf-8", "replace"), rel, regex, query, out, printed)
        return
    count = 0
    writer = _ContentWriter(rel, query, out, printed)
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
        writer.line(lineno, line, hit)
    if query.mode == "count" and count:
        out.append(f"{rel}:{count}")


def _search_whole(text: str, rel: str, regex: re.Pattern[str], query: GrepQuery, out: list[str],
                  printed: list[int]) -> None:
    """Multiline mode: the pattern runs over the whole text; each line a match spans is a matching line."""
    matches = list(regex.finditer(text))
    if not matches:
        return
    if query.mode == "files_with_matches":
        out.append(rel)
        return
    if query.mode == "count":
        out.append(f"{rel}:{len(matches)}")
        return
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    hit_lines: set[int] = set()
    for match in matches:
        if match.start() >= len(text) and lines:
            continue  # an empty match after the last line end is on no line
        first = bisect.bisect_right(starts, match.start())
        last = bisect.bisect_right(starts, max(match.start(), match.end() - 1))
        hit_lines.update(n for n in range(first, last + 1) if n <= len(lines))
    writer = _ContentWriter(rel, query, out, printed)
    for lineno, line in enumerate(lines, 1):
        writer.line(lineno, line.removesuffix("\r"), lineno in hit_lines)


class _ContentWriter:
    """Writes one file's content-mode lines: matches, the context around them, `--` between groups."""

    def __init__(self, rel: str, query: GrepQuery, out: list[str], printed: list[int]) -> None:
        self.rel, self.out, self.printed = rel, out, printed
        self.numbers = query.line_numbers
        self.context = bool(query.before or query.after)
        self.after_n = query.after
        self.before: deque[tuple[int, str]] = deque(maxlen=query.before)
        self.last_out = 0  # line number of the last line written for this file
        self.after_left = 0

    def _write(self, lineno: int, text: str, sep: str) -> None:
        self.out.append(f"{self.rel}{sep}{lineno}{sep}{text}" if self.numbers else f"{self.rel}{sep}{text}")
        self.last_out = lineno

    def line(self, lineno: int, text: str, hit: bool) -> None:
        if hit:
            first = self.before[0][0] if self.before else lineno
            if self.context and self.printed[0] and (self.last_out == 0 or first > self.last_out + 1):
                self.out.append("--")
            for n, before in self.before:
                self._write(n, before, "-")
            self.before.clear()
            self._write(lineno, text, ":")
            self.printed[0] = 1
            self.after_left = self.after_n
        elif self.after_left:
            self._write(lineno, text, "-")
            self.after_left -= 1
        elif self.before.maxlen:
            self.before.append((lineno, text))
