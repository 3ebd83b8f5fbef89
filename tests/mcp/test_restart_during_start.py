"""A server restarted while the fleet is still starting (`/mcp reconnect` at once, `mcp enable`) counts for "the
fleet is up": the era memory held during a start is written then, not only when the session closes (found in review:
the restart's start task never reported back, so nothing written before `aclose`)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from mini_claude.mcp.manager import McpManager, ServerStatus
from mini_claude.mcp.negotiation import EraMemory
from tests.helpers import eventually, server_configs, server_env
from tests.mcp.procs import FAULTY_SERVER

pytestmark = pytest.mark.timeout(60)


async def test_the_era_memory_is_written_once_the_restarted_fleet_is_up(tmp_path: Path) -> None:
    marker = tmp_path / "go"
    waiting = {"command": "sh", "args": ["-c", f'while [ ! -e "{marker}" ]; do sleep 0.02; done; '
                                                 f'exec "{sys.executable}" "{FAULTY_SERVER}"']}
    quick = {"command": sys.executable, "args": [str(FAULTY_SERVER)]}
    eras = tmp_path / "eras.json"
    manager = McpManager(server_configs(tmp_path, {"waiting": waiting, "quick": quick}), env=server_env(tmp_path),
                         era_memory=EraMemory(eras), startup_timeout=30)
    try:
        manager.start()
        restarting = asyncio.ensure_future(manager.restart("waiting"))  # while it is still starting
        await eventually(lambda: manager.states["quick"].status is ServerStatus.READY, "the quick server")
        assert not eras.exists()  # held while the fleet starts
        marker.touch()
        await asyncio.wait_for(restarting, 30)
        await manager.wait_started(timeout=30)
        assert [s.status for s in manager.states.values()] == [ServerStatus.READY, ServerStatus.READY]
        await eventually(eras.exists, "the era memory written once the fleet is up, before the session closes")
    finally:
        await manager.aclose()
