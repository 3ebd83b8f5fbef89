"""Where a shell command's writes (writes.py) land, worked out at gate time: relative paths under the gate's working
directory and home, a copy into an existing folder under its name, a copied or moved tree's every file, an archive's
every member (read with tarfile / zipfile, bounded in members, bytes and time). What cannot be worked out is
unknown, with why: a link member, `..` or an absolute name, an archive that cannot be read, more than the bounds.
"""

from __future__ import annotations

import bz2
import glob
import gzip
import lzma
import os
import tarfile
import time
import zipfile
from dataclasses import replace
from pathlib import Path
from typing import IO

from mini_claude.paths import resolve_tool_path
from mini_claude.permissions.writes import Write

__all__ = ["MAX_MEMBERS", "MAX_SECONDS", "resolve"]

# Archives and copied trees are read up to these bounds; beyond them the write is unknown (asks).
MAX_MEMBERS = 5000
MAX_SECONDS = 2.0
# Names whose presence inside a directory `rm -r` removes makes the removal a write of them too.
_WATCHED_CHILDREN = (".git", ".claude", ".mcp.json", "CLAUDE.md", "CLAUDE.local.md", ".vscode", ".husky",
                     ".envrc", ".env", "HEAD")


def resolve(write: Write, cwd: Path, home: Path) -> tuple[list[str], str]:
    """The absolute paths `write` makes bash write (symlinks kept), and why some cannot be known ("")."""
    def absolute(p: str) -> str:
        return resolve_tool_path(p, cwd, home)

    if write.glob:
        return _expanded(write, cwd, home)

    target = absolute(write.path)
    if write.archive:
        return _members(write, target, absolute(write.archive))
    if write.tree and not write.sources:  # rm -r DIR: what it holds that needs consent goes too
        found = [target]
        if os.path.isdir(target) and not os.path.islink(target):
            found += [os.path.join(target, n) for n in _WATCHED_CHILDREN if os.path.lexists(os.path.join(target, n))]
        return found, ""
    if not write.sources:
        return [target], ""
    into_dir = write.target_dir or os.path.isdir(target)
    # a target that does not exist yet may still become a folder earlier in the same command line
    landings = [(s, os.path.join(target, os.path.basename(s.rstrip("/")) or ".")) for s in write.sources] \
        if into_dir or not os.path.exists(target) else []
    if not into_dir:
        landings += [(s, target) for s in write.sources[:1]]
    found = [os.path.normpath(land) for _, land in landings]
    if write.tree:
        for source, land in landings:
            src = absolute(source)
            if os.path.isdir(src) and not os.path.islink(src):
                walked, why = _walk(src)
                if why:
                    return found, why
                found += [os.path.normpath(os.path.join(land, rel)) for rel in walked]
    return list(dict.fromkeys(found)), ""


def _expanded(write: Write, cwd: Path, home: Path) -> tuple[list[str], str]:
    """`resolve` for a write whose words held glob patterns: each pattern as bash expands it now (no match: the
    pattern itself), hidden names left out as bash does by default."""
    def names(pattern: str) -> list[str]:
        if not glob.has_magic(pattern):
            return [pattern]
        found = sorted(glob.glob(pattern, root_dir=None if os.path.isabs(pattern) else cwd))
        return found[:MAX_MEMBERS + 1] or [pattern]

    sources = [name for source in write.sources for name in names(source)]
    targets = [(p, a) for p in names(write.path) for a in (names(write.archive) if write.archive else [""])]
    if len(sources) > MAX_MEMBERS or len(targets) > MAX_MEMBERS:
        return [], f"a glob pattern matches more files than the gate lists ({MAX_MEMBERS})"
    paths: list[str] = []
    for path, archive in targets:
        found, why = resolve(replace(write, path=path, archive=archive, sources=tuple(sources), glob=False), cwd, home)
        if why:
            return paths, why
        paths += found
    return list(dict.fromkeys(paths)), ""


def _walk(root: str) -> tuple[list[str], str]:
    """Every path under `root` relative to it (symlinks not followed), within the bounds."""
    found: list[str] = []
    deadline = time.monotonic() + MAX_SECONDS
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            found.append(os.path.relpath(os.path.join(folder, name), root))
        if len(found) > MAX_MEMBERS or time.monotonic() > deadline:
            return found, f"{root} holds more than the gate lists ({MAX_MEMBERS} files)"
    return found, ""


def _members(write: Write, where: str, archive: str) -> tuple[list[str], str]:
    """Where each member of `archive` lands under `where`; unknown for a link member, `..`, an absolute name,
    an archive that cannot be read, or one beyond the bounds."""
    names, why = (_zip_names if write.archive_kind == "zip" else _tar_names)(archive)
    if why:
        return [], why
    found = [where]
    for name in names:
        parts = [p for p in name.split("/") if p not in ("", ".")]
        if name.startswith("/") or ".." in parts:
            return [], f"{archive} holds a member outside the folder it is extracted to ({name})"
        parts = parts[write.strip:]
        if write.flat:
            parts = parts[-1:]
        if parts:
            found.append(os.path.join(where, *parts))
    return found, ""


class _Bounded:
    """A read-only stream that stops reading past the time or byte budget (a compressed bomb is cut short)."""

    def __init__(self, raw: IO[bytes], deadline: float) -> None:
        self.raw, self.deadline, self.read_bytes = raw, deadline, 0

    def read(self, size: int = -1) -> bytes:
        if time.monotonic() > self.deadline or self.read_bytes > (1 << 32):
            raise TimeoutError("the archive takes too long to list")
        data = self.raw.read(size if size >= 0 else 1 << 20)
        self.read_bytes += len(data)
        return data

    def seek(self, offset: int, whence: int = 0) -> int:
        return self.raw.seek(offset, whence)

    def tell(self) -> int:
        return self.raw.tell()


def _tar_names(archive: str) -> tuple[list[str], str]:
    try:
        with open(archive, "rb") as raw:
            magic = raw.read(6)
            raw.seek(0)
            opener = {b"\x1f\x8b": gzip.GzipFile, b"BZ": bz2.BZ2File}.get(magic[:2])
            if magic == b"\xfd7zXZ\x00":
                opener = lzma.LZMAFile
            deadline = time.monotonic() + MAX_SECONDS
            names: list[str] = []
            # the headers are read with (forward) seeks; a compressed archive's raw bytes pass through a reader that
            # stops past the time budget, so a member that inflates without end is cut short too
            source = raw if opener is None else opener(fileobj=_Bounded(raw, deadline))
            with tarfile.open(fileobj=source, mode="r:") as tar:
                for member in tar:
                    if time.monotonic() > deadline:
                        return [], f"{archive} takes too long to list"
                    if member.issym() or member.islnk() or member.isdev():
                        return [], f"{archive} holds a link or a device ({member.name}), which may point anywhere"
                    names.append(member.name)
                    if len(names) > MAX_MEMBERS:
                        return [], f"{archive} holds more members than the gate lists ({MAX_MEMBERS})"
            return names, ""
    except (OSError, tarfile.TarError, EOFError, TimeoutError, lzma.LZMAError, ValueError) as exc:
        if zipfile.is_zipfile(archive):  # bsdtar extracts zip archives too
            return _zip_names(archive)
        return [], f"the gate cannot list the members of {archive} ({type(exc).__name__})"


def _zip_names(archive: str) -> tuple[list[str], str]:
    path = archive if os.path.exists(archive) or not os.path.exists(archive + ".zip") else archive + ".zip"
    try:
        with zipfile.ZipFile(path) as zf:
            infos = zf.infolist()
    except (OSError, zipfile.BadZipFile, ValueError) as exc:
        return [], f"the gate cannot list the members of {archive} ({type(exc).__name__})"
    if len(infos) > MAX_MEMBERS:
        return [], f"{archive} holds more members than the gate lists ({MAX_MEMBERS})"
    for info in infos:
        if (info.external_attr >> 16) & 0o170000 == 0o120000:
            return [], f"{archive} holds a symbolic link ({info.filename}), which may point anywhere"
    return [info.filename for info in infos], ""
