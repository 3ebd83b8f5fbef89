"""Bounded state files: how every JSON store under the state directory is read, written, locked and set aside.

The state directory is ours, but what is in it is not guaranteed: a crash of an older version, a full disk, a
store grown past reason, a store written by a newer mini-claude, a FIFO or a symlink someone put there. Reading
one must cost at most a warning, never a hang, a crash or an unbounded parse:

* `read_state` opens without following a symlink and without blocking (a FIFO is refused, not waited on), checks
  the size on the open file before reading (and reads at most the cap), and parses. Anything wrong — not a regular
  file, over its cap, not UTF-8 JSON, not an object, a `"version"` newer than the reader's — logs one warning line,
  moves the file aside to `<name>.bad` (replacing an earlier one: one bad copy per store, swept after a while), and
  returns None: the caller starts that store afresh. A missing file is None without a word.
* `write_state` writes through a 0600 temp file in the same 0700 folder, fsyncs it, and renames it over the old one,
  so a reader sees the old or the new file, never half of one.
* `exclusive` holds an `fcntl` lock on a lock file around one read-modify-write (milliseconds).

Nothing happens at import time.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import logging
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mini_claude.jsonfile import replace_atomically

__all__ = [
    "ASIDE_SUFFIX",
    "DIR_MODE",
    "FILE_MODE",
    "MAX_STATE_BYTES",
    "exclusive",
    "private_dir",
    "read_state",
    "set_aside",
    "write_state",
    "write_state_bytes",
]

log = logging.getLogger(__name__)

MAX_STATE_BYTES = 16 * 1024 * 1024  # the default cap of a store: far above any honest one
ASIDE_SUFFIX = ".bad"
DIR_MODE = 0o700
FILE_MODE = 0o600
_OPEN_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class _Unusable(Exception):
    """Why a store cannot be used as it is (the text of the warning)."""


def read_state(path: Path, *, what: str, max_bytes: int = MAX_STATE_BYTES, version: int | None = None,
               afresh: str = "starting afresh", warnings: list[str] | None = None) -> dict[str, Any] | None:
    """The JSON object stored at `path`; None when there is none to use (see the module docstring). `what` names
    the store in the warning ("MCP tool pins"), `afresh` says what happens next; `version`: the newest
    `"version"` this reader understands. The warning is logged, and appended to `warnings` when given."""
    try:
        text = _read_capped(path, max_bytes)
        if text is None:
            return None
        try:
            data = json.loads(text) if text.strip() else {}
        except (ValueError, RecursionError) as exc:
            raise _Unusable(f"not valid JSON ({_short(exc)})") from None
        if not isinstance(data, dict):
            raise _Unusable("not a JSON object")
        found = data.get("version")
        if version is not None and isinstance(found, int) and not isinstance(found, bool) and found > version:
            raise _Unusable(f"written by a newer mini-claude (version {found}; this one reads up to {version})")
    except _Unusable as problem:
        aside = set_aside(path)
        kept = f"kept as {aside.name}" if aside is not None else "could not be moved aside"
        _warn(f"{what} {path}: {problem}; {afresh} ({kept})", warnings)
        return None
    except OSError as exc:
        _warn(f"{what} {path}: cannot read ({exc.strerror or exc}); {afresh}", warnings)
        return None
    return data


def _warn(message: str, warnings: list[str] | None) -> None:
    log.warning("%s", message)
    if warnings is not None and message not in warnings:
        warnings.append(message)


def _read_capped(path: Path, max_bytes: int) -> str | None:
    """The file's text (None when it does not exist); raises _Unusable for a non-regular, oversized or non-UTF-8
    file, OSError when it cannot be read."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _Unusable("a symlink, not a file") from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _Unusable("not a regular file")
        if info.st_size > max_bytes:
            raise _Unusable(f"{info.st_size} bytes, over the {max_bytes}-byte limit")
        chunks: list[bytes] = []
        left = max_bytes + 1  # a file that grew since fstat is still read only this far
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    finally:
        os.close(fd)
    raw = b"".join(chunks)
    if len(raw) > max_bytes:
        raise _Unusable(f"over the {max_bytes}-byte limit")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise _Unusable("not UTF-8") from None


def _short(exc: BaseException) -> str:
    text = str(exc) or exc.__class__.__name__
    return text if len(text) <= 120 else text[:117] + "..."


def set_aside(path: Path) -> Path | None:
    """Move `path` to `<name>.bad` (replacing an earlier one, so one bad copy per store); the new path, or None
    when it could not be moved (it is then left where it is: the next write replaces it)."""
    aside = path.with_name(path.name + ASIDE_SUFFIX)
    try:
        os.replace(path, aside)
    except OSError as exc:
        log.debug("cannot move %s aside: %s", path, exc)
        return None
    with contextlib.suppress(OSError):  # the sweep removes set-aside files by age: from now, not from their writing
        os.utime(aside, follow_symlinks=False)
    return aside


def private_dir(folder: Path) -> None:
    """Create `folder` (and missing parents) 0700; an existing one of ours is tightened to 0700."""
    folder.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    with contextlib.suppress(OSError):
        info = os.lstat(folder)
        if stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and stat.S_IMODE(info.st_mode) != DIR_MODE:
            os.chmod(folder, DIR_MODE)


def write_state(path: Path, data: Any, *, indent: int | None = None) -> None:
    """Write `data` as JSON to `path` atomically (temp file, fsync, rename), 0600 in a 0700 folder. A symlink at
    `path` is replaced, never followed. Raises OSError."""
    text = json.dumps(data, ensure_ascii=False, indent=indent, separators=None if indent else (",", ":"))
    write_state_bytes(path, (text + "\n").encode("utf-8", "surrogatepass"))


def write_state_bytes(path: Path, data: bytes) -> None:
    """`write_state` for bytes as they are."""
    private_dir(path.parent)
    replace_atomically(path, data, FILE_MODE)  # the temp file is 0600 from its creation (mkstemp)


@contextlib.contextmanager
def exclusive(lock: Path, *, blocking: bool = True) -> Iterator[bool]:
    """Hold an exclusive lock on the file `lock` (created 0600) while the block runs; yields False when the lock
    could not be had (no writable folder, or `blocking=False` and someone else holds it): the caller decides
    whether to go on unlocked."""
    try:
        private_dir(lock.parent)
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, FILE_MODE)
    except OSError as exc:
        log.debug("cannot open the lock %s: %s", lock, exc)
        yield False
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX if blocking else fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            yield False
            return
        yield True
    finally:
        os.close(fd)  # closing releases the lock
