"""Helpers for the tool tests that check processes are gone (imported as `tool_procs`: test dirs have no
__init__.py, so the module name must be unique across tests/)."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

__all__ = ["pid_gone", "wait_gone"]


def pid_gone(pid: int) -> bool:
    """True once `pid` has exited (a zombie waiting for init to reap it counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat[stat.rfind(")") + 2] in "ZX"


async def wait_gone(pid: int, within_s: float = 3.0) -> bool:
    """Whether `pid` is gone within `within_s` (signals are delivered asynchronously)."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if pid_gone(pid):
            return True
        await asyncio.sleep(0.02)
    return pid_gone(pid)
