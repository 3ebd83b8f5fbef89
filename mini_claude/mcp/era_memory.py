"""The era memory: which protocol era (modern `server/discover` or legacy `initialize`) and version each server
answered last time, so the next connection skips the probe. Split out of negotiation.py, which reads and writes it.
"""

from __future__ import annotations

import hashlib
import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from mini_claude import paths
from mini_claude.statefile import read_state, write_state

__all__ = ["ERAS_FILE_NAME", "MAX_ERAS_BYTES", "MAX_ERA_ENTRIES", "Era", "EraMemory", "EraRecord", "hashed_key"]

log = logging.getLogger(__name__)

ERAS_FILE_NAME = "mcp-eras.json"
MAX_ERA_ENTRIES = 256  # servers (configs) remembered; the oldest remembered go first
MAX_ERAS_BYTES = 1024 * 1024
Era = Literal["modern", "legacy"]
_ERAS = ("modern", "legacy")
_HASHED_KEY = re.compile(r"^sha256:[0-9a-f]{64}$")


def hashed_key(key: str) -> str:
    """The form a key is stored in: `sha256:` + the hex digest of its UTF-8 bytes (nothing of it readable)."""
    return "sha256:" + hashlib.sha256(key.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class EraRecord:
    """What worked last time: the era and the protocol version used in it."""

    era: Era
    version: str


class EraMemory:
    """Per-server era answers in a JSON file (default: `state_dir()/mcp-eras.json`).

    Keyed by what the caller chooses (the manager: the server name plus its command or URL, so a changed config is
    probed again); the file holds only each key's SHA-256, as a URL or command line may carry secrets (entries
    keyed otherwise, e.g. plaintext ones of older versions, are dropped on the next write). Bounded: at most
    `MAX_ERA_ENTRIES` entries, the ones remembered longest ago dropped first (a config that changes on every run
    adds one entry per run; forgetting one costs a probe, nothing else), and a file over `MAX_ERAS_BYTES` is not
    read. A missing file is an empty memory; a corrupt, oversized or newer one is set aside with a warning
    (`mini_claude.statefile`); a failed write is logged, never raised: the memory only saves a probe.

        memory = EraMemory(tmp_path / "eras.json")
        memory.remember("github", "legacy", "2025-11-25")
        memory.recall("github")  # EraRecord(era='legacy', version='2025-11-25')
    """

    def __init__(self, path: Path | None = None) -> None:
        self.path = path if path is not None else paths.state_dir() / ERAS_FILE_NAME
        # between hold() and flush(): the file as read once, and what was remembered since (written by flush())
        self._held: dict[str, object] | None = None
        self._pending: dict[str, dict[str, str]] = {}

    def hold(self) -> None:
        """Many servers start at once: read the file once now, keep what is remembered in memory, and write it
        all in one go at `flush()` (instead of rewriting the whole file, with an fsync, once per server)."""
        if self._held is None:
            self._held = self._load()

    def flush(self) -> None:
        """Write what was remembered since `hold()` (once, and only when it changes anything); stop holding."""
        held, pending = self._held, self._pending
        self._held, self._pending = None, {}
        if held is None or not pending:
            return
        data = self._load()
        if all(data.get(key) == value for key, value in pending.items()) and all(map(_HASHED_KEY.match, data)):
            return
        for key, value in pending.items():
            data.pop(key, None)  # re-inserted last: the newest entries
            data[key] = value
        self._save(data)

    def recall(self, key: str) -> EraRecord | None:
        stored = hashed_key(key)
        entry = self._pending.get(stored) or (self._held if self._held is not None else self._load()).get(stored)
        if not isinstance(entry, dict):
            return None
        era, version = entry.get("era"), entry.get("version")
        if era not in _ERAS or not isinstance(version, str) or not version:
            return None
        return EraRecord(era, version)

    def remember(self, key: str, era: Era, version: str) -> None:
        if self._held is not None:
            self._pending[hashed_key(key)] = {"era": era, "version": version}
            return
        data, stored = self._load(), hashed_key(key)
        if data.get(stored) == {"era": era, "version": version} and all(map(_HASHED_KEY.match, data)):
            return
        data.pop(stored, None)  # re-inserted last: the newest entry
        data[stored] = {"era": era, "version": version}
        self._save(data)

    def forget(self, key: str) -> None:
        self.flush()
        data = self._load()
        if data.pop(hashed_key(key), None) is not None:
            self._save(data)

    def _load(self) -> dict[str, object]:
        return read_state(self.path, what="MCP era memory", max_bytes=MAX_ERAS_BYTES, version=1) or {}

    def _save(self, data: dict[str, object]) -> None:
        kept = [(key, value) for key, value in data.items() if _HASHED_KEY.match(key)]
        try:  # atomic: a concurrent reader sees the old or the new file
            write_state(self.path, dict(kept[-MAX_ERA_ENTRIES:]), indent=2)
        except OSError as exc:
            log.warning("could not save the MCP era memory %s: %s", self.path, exc)


