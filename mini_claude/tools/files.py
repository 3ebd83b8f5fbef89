"""The file-changing tools, with Claude Code's names and input keys: `Write` and `Edit` (`file_path`, …), and the
pieces every file tool shares (the path argument, a file's recorded state, the read-before-change rule).

`Read` (read.py) records what it saw of a file (`ToolContext.read_files`: mtime and size). `Write` (over an
existing file) and `Edit` refuse to touch a file that was not read in this session or that changed on disk
since, so the model never overwrites work it has not seen. Both record the new state after writing.

Paths are made absolute with `ToolContext.resolve` and normalised (`..` folded, symlinks kept), so `a/../b` and `b`
are the same key in `read_files`. Files are read and written as bytes: `Edit` changes exactly the replaced
text and keeps everything else (line endings, invalid UTF-8, a BOM) as it was.
"""

from __future__ import annotations

import asyncio
import difflib
import os
import re
import stat
from pathlib import Path
from typing import Any

from mini_claude.tools.base import FileState, ToolContext, ToolResult

__all__ = [
    "FILE_PATH_KEY",
    "EditFileTool",
    "WriteFileTool",
    "os_reason",
    "path_arg",
    "state_of",
]

# The one input key the file tools read their path from (Claude Code's).
FILE_PATH_KEY = "file_path"
MAX_DIFF_CHARS = 4000
DIFF_CONTEXT_LINES = 3

_HUNK = re.compile(r"^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@")


# --------------------------------------------------------------------------------------------------------------
# Shared helpers


def path_arg(args: dict[str, Any], ctx: ToolContext) -> Path | str:
    """The resolved, normalised path of `args["file_path"]`, or an error message."""
    raw = args.get(FILE_PATH_KEY)
    if not isinstance(raw, str) or not raw.strip():
        return f"{FILE_PATH_KEY} must be a non-empty string"
    return Path(os.path.abspath(ctx.resolve(raw)))


def state_of(st: os.stat_result) -> FileState:
    return FileState(mtime_ns=st.st_mtime_ns, size=st.st_size)


def _changed(state: FileState, st: os.stat_result) -> bool:
    return state.mtime_ns != st.st_mtime_ns or state.size != st.st_size


def os_reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


def _check_fresh(path: Path, ctx: ToolContext, st: os.stat_result, verb: str) -> str | None:
    """Why `path` may not be changed now (not read, or changed since), or None."""
    state = ctx.read_files.get(path)
    if state is None:
        return f"{path} has not been read in this session; read it with Read before {verb} it"
    if _changed(state, st):
        return f"{path} changed on disk since it was read; read it again"
    return None


# --------------------------------------------------------------------------------------------------------------
# Write


def _write_sync(path: Path, data: bytes, ctx: ToolContext) -> ToolResult:
    try:
        st: os.stat_result | None = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        st = None
    except OSError as exc:
        return ToolResult.error(f"cannot write {path}: {os_reason(exc)}")
    if st is not None:
        if stat.S_ISDIR(st.st_mode):
            return ToolResult.error(f"{path} is a directory")
        refusal = _check_fresh(path, ctx, st, "overwriting")
        if refusal:
            return ToolResult.error(refusal)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return ToolResult.error(f"cannot create directory {path.parent}: {os_reason(exc)}")
    try:
        with open(path, "wb") as f:
            f.write(data)
        new_state = state_of(os.stat(path))
    except OSError as exc:
        return ToolResult.error(f"cannot write {path}: {os_reason(exc)}")
    ctx.read_files[path] = new_state
    how = "overwrote the existing file" if st is not None else "created"
    return ToolResult.text(f"Wrote {len(data)} bytes to {path} ({how})")


class WriteFileTool:
    """Creates or overwrites a file with the given content."""

    name = "Write"
    description = (
        "Write a file with exactly the given content (UTF-8), creating missing parent directories. Overwriting an "
        "existing file is only allowed after reading it with Read in this session, and only if it has not "
        "changed on disk since. To change part of an existing file, prefer Edit."
    )
    read_only = False

    def __init__(self) -> None:
        self.input_schema: dict[str, Any] = {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                FILE_PATH_KEY: {"type": "string", "description": "The file to write (absolute, or relative to "
                                 "the working directory)."},
                "content": {"type": "string", "description": "The complete new content of the file."},
            },
            "required": [FILE_PATH_KEY, "content"],
        }

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        path = path_arg(args, ctx)
        if isinstance(path, str):
            return ToolResult.error(path)
        content = args.get("content")
        if not isinstance(content, str):
            return ToolResult.error("content must be a string")
        try:
            data = content.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:
            return ToolResult.error("content contains characters that cannot be written as UTF-8")
        return await asyncio.to_thread(_write_sync, path, data, ctx)


# --------------------------------------------------------------------------------------------------------------
# Edit


def _to_crlf(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\n", "\r\n")


def _split_lines(text: str) -> list[str]:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def _diff_snippet(before: str, after: str, path: Path) -> str:
    """A unified diff of the change, computed only around the changed region (big files stay cheap)."""
    a, b = _split_lines(before), _split_lines(after)
    prefix = 0
    while prefix < min(len(a), len(b)) and a[prefix] == b[prefix]:
        prefix += 1
    suffix = 0
    while suffix < min(len(a), len(b)) - prefix and a[-1 - suffix] == b[-1 - suffix]:
        suffix += 1
    start = max(0, prefix - DIFF_CONTEXT_LINES)
    keep_suffix = max(0, suffix - DIFF_CONTEXT_LINES)
    a_mid, b_mid = a[start : len(a) - keep_suffix], b[start : len(b) - keep_suffix]
    lines = []
    for line in difflib.unified_diff(
        a_mid, b_mid, fromfile=str(path), tofile=str(path), n=DIFF_CONTEXT_LINES, lineterm=""
    ):
        match = _HUNK.match(line)
        if match and start:
            old_start, old_len, new_start, new_len = match.groups()
            line = f"@@ -{int(old_start) + start}{old_len or ''} +{int(new_start) + start}{new_len or ''} @@"
        lines.append(line)
    text = "\n".join(lines)
    # Undecodable bytes were carried as surrogates; show them as replacement characters.
    text = text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    if len(text) > MAX_DIFF_CHARS:
        text = text[:MAX_DIFF_CHARS] + "\n… (diff truncated)"
    return text


def _edit_sync(path: Path, old: str, new: str, replace_all: bool, ctx: ToolContext) -> ToolResult:
    try:
        with open(path, "rb") as f:
            st = os.fstat(f.fileno())
            if stat.S_ISDIR(st.st_mode):
                return ToolResult.error(f"{path} is a directory")
            refusal = _check_fresh(path, ctx, st, "editing")
            if refusal:
                return ToolResult.error(refusal)
            data = f.read()
    except (FileNotFoundError, NotADirectoryError):
        return ToolResult.error(f"{path} does not exist (use Write to create a file)")
    except IsADirectoryError:
        return ToolResult.error(f"{path} is a directory")
    except OSError as exc:
        return ToolResult.error(f"cannot read {path}: {os_reason(exc)}")

    text = data.decode("utf-8", "surrogateescape")
    count = text.count(old)
    if count == 0 and "\r\n" in text and "\n" in old:
        # The model sees lines without their "\r"; match its "\n" against the file's CRLF line endings.
        crlf_old = _to_crlf(old)
        crlf_count = text.count(crlf_old)
        if crlf_count:
            old, new, count = crlf_old, _to_crlf(new), crlf_count
    if count == 0:
        return ToolResult.error(
            f"old_string not found in {path}; it must match the file exactly, including whitespace and "
            "indentation, without Read's line-number prefixes"
        )
    if count > 1 and not replace_all:
        return ToolResult.error(
            f"old_string occurs {count} times in {path}; add context to make it unique or set replace_all"
        )
    updated = text.replace(old, new) if replace_all else text.replace(old, new, 1)
    try:
        new_data = updated.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return ToolResult.error("new_string contains characters that cannot be written as UTF-8")
    try:
        with open(path, "wb") as f:
            f.write(new_data)
        new_state = state_of(os.stat(path))
    except OSError as exc:
        return ToolResult.error(f"cannot write {path}: {os_reason(exc)}")
    ctx.read_files[path] = new_state
    replaced = count if replace_all else 1
    noun = "occurrence" if replaced == 1 else "occurrences"
    return ToolResult.text(f"Edited {path}: replaced {replaced} {noun}.\n{_diff_snippet(text, updated, path)}")


class EditFileTool:
    """Replaces an exact string in a file that was read first."""

    name = "Edit"
    description = (
        "Edit a file by replacing an exact string. old_string must match the file's text exactly (whitespace and "
        "indentation included, without the line-number prefixes Read shows) and must occur exactly once, "
        "unless replace_all is true, which replaces every occurrence. Include enough surrounding lines to make it "
        "unique. The file must have been read with Read in this session and not changed on disk since. "
        "Everything outside the replaced text is kept byte for byte, line endings included. Returns a diff of the "
        "change. To create a new file use Write."
    )
    read_only = False

    def __init__(self) -> None:
        self.input_schema: dict[str, Any] = {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                FILE_PATH_KEY: {"type": "string", "description": "The file to edit (absolute, or relative to "
                                 "the working directory)."},
                "old_string": {"type": "string", "description": "The exact text to replace."},
                "new_string": {"type": "string", "description": "The text to put in its place (must differ)."},
                "replace_all": {"type": "boolean", "default": False, "description": "Replace every occurrence of "
                                "old_string instead of requiring exactly one."},
            },
            "required": [FILE_PATH_KEY, "old_string", "new_string"],
        }

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        path = path_arg(args, ctx)
        if isinstance(path, str):
            return ToolResult.error(path)
        old, new = args.get("old_string"), args.get("new_string")
        if not isinstance(old, str) or not isinstance(new, str):
            return ToolResult.error("old_string and new_string must be strings")
        if old == "":
            return ToolResult.error("old_string is empty; give the text to replace (use Write to create a file)")
        if old == new:
            return ToolResult.error("old_string and new_string are the same; there is nothing to change")
        replace_all = args.get("replace_all", False)
        if replace_all is None:
            replace_all = False
        if not isinstance(replace_all, bool):
            return ToolResult.error("replace_all must be true or false")
        return await asyncio.to_thread(_edit_sync, path, old, new, replace_all, ctx)
