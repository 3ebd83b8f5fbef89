"""Where tool pins live on disk (pinning.py decides what they mean): one small file per server, so a server that
becomes ready reads and writes only its own entry, and nothing at start-up grows with how often mini-claude ran.

    <state>/mcp-pins/                       0700
        .lock                               one fcntl lock around each read-modify-write (milliseconds)
        user/<name>-<h>.json                a user-scope server (`~/.claude.json`, settings)
        cli/<name>-<h>.json                 a `--mcp-config` server
        project-<h>/folder.json             {"folder": "/abs/project"}: the project the group belongs to
        project-<h>/<name>-<h>.json         a project-scope server of that folder (local-<h>/ likewise)
        legacy/<sha256>.json                entries of the old single-file store, by config fingerprint

A server is named by its scope and name (and, for project and local scope, the project folder); `<name>` is its
name with anything but `[A-Za-z0-9_.-]` replaced (cut to 40 characters) and `<h>` a short SHA-256 of the raw name,
so two names never share a file. Entry files are JSON, 0600, replaced atomically (`mini_claude.statefile`).

Bounds and clean-up (`prune`, run by the daily state sweep): an entry not used by any session for
`MAX_UNSEEN_S` (30 days: its file's mtime, refreshed at most daily) is removed; so is a project's group once its
folder no longer exists, and a legacy entry not adopted within 30 days. An entry is capped at
`MAX_ENTRY_BYTES`; a bigger or corrupt one is set aside (`<file>.bad`) and the server pinned afresh.

The old store (`mcp-tool-pins.json`, one file of every server keyed by config fingerprint, rewritten whole by
every server that became ready) is migrated once: split into `legacy/`, then renamed `mcp-tool-pins.json.migrated`
(swept after 30 days). A server whose current config matches a legacy entry adopts its pins (a change withheld
before the upgrade stays withheld); one over `MAX_LEGACY_BYTES` or unreadable is set aside with a warning.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mini_claude.statefile import exclusive, read_state, write_state

__all__ = [
    "ENTRY_VERSION",
    "LEGACY_FILE_NAME",
    "MAX_ENTRY_BYTES",
    "MAX_UNSEEN_S",
    "PINS_DIR_NAME",
    "PinFiles",
    "PinKey",
]

log = logging.getLogger(__name__)

PINS_DIR_NAME = "mcp-pins"
LEGACY_FILE_NAME = "mcp-tool-pins.json"
ENTRY_VERSION = 2  # the old single-file store was version 1
MAX_ENTRY_BYTES = 32 * 1024 * 1024  # one server's pins (definitions over 200k chars are kept as digests only)
MAX_LEGACY_BYTES = 256 * 1024 * 1024  # the old store, read once to migrate it
MAX_UNSEEN_S = 30 * 24 * 3600
TOUCH_AFTER_S = 24 * 3600  # an entry's mtime ("last seen") is refreshed at most this often
_SAFE = re.compile(r"[^A-Za-z0-9_.-]")
_HEX = re.compile(r"^[0-9a-f]{64}$")
_FOLDER_FILE = "folder.json"
_LEGACY_DIR = "legacy"
_GROUPED_SCOPES = ("project", "local")  # names that belong to a project folder


@dataclass(frozen=True)
class PinKey:
    """What names a server to the user — its scope and name, and for a project or local server the project
    folder — and the fingerprint of its config (`sha256:…` of its name and what it reaches), stored beside."""

    scope: str
    name: str
    fingerprint: str
    folder: str = ""


def _digest(text: str, length: int) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:length]


class PinFiles:
    """The pins folder (see the module docstring). Every method that writes holds the folder's lock."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.legacy_file = folder.parent / LEGACY_FILE_NAME
        self._migrated = False

    def group(self, key: PinKey) -> Path:
        if key.scope in _GROUPED_SCOPES:
            return self.folder / f"{key.scope}-{_digest(key.folder, 16)}"
        return self.folder / (_SAFE.sub("_", key.scope)[:20] or "_")

    def path(self, key: PinKey) -> Path:
        safe = _SAFE.sub("_", key.name)[:40].lstrip(".") or "_"
        return self.group(key) / f"{safe}-{_digest(key.name, 10)}.json"

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        with exclusive(self.folder / ".lock") as held:
            if not held:
                log.warning("cannot lock %s; MCP tool pins are not shared safely", self.folder)
            yield

    # ---- one entry -------------------------------------------------------------------------------------------------

    def load(self, key: PinKey) -> dict[str, Any] | None:
        """The server's entry (None: none, or unusable — set aside with a warning). Call `migrate_legacy` first,
        outside the lock."""
        entry = read_state(self.path(key), what="MCP tool pins", max_bytes=MAX_ENTRY_BYTES, version=ENTRY_VERSION)
        return entry if entry is not None and isinstance(entry.get("tools"), dict) else None

    def legacy(self, fingerprint: str) -> dict[str, Any] | None:
        """The old store's entry for a config fingerprint, if the migration left one."""
        hexdigest = fingerprint.removeprefix("sha256:")
        if not _HEX.match(hexdigest):
            return None
        entry = read_state(self.folder / _LEGACY_DIR / f"{hexdigest}.json", what="MCP tool pins (migrated)",
                           max_bytes=MAX_ENTRY_BYTES, version=1)
        return entry if entry is not None and isinstance(entry.get("tools"), dict) else None

    def save(self, key: PinKey, entry: dict[str, Any]) -> None:
        """Replace the server's entry (and drop a legacy entry it adopted). Logged, never raised."""
        try:
            group = self.group(key)
            if key.scope in _GROUPED_SCOPES and not (group / _FOLDER_FILE).exists():
                write_state(group / _FOLDER_FILE, {"folder": key.folder})
            write_state(self.path(key), {"version": ENTRY_VERSION, "scope": key.scope, "name": key.name,
                                         "fingerprint": key.fingerprint, **entry})
        except OSError as exc:
            log.warning("could not save the MCP tool pins of %r in %s: %s", key.name, self.folder, exc)
            return
        hexdigest = key.fingerprint.removeprefix("sha256:")
        if _HEX.match(hexdigest):
            with contextlib.suppress(OSError):
                os.unlink(self.folder / _LEGACY_DIR / f"{hexdigest}.json")

    def touch(self, key: PinKey, now: float | None = None) -> None:
        """Mark the entry as seen now (its mtime), unless that was done within the last day."""
        path = self.path(key)
        now = time.time() if now is None else now
        with contextlib.suppress(OSError):
            if now - path.stat().st_mtime > TOUCH_AFTER_S:
                os.utime(path, (now, now))

    # ---- the old store ---------------------------------------------------------------------------------------------

    def migrate_legacy(self) -> None:
        """Split the old single-file store into `legacy/` once (a stat per process when there is none). Takes the
        lock itself: never call it while holding it."""
        if self._migrated:
            return
        self._migrated = True
        if not os.path.lexists(self.legacy_file):
            return
        with self.locked():
            if not os.path.lexists(self.legacy_file):  # another process migrated it meanwhile
                return
            data = read_state(self.legacy_file, what="MCP tool pins (old single-file store)",
                              max_bytes=MAX_LEGACY_BYTES, version=1)
            servers = data.get("servers") if data is not None else None
            moved = 0
            for stored, entry in (servers.items() if isinstance(servers, dict) else ()):
                hexdigest = stored.removeprefix("sha256:") if isinstance(stored, str) else ""
                if not _HEX.match(hexdigest) or not isinstance(entry, dict) or not isinstance(entry.get("tools"), dict):
                    continue
                try:
                    write_state(self.folder / _LEGACY_DIR / f"{hexdigest}.json",
                                {"version": 1, "tools": entry["tools"]})
                except OSError as exc:
                    log.warning("cannot migrate the MCP tool pins %s (%s); it is left as it is",
                                self.legacy_file, exc.strerror or exc)
                    return
                moved += 1
            migrated = self.legacy_file.with_name(self.legacy_file.name + ".migrated")
            with contextlib.suppress(OSError):
                os.replace(self.legacy_file, migrated)
                os.utime(migrated)  # the sweep removes it 30 days from now
            if moved:
                log.info("migrated the pins of %d MCP server configs from %s to %s", moved, self.legacy_file,
                         self.folder)

    # ---- clean-up --------------------------------------------------------------------------------------------------

    def prune(self, *, now: float | None = None, max_unseen_s: float = MAX_UNSEEN_S) -> int:
        """Remove entries unseen for `max_unseen_s`, the groups of project folders that no longer exist, and
        legacy entries older than that; the number of entries removed. Never raises."""
        cutoff = (time.time() if now is None else now) - max_unseen_s
        removed = 0
        with self.locked():
            try:
                groups = [entry for entry in os.scandir(self.folder) if entry.is_dir(follow_symlinks=False)]
            except OSError:
                return 0
            for group in groups:
                if _is_grouped(group.name) and not _folder_exists(Path(group.path)):
                    removed += sum(1 for name in os.listdir(group.path) if name != _FOLDER_FILE)
                    shutil.rmtree(group.path, ignore_errors=True)
                    continue
                removed += _remove_older(Path(group.path), cutoff)
        if removed:
            log.info("pruned %d MCP tool pin entries unused for %g days", removed, max_unseen_s / 86400)
        return removed


def _is_grouped(name: str) -> bool:
    return any(name.startswith(f"{scope}-") for scope in _GROUPED_SCOPES)


def _folder_exists(group: Path) -> bool:
    """Whether the project folder a group belongs to still exists (a group without a readable marker is kept:
    its entries go by age)."""
    marker = read_state(group / _FOLDER_FILE, what="MCP tool pins folder marker", max_bytes=64 * 1024)
    folder = marker.get("folder") if marker is not None else None
    return not isinstance(folder, str) or os.path.isdir(folder)


def _remove_older(group: Path, cutoff: float) -> int:
    removed = 0
    try:
        entries = list(os.scandir(group))
    except OSError:
        return 0
    for entry in entries:
        if entry.name == _FOLDER_FILE or not entry.name.endswith((".json", ".bad", ".tmp")):
            continue
        with contextlib.suppress(OSError):
            if entry.stat(follow_symlinks=False).st_mtime < cutoff:
                os.unlink(entry.path)
                removed += entry.name.endswith(".json")
    with contextlib.suppress(OSError):
        left = [name for name in os.listdir(group) if name != _FOLDER_FILE]
        if not left:
            shutil.rmtree(group, ignore_errors=True)
    return removed
