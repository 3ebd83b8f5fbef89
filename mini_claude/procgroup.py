"""Signalling a child's process group: the one helper the commands we start in their own group share (the shell
tool's commands, hooks). Nothing happens at import."""

from __future__ import annotations

import os

__all__ = ["signal_group"]


def signal_group(pgid: int, sig: int) -> bool:
    """Send `sig` to process group `pgid`; False when no process is left in it (or it is not ours to signal)."""
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        return False
    return True
