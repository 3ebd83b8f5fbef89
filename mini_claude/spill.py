"""Saving what is too big (or not text) to show the model: a file, and a path the model can read instead.

Spill files hold tool output (a server's answer, a command's output), which may be private, so:

* they live in private folders: every folder this module creates is 0700, and the spill folder itself (and the
  spill root above it, `tool-output/` under the state directory) is tightened to 0700 if it was looser;
* each file is created 0600 with `O_CREAT | O_EXCL | O_NOFOLLOW`, relative to the opened folder: a symlink planted
  at a file's path (dangling or not) is refused, never followed, and the folder itself may not be a symlink;
* files are content-addressed (name + digest), so saving the same output twice reuses the first file;
* files older than `MAX_AGE_S` are removed from the spill root's session folders (and emptied folders with them)
  when a session creates its spill folder: once per session, so cleaning costs nothing per spill. Only folders
  laid out as `…/tool-output/<session>/` are swept; a spill folder elsewhere is never swept.
* the whole spill root is bounded too: past `MAX_TOTAL_BYTES` the oldest files go first (`cap_spills`, run by the
  daily state sweep), so a week of heavy output cannot fill the disk.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import logging
import os
import re
import stat
import time
from pathlib import Path

from mini_claude.secrets import SECRETS, mask

__all__ = ["MAX_AGE_S", "MAX_TOTAL_BYTES", "SPILL_ROOT_NAME", "cap_spills", "preview", "session_spill_dir",
           "spill_bytes", "spill_text", "sweep_old_spills"]

log = logging.getLogger(__name__)

SPILL_ROOT_NAME = "tool-output"  # under the state directory; one folder per session below it
MAX_AGE_S = 7 * 24 * 3600  # spill files older than this are removed
MAX_TOTAL_BYTES = 1024 * 1024 * 1024  # past this, the oldest spill files are removed
_DIR_MODE = 0o700
_FILE_MODE = 0o600
_SAFE = re.compile(r"[^A-Za-z0-9_.-]+")
_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def session_spill_dir(state_dir: Path, session: str) -> Path:
    """`<state_dir>/tool-output/<session>`: where one session's spill files go (the layout the sweep knows)."""
    return state_dir / SPILL_ROOT_NAME / _SAFE.sub("_", session)


def spill_text(text: str, directory: Path, stem: str, suffix: str = ".txt") -> Path:
    """Write `text` to a content-addressed 0600 file under `directory` (see the module docstring); its path.
    Raises OSError when it cannot (a symlink in the way included). Known secret values are masked first: a command
    the model runs may read the file back."""
    return _spill(mask(text).encode("utf-8", "surrogatepass"), directory, stem, suffix)


def spill_bytes(data: bytes, directory: Path, stem: str, suffix: str = ".bin") -> Path:
    """Write binary `data` to a content-addressed 0600 file under `directory`; its path. Raises OSError. Known
    secret values (as bytes: latin-1 keeps every byte) are masked first, as for text."""
    if len(SECRETS):
        data = mask(data.decode("latin-1")).encode("latin-1")
    return _spill(data, directory, stem, suffix)


def _spill(data: bytes, directory: Path, stem: str, suffix: str) -> Path:
    safe = _SAFE.sub("_", stem)[:60] or "output"
    name = f"{safe}-{hashlib.sha256(data).hexdigest()[:12]}{suffix}"
    created = _make_private_dirs(directory)
    dir_fd = os.open(directory, _DIR_FLAGS)  # ELOOP when the folder is a symlink
    try:
        _tighten(dir_fd, directory)
        try:
            fd = os.open(name, _CREATE_FLAGS, _FILE_MODE, dir_fd=dir_fd)
        except FileExistsError:
            if not _reusable(name, len(data), dir_fd):
                raise OSError(errno.EEXIST, "refusing to write a spill file over something that is not an "
                              "earlier copy of it (a symlink?)", str(directory / name)) from None
            with contextlib.suppress(OSError):  # still in use: keep it out of the next sweep
                os.utime(name, dir_fd=dir_fd, follow_symlinks=False)
        else:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
    finally:
        os.close(dir_fd)
    if created and directory.parent.name == SPILL_ROOT_NAME:
        sweep_old_spills(directory.parent, keep=directory)
    return directory / name


def _make_private_dirs(directory: Path) -> bool:
    """Create `directory` and its missing parents, each 0700; True when `directory` itself was created."""
    missing: list[Path] = []
    current = directory
    while not os.path.lexists(current):
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    for folder in reversed(missing):
        with contextlib.suppress(FileExistsError):  # another session made it meanwhile
            os.mkdir(folder, _DIR_MODE)
    return bool(missing)


def _tighten(dir_fd: int, directory: Path) -> None:
    """The spill folder (and a spill root above it) is ours and 0700; a folder of someone else's is refused."""
    info = os.fstat(dir_fd)
    if info.st_uid != os.getuid():
        raise PermissionError(errno.EPERM, "the spill folder belongs to another user", str(directory))
    if stat.S_IMODE(info.st_mode) != _DIR_MODE:
        os.fchmod(dir_fd, _DIR_MODE)
    root = directory.parent
    if root.name == SPILL_ROOT_NAME:
        with contextlib.suppress(OSError):
            root_info = os.lstat(root)
            if (stat.S_ISDIR(root_info.st_mode) and root_info.st_uid == os.getuid()
                    and stat.S_IMODE(root_info.st_mode) != _DIR_MODE):
                os.chmod(root, _DIR_MODE, follow_symlinks=False)


def _reusable(name: str, size: int, dir_fd: int) -> bool:
    """An existing file at a content-addressed name is reused when it is a regular file of ours of that size."""
    try:
        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode) and info.st_uid == os.getuid() and info.st_size == size


def sweep_old_spills(root: Path, *, keep: Path | None = None, max_age_s: float = MAX_AGE_S,
                     now: float | None = None) -> int:
    """Remove files older than `max_age_s` from the session folders under `root` (one level: `root/<session>/*`,
    symlinks removed as links, never followed), then the session folders left empty (but `keep`). Returns how
    many files went. Never raises: cleaning up is a courtesy."""
    cutoff = (time.time() if now is None else now) - max_age_s
    removed = 0
    try:
        sessions = list(os.scandir(root))
    except OSError:
        return 0
    for session in sessions:
        if not session.is_dir(follow_symlinks=False):
            continue
        left = 0
        try:
            entries = list(os.scandir(session.path))
        except OSError:
            continue
        for entry in entries:
            try:
                old = not entry.is_dir(follow_symlinks=False) and entry.stat(follow_symlinks=False).st_mtime < cutoff
                if old:
                    os.unlink(entry.path)
                    removed += 1
                else:
                    left += 1
            except OSError:
                left += 1
        if not left and (keep is None or Path(session.path) != keep):
            with contextlib.suppress(OSError):
                if session.stat(follow_symlinks=False).st_mtime < cutoff or entries:
                    os.rmdir(session.path)
    if removed:
        log.debug("removed %d spill file(s) older than %g days under %s", removed, max_age_s / 86400, root)
    return removed


def cap_spills(root: Path, *, max_bytes: int = MAX_TOTAL_BYTES, keep: Path | None = None) -> int:
    """Remove the oldest files of `root`'s session folders (one level, as `sweep_old_spills`) until what is left
    is at most `max_bytes`; files of `keep` (the running session's folder) are never removed. Returns how many
    files went. Never raises."""
    files: list[tuple[float, int, str]] = []
    try:
        sessions = [entry for entry in os.scandir(root) if entry.is_dir(follow_symlinks=False)]
    except OSError:
        return 0
    for session in sessions:
        if keep is not None and Path(session.path) == keep:
            continue
        try:
            entries = list(os.scandir(session.path))
        except OSError:
            continue
        for entry in entries:
            with contextlib.suppress(OSError):
                info = entry.stat(follow_symlinks=False)
                if stat.S_ISREG(info.st_mode):
                    files.append((info.st_mtime, info.st_size, entry.path))
    total = sum(size for _, size, _ in files)
    removed = 0
    for _, size, path in sorted(files):
        if total <= max_bytes:
            break
        with contextlib.suppress(OSError):
            os.unlink(path)
            total -= size
            removed += 1
    if removed:
        log.debug("removed %d spill file(s) to keep %s under %d bytes", removed, root, max_bytes)
    return removed


def preview(text: str, max_chars: int) -> str:
    """Head and tail of `text` within about `max_chars`, with a marker saying how much was cut."""
    if len(text) <= max_chars:
        return text
    head = text[: max_chars * 3 // 4]
    tail = text[-(max_chars // 4):]
    cut = len(text) - len(head) - len(tail)
    return f"{head}\n… [{cut} characters omitted] …\n{tail}"
