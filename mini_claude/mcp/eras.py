"""`EraMemory`: which protocol era (modern 2026-07-28 stateless, or legacy `initialize`) worked for each server.

The spec lets a client cache the era per server and re-probe when the cached answer later fails; we keep it in
one small JSON file under the state dir (`mcp-eras.json`), keyed by whatever the caller chooses (the manager uses
the server name plus its command or URL, so a changed config is probed again). The file holds only the SHA-256 of
each key: a URL may carry a token in its query or userinfo, and a command line secrets in its arguments, none of
which belongs on disk (entries with another kind of key, e.g. plaintext ones of older versions, are dropped on
the next write). A missing or corrupt file is an empty memory, and a failed write is logged, never raised: the
memory only saves a probe.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from mini_claude import paths

__all__ = ["ERAS_FILE_NAME", "Era", "EraMemory", "EraRecord", "hashed_key"]

log = logging.getLogger(__name__)

ERAS_FILE_NAME = "mcp-eras.json"
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

        memory = EraMemory(tmp_path / "eras.json")
        memory.remember("github", "legacy", "2025-11-25")
        memory.recall("github")  # EraRecord(era='legacy', version='2025-11-25')
    """

    def __init__(self, path: Path | None = None) -> None:
        self.path = path if path is not None else paths.state_dir() / ERAS_FILE_NAME

    def recall(self, key: str) -> EraRecord | None:
        entry = self._load().get(hashed_key(key))
        if not isinstance(entry, dict):
            return None
        era, version = entry.get("era"), entry.get("version")
        if era not in _ERAS or not isinstance(version, str) or not version:
            return None
        return EraRecord(era, version)  # type: ignore[arg-type]

    def remember(self, key: str, era: Era, version: str) -> None:
        data, stored = self._load(), hashed_key(key)
        if data.get(stored) == {"era": era, "version": version} and all(map(_HASHED_KEY.match, data)):
            return
        data[stored] = {"era": era, "version": version}
        self._save(data)

    def forget(self, key: str) -> None:
        data = self._load()
        if data.pop(hashed_key(key), None) is not None:
            self._save(data)

    def _load(self) -> dict[str, object]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            log.debug("ignoring unreadable era memory %s: %s", self.path, exc)
            return {}
        return data if isinstance(data, dict) else {}

    def _save(self, data: dict[str, object]) -> None:
        data = {key: value for key, value in data.items() if _HASHED_KEY.match(key)}
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".eras-", dir=self.path.parent)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    json.dump(data, handle, indent=1, sort_keys=True)
                os.replace(tmp, self.path)  # atomic: a concurrent reader sees the old or the new file
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
        except OSError as exc:
            log.warning("could not save the MCP era memory %s: %s", self.path, exc)

