"""Claude Code's permission modes (`default`, `acceptEdits`, `plan`, `bypassPermissions`) and their names as
settings and flags spell them. What each mode lets through is the gate's order (gate.py)."""

from __future__ import annotations

from enum import StrEnum

__all__ = ["PermissionMode"]


class PermissionMode(StrEnum):
    """Claude Code's permission modes."""

    DEFAULT = "default"
    ACCEPT_EDITS = "acceptEdits"
    PLAN = "plan"
    BYPASS = "bypassPermissions"

    @classmethod
    def parse(cls, name: str) -> PermissionMode:
        """Parse Claude Code's mode name (case-insensitive). Raises ValueError listing the valid names."""
        for mode in cls:
            if mode.value.lower() == name.strip().lower():
                return mode
        names = ", ".join(m.value for m in cls)
        raise ValueError(f"unknown permission mode {name!r} (expected one of: {names})")
