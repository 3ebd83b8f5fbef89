"""Where a shell command's writes (writes.py) land, worked out at gate time: relative paths under the gate's working
directory and home, a copy into an existing folder under its name, a copied or moved tree's every file, an archive's
every member (archive_names.py lists them), a linked file's other name, a backup's name (FILE + suffix). What
cannot be worked out is unknown, with why: a link member, `..` or an absolute name, an archive that cannot be
listed for sure, more than the bounds.
"""

from __future__ import annotations

import glob
import os
import time
from dataclasses import replace
from pathlib import Path

from mini_claude.paths import resolve_tool_path
from mini_claude.permissions.write_base import MAX_MEMBERS, MAX_SECONDS
from mini_claude.permissions.writes import Write

__all__ = ["MAX_MEMBERS", "MAX_SECONDS", "resolve"]

# Copied trees are read up to the archives' bounds (archive_names.py); beyond them the write is unknown (asks).
# Names whose presence inside a directory `rm -r` removes makes the removal a write of them too.
_WATCHED_CHILDREN = (".git", ".claude", ".mcp.json", "CLAUDE.md", "CLAUDE.local.md", ".vscode", ".husky",
                     ".envrc", ".env", "HEAD")


def resolve(write: Write, cwd: Path, home: Path) -> tuple[list[str], str]:
    """The absolute paths `write` makes bash write (symlinks kept), and why some cannot be known ("")."""
    if write.glob:
        return _expanded(write, cwd, home)
    found, why = _places(write, cwd, home)
    if write.backups:  # `cp -b -S .md a CLAUDE`: each file written may first be renamed to FILE + suffix
        found = list(dict.fromkeys([*found, *(p + suffix for p in found for suffix in write.backups)]))
    return found, why


def _places(write: Write, cwd: Path, home: Path) -> tuple[list[str], str]:
    def absolute(p: str) -> str:
        return resolve_tool_path(p, cwd, home)

    target = absolute(write.path)
    if write.linked:  # a file given another name; `cp -al DIR`: every file under it
        if write.tree and os.path.isdir(target) and not os.path.islink(target):
            walked, why = _walk(target)
            return [target, *(os.path.join(target, rel) for rel in walked)], why
        return [target], ""
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
    from mini_claude.permissions.archive_names import (
        member_names,  # tarfile, zipfile: only when an archive is read
    )

    names, why = member_names(archive, write.archive_kind)
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
