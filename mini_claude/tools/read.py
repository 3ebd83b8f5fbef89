"""The `Read` tool, with Claude Code's name and input keys (`file_path`, `offset`, `limit`): a text file with line
numbers, an image as an image block, a notebook as its cells (notebook.py).

It records what it saw of the file (`ToolContext.read_files`: mtime and size, taken before reading), which `Write`
and `Edit` (files.py) check before changing it. Lines are read as bytes and shown decoded, each cut at
`MAX_LINE_CHARS`, the whole output at about `MAX_READ_OUTPUT_CHARS`; binary files, directories and anything that
is not a regular file are refused with a clear error.
"""

from __future__ import annotations

import asyncio
import base64
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mini_claude.tools.base import FileState, ToolContext, ToolResult
from mini_claude.tools.files import FILE_PATH_KEY, os_reason, path_arg, state_of
from mini_claude.tools.notebook import MAX_NOTEBOOK_BYTES, notebook_view

__all__ = [
    "DEFAULT_READ_LIMIT_LINES",
    "MAX_IMAGE_BYTES",
    "MAX_LINE_CHARS",
    "MAX_READ_OUTPUT_CHARS",
    "ReadFileTool",
]

DEFAULT_READ_LIMIT_LINES = 2000
MAX_LINE_CHARS = 2000
# Read stops adding lines once its output reaches this size (the note says where it stopped).
MAX_READ_OUTPUT_CHARS = 100_000
MAX_IMAGE_BYTES = 5 * 1024 * 1024
_SNIFF_BYTES = 8192
_COUNT_CHUNK_BYTES = 1024 * 1024

_IMAGE_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)


def _int_arg(args: dict[str, Any], key: str, default: int) -> int | str:
    value = args.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value):
        return f"{key} must be an integer"
    return int(value)


def _image_type(head: bytes) -> str | None:
    for magic, mime in _IMAGE_MAGIC:
        if head.startswith(magic):
            return mime
    if len(head) >= 12 and head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


@dataclass
class _ReadOutcome:
    result: ToolResult
    state: FileState | None = None


def _display_line(raw: bytes, lineno: int) -> str:
    if raw.endswith(b"\n"):
        raw = raw[:-1]
    if raw.endswith(b"\r"):
        raw = raw[:-1]
    line = raw.decode("utf-8", "replace")
    if lineno == 1:
        line = line.removeprefix("\ufeff")
    if len(line) > MAX_LINE_CHARS:
        line = f"{line[:MAX_LINE_CHARS]} … [line truncated: {len(line)} characters]"
    return line


def _read_sync(path: Path, offset: int, limit: int) -> _ReadOutcome:
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return _ReadOutcome(ToolResult.error(f"{path} does not exist"))
    except OSError as exc:
        return _ReadOutcome(ToolResult.error(f"cannot read {path}: {os_reason(exc)}"))
    if stat.S_ISDIR(st.st_mode):
        return _ReadOutcome(
            ToolResult.error(f"{path} is a directory, not a file; use Glob (e.g. pattern '*' with this path) to list it")
        )
    if not stat.S_ISREG(st.st_mode):
        # Opening a FIFO or a device could block forever or never end.
        return _ReadOutcome(ToolResult.error(f"{path} is not a regular file"))
    try:
        with open(path, "rb") as f:
            # The state is taken before reading: if the file changes while we read, a later edit is refused.
            state = state_of(os.fstat(f.fileno()))
            head = f.read(_SNIFF_BYTES)
            mime = _image_type(head)
            if mime is not None:
                if state.size > MAX_IMAGE_BYTES:
                    return _ReadOutcome(ToolResult.error(
                        f"{path} is a {mime} image of {state.size} bytes; images over {MAX_IMAGE_BYTES} bytes "
                        "cannot be read"
                    ))
                data = head + f.read()
                blocks = [
                    {"type": "text", "text": f"Image {path} ({mime}, {len(data)} bytes)"},
                    {
                        "type": "image",
                        "source": {"type": "base64", "media_type": mime, "data": base64.b64encode(data).decode()},
                    },
                ]
                return _ReadOutcome(ToolResult(blocks), state)
            if b"\0" in head:
                return _ReadOutcome(ToolResult.error(
                    f"{path} is a binary file ({state.size} bytes); Read shows only text files and PNG, JPEG, "
                    "GIF or WEBP images (use Bash, e.g. `file` or `xxd | head`, to inspect it)"
                ))
            if not head:
                return _ReadOutcome(ToolResult.text(f"(file {path} is empty: 0 bytes)"), state)
            if path.suffix.lower() == ".ipynb" and state.size <= MAX_NOTEBOOK_BYTES:
                cells = notebook_view(head + f.read(), path)  # its cells, ids and outputs (notebook.py)
                if cells is not None:
                    return _ReadOutcome(cells, state)
            f.seek(0)
            return _ReadOutcome(_number_lines(f, path, offset, limit), state)
    except OSError as exc:
        return _ReadOutcome(ToolResult.error(f"cannot read {path}: {os_reason(exc)}"))


def _number_lines(f: Any, path: Path, offset: int, limit: int) -> ToolResult:
    last_wanted = offset + limit - 1
    out: list[str] = []
    chars = 0
    capped = False
    shown_last = 0
    lineno = 0
    for raw in f:
        lineno += 1
        if lineno < offset:
            continue
        if not capped:
            entry = f"{lineno:>6}\t{_display_line(raw, lineno)}"
            if out and chars + len(entry) + 1 > MAX_READ_OUTPUT_CHARS:
                capped = True
            else:
                out.append(entry)
                chars += len(entry) + 1
                shown_last = lineno
        if lineno >= last_wanted or capped:
            break
    total = lineno
    if lineno >= last_wanted or capped:
        # Count the rest without decoding it.
        rest_newlines = 0
        last_byte = b"\n"
        while chunk := f.read(_COUNT_CHUNK_BYTES):
            rest_newlines += chunk.count(b"\n")
            last_byte = chunk[-1:]
        total += rest_newlines + (0 if last_byte == b"\n" else 1)
    if offset > total:
        return ToolResult.error(f"offset {offset} is past the end of {path} (it has {total} lines)")
    text = "\n".join(out)
    if offset > 1 or shown_last < total:
        cap_note = f"; output capped at {MAX_READ_OUTPUT_CHARS} characters" if capped else ""
        text += (
            f"\n\n(file has {total} lines; showing {offset}-{shown_last}{cap_note}; use offset/limit to read more)"
        )
    return ToolResult.text(text)


class ReadFileTool:
    """Shows a text file with line numbers, or an image as an image block."""

    name = "Read"
    description = (
        "Read a file from the local filesystem. Text is returned with line numbers in the style of `cat -n` "
        "(line number, a tab, then the line); the numbers are not part of the file. By default up to "
        f"{DEFAULT_READ_LIMIT_LINES} lines from the start are shown; use offset (1-based first line) and limit (number "
        f"of lines) to read other parts of long files. Lines longer than {MAX_LINE_CHARS} characters are truncated "
        f"and the output stops at about {MAX_READ_OUTPUT_CHARS} characters; a note then says which lines were shown. "
        f"PNG, JPEG, GIF and WEBP images (up to {MAX_IMAGE_BYTES // (1024 * 1024)} MB) are returned as images. Other "
        "binary files and directories are refused (use Glob to list a directory). A file must be read before it "
        "can be edited with Edit or overwritten with Write."
    )
    read_only = True

    def __init__(self) -> None:
        self.input_schema: dict[str, Any] = {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                FILE_PATH_KEY: {"type": "string", "description": "The file to read (absolute, or relative to "
                                 "the working directory)."},
                "offset": {"type": "integer", "minimum": 1, "description": "The 1-based line number to start at "
                           "(default 1)."},
                "limit": {"type": "integer", "minimum": 1, "description": "How many lines to show (default "
                          f"{DEFAULT_READ_LIMIT_LINES})."},
            },
            "required": [FILE_PATH_KEY],
        }

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        path = path_arg(args, ctx)
        if isinstance(path, str):
            return ToolResult.error(path)
        offset = _int_arg(args, "offset", 1)
        if isinstance(offset, str):
            return ToolResult.error(offset)
        limit = _int_arg(args, "limit", DEFAULT_READ_LIMIT_LINES)
        if isinstance(limit, str):
            return ToolResult.error(limit)
        if limit < 1:
            return ToolResult.error("limit must be at least 1")
        outcome = await asyncio.to_thread(_read_sync, path, max(offset, 1), limit)
        if outcome.state is not None and not outcome.result.is_error:
            ctx.read_files[path] = outcome.state
        return outcome.result
