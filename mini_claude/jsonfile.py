"""JSON config files (settings.json, .mcp.json, ~/.claude.json): reading them with one-line `ConfigError`s, and
rewriting them atomically."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from mini_claude.errors import ConfigError

__all__ = ["json_type", "parse_json_object", "read_json_object", "write_json_atomic"]


def read_json_object(path: Path, display: str, errors: list[ConfigError]) -> dict[str, Any] | None:
    """The file's top-level object; None (with an error appended unless the file is simply absent) otherwise.
    An empty file is `{}`; a UTF-8 byte-order mark is accepted."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        return None
    except UnicodeDecodeError:
        errors.append(ConfigError("not valid UTF-8", file=display))
        return None
    except OSError as exc:
        errors.append(ConfigError(f"cannot read: {exc.strerror or exc}", file=display))
        return None
    return parse_json_object(text, display, errors)


def parse_json_object(text: str, display: str, errors: list[ConfigError]) -> dict[str, Any] | None:
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        errors.append(ConfigError(f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}", file=display))
        return None
    if not isinstance(data, dict):
        errors.append(ConfigError(f"expected a JSON object at the top level, got {json_type(data)}", file=display))
        return None
    return data


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
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
