"""The one door for reading the files mini-claude is configured with, and rewriting JSON config files atomically.

What a repository ships (`.mcp.json`, `.claude/settings*.json`, `CLAUDE.md` and its `@imports`, `.claude/rules`,
`.claude/commands`, `.claude/skills`, `.env`) and the user's own files (`~/.claude.json`, `~/.claude/settings.json`)
are read here, bounded:

* regular files only. A `stat` first (a device is never even opened), then the file is opened with `O_NONBLOCK`
  (opening a FIFO never waits for a writer) and `O_NOCTTY`, and the open descriptor is checked again with `fstat`
  (whatever was swapped in between): a device (`/dev/zero`, `/dev/tty`), a FIFO, a socket or a folder is refused
  ("not a regular file (a character device)"), whatever a symlink made it look like;
* a size cap: at most the cap (plus one byte, to tell) is ever read, whatever size the file claims (`/proc`
  files claim 0). Over it the file is refused ("larger than 10 MB"), or, for memory files that are cut instead,
  its head is returned with a flag;
* JSON: at most `MAX_JSON_DEPTH` levels of objects/arrays. CPython's decoder guards its own recursion (a
  `RecursionError`, reported as the same "nested deeper than" error), and the decoded value is then walked
  iteratively (`nested_deeper_than`, shared with the MCP transports' message readers), so nothing deeper than the limit ever reaches code that recurses
  (the indenting encoder, `copy.deepcopy`, `repr`).

Every failure is one `ConfigError` naming the file (as the caller shows it) and why; it costs that file only. A
missing file is not an error (`None`).
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import tempfile
from pathlib import Path
from typing import Any

from mini_claude.errors import ConfigError

__all__ = [
    "MAX_CLAUDE_JSON_BYTES",
    "MAX_JSON_DEPTH",
    "MAX_JSON_FILE_BYTES",
    "json_type",
    "nested_deeper_than",
    "parse_json_object",
    "read_json_object",
    "read_regular_file",
    "read_regular_head",
    "read_regular_text",
    "replace_atomically",
    "size_text",
    "write_json_atomic",
]

MAX_JSON_FILE_BYTES = 10 * 1024 * 1024  # a settings file or .mcp.json
# ~/.claude.json grows with Claude Code's history (the user's own file; a repository cannot ship it)
MAX_CLAUDE_JSON_BYTES = 64 * 1024 * 1024
MAX_JSON_DEPTH = 128  # levels of objects/arrays (the top-level object is level 1); config needs under ten
_READ_CHUNK_BYTES = 1024 * 1024
_OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0)
_MIB = 1024 * 1024

_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
)


def size_text(size: int) -> str:
    """`10 MB` for a whole number of MiB, else `1234 bytes` (for limits in messages)."""
    return f"{size // _MIB} MB" if size >= _MIB and size % _MIB == 0 else f"{size} bytes"


def read_regular_head(path: Path, display: str, *, max_bytes: int) -> tuple[bytes, bool] | None:
    """The first `max_bytes` bytes of the regular file at `path` and whether more followed; None when there is no
    file. Raises ConfigError (file=`display`) when it is not a regular file or cannot be read."""
    try:
        _require_regular(os.stat(path).st_mode, display)  # a device is never even opened
        fd = os.open(path, _OPEN_FLAGS)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror or exc}", file=display) from None
    try:
        _require_regular(os.fstat(fd).st_mode, display)  # what was opened, whatever was swapped in since
        chunks: list[bytes] = []
        left = max_bytes + 1
        while left > 0:
            chunk = os.read(fd, min(left, _READ_CHUNK_BYTES))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror or exc}", file=display) from None
    finally:
        os.close(fd)
    data = b"".join(chunks)
    return data[:max_bytes], len(data) > max_bytes


def _require_regular(mode: int, display: str) -> None:
    if not stat.S_ISREG(mode):
        kind = next((name for test, name in _KINDS if test(mode)), "something else")
        raise ConfigError(f"not a regular file ({kind})", file=display)


def read_regular_file(path: Path, display: str, *, max_bytes: int) -> bytes | None:
    """The bytes of the regular file at `path`; None when there is no file. Raises ConfigError when it is not a
    regular file, is larger than `max_bytes`, or cannot be read."""
    head = read_regular_head(path, display, max_bytes=max_bytes)
    if head is None:
        return None
    data, more = head
    if more:
        raise ConfigError(f"larger than {size_text(max_bytes)}", file=display)
    return data


def read_regular_text(path: Path, display: str, *, max_bytes: int, encoding: str = "utf-8") -> str | None:
    """`read_regular_file` decoded (strictly: invalid text is a ConfigError "not valid UTF-8")."""
    data = read_regular_file(path, display, max_bytes=max_bytes)
    if data is None:
        return None
    try:
        return data.decode(encoding)
    except UnicodeDecodeError:
        raise ConfigError("not valid UTF-8", file=display) from None


def read_json_object(path: Path, display: str, errors: list[ConfigError], *,
                     max_bytes: int = MAX_JSON_FILE_BYTES) -> dict[str, Any] | None:
    """The file's top-level object; None (with an error appended unless the file is simply absent) otherwise.
    An empty file is `{}`; a UTF-8 byte-order mark is accepted. Bounded as the module docstring says."""
    try:
        text = read_regular_text(path, display, max_bytes=max_bytes, encoding="utf-8-sig")
    except ConfigError as exc:
        errors.append(exc)
        return None
    if text is None:
        return None
    return parse_json_object(text, display, errors)


def parse_json_object(text: str, display: str, errors: list[ConfigError], *,
                      max_depth: int = MAX_JSON_DEPTH) -> dict[str, Any] | None:
    """`text` as a JSON object, at most `max_depth` levels deep; None with an error appended otherwise."""
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        errors.append(ConfigError(f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}", file=display))
        return None
    except RecursionError:  # the decoder's own guard: far deeper than max_depth
        data = None
        deep = True
    else:
        deep = nested_deeper_than(data, max_depth)
    if deep:
        errors.append(ConfigError(f"nested deeper than {max_depth} levels", file=display))
        return None
    if not isinstance(data, dict):
        errors.append(ConfigError(f"expected a JSON object at the top level, got {json_type(data)}", file=display))
        return None
    return data


def nested_deeper_than(value: Any, limit: int) -> bool:
    """Whether `value` has more than `limit` levels of objects/arrays (a scalar has 0, `{}` and `[1]` have 1).

    Iterative, level by level: safe for values of any depth, and linear in the number of containers."""
    level = [value] if isinstance(value, dict | list) else []
    depth = 0
    while level:
        depth += 1
        if depth > limit:
            return True
        # one comprehension per level, not one per container: about 3x faster on listings of many small objects
        level = [child for item in level for child in (item.values() if type(item) is dict else item)
                 if type(child) is dict or type(child) is list]
    return False


def json_type(value: Any) -> str:
    """JSON's name for a value's type, for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def write_json_atomic(path: Path, data: Any, *, new_mode: int) -> None:
    """Write `data` as pretty JSON through a temp file and a rename, so a crash never leaves half a file. An
    existing file keeps its mode; a new one gets `new_mode`. A symlink is followed (dotfile managers link
    ~/.claude.json): the file it points to is rewritten and the link kept."""
    if path.is_symlink():
        path = path.resolve()
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = path.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = new_mode
    replace_atomically(path, (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8"), mode)


def replace_atomically(path: Path, data: bytes, mode: int) -> None:
    """Write `data` to a temp file beside `path` (fsynced, then given `mode`) and rename it over `path`: a crash
    leaves the old file or the new one, never half of one. The temp file is removed on any failure."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
