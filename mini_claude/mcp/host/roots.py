"""Roots: the folders the user works in, offered to servers as `file://` URIs (`roots/list`).

The working directory first, then `--add-dir` folders and the settings' `permissions.additionalDirectories`, each
resolved and listed once. Adding one later (`/add-dir`) tells every connected server
(`notifications/roots/list_changed`); servers then ask `roots/list` again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

__all__ = ["Roots"]


class Roots:
    def __init__(self, folders: Iterable[Path]) -> None:
        self._folders: list[Path] = []
        for folder in folders:
            self.add(folder)

    @property
    def folders(self) -> list[Path]:
        return list(self._folders)

    def add(self, folder: Path) -> bool:
        """Add a folder; False when it was already a root."""
        resolved = folder.expanduser().resolve()
        if resolved in self._folders:
            return False
        self._folders.append(resolved)
        return True

    def listing(self) -> dict[str, Any]:
        """The `roots/list` result."""
        return {"roots": [{"uri": folder.as_uri(), "name": folder.name or str(folder)} for folder in self._folders]}

    def handler(self) -> Callable[[Any], Any]:
        async def list_roots(_params: Any) -> dict[str, Any]:
            return self.listing()
        return list_roots
