"""A fleet's state is written once per batch, not once per server (issue 19): ten servers starting together
rewrite the era memory once (before: once per server, each a whole-file rewrite with an fsync), and every era
is remembered; a warm start writes nothing."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from mini_claude.mcp.manager import McpManager, ServerStatus
from mini_claude.mcp.negotiation import EraMemory
from mini_claude.mcp.pinning import server_key
from tests.helpers import server_configs, server_env

pytestmark = pytest.mark.timeout(60)

ROOT = Path(__file__).resolve().parents[2]
PROBE = ROOT / "tests" / "mcp" / "servers" / "probe_server.py"


class CountingMemory(EraMemory):
    saves = 0

    def _save(self, data: dict[str, object]) -> None:
        self.saves += 1
        super()._save(data)


async def _start(tmp_path: Path, memory: EraMemory) -> McpManager:
    servers = {f"s{i}": {"command": sys.executable, "args": [str(PROBE)]} for i in range(10)}
    manager = McpManager(server_configs(tmp_path, servers), env=server_env(tmp_path), era_memory=memory)
    manager.start()
    await manager.wait_started()
    assert all(s.status is ServerStatus.READY for s in manager.states.values())
    return manager


async def test_ten_servers_write_the_era_memory_once(tmp_path: Path) -> None:
    memory = CountingMemory(tmp_path / "eras.json")
    manager = await _start(tmp_path, memory)
    try:
        assert memory.saves == 1
        fresh = EraMemory(tmp_path / "eras.json")  # what the next run reads
        assert all(fresh.recall(server_key(s.config)) is not None for s in manager.states.values())
    finally:
        await manager.aclose()
    warm = CountingMemory(tmp_path / "eras.json")
    manager = await _start(tmp_path, warm)
    await manager.aclose()
    assert warm.saves == 0
