"""Servers started together spawn one per event-loop turn (transports/stdio_child.spawn_turn), so the loop reads the
first servers' answers between later spawns instead of only after the last one (bench/fleet.py: the fleet is ready
soon after its last spawn). Checked by the order of events, not by timing: a loop-turn counter is read at every
spawn."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mini_claude.mcp.manager import McpManager, ServerStatus
from tests.helpers import server_configs
from tests.mcp.procs import FAULTY_SERVER

SERVERS = 8


async def test_each_spawn_has_its_own_loop_turn(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    loop = asyncio.get_running_loop()
    turn = 0
    stop = False

    def tick() -> None:  # counts loop turns: one call_soon callback runs once per turn
        nonlocal turn
        turn += 1
        if not stop:
            loop.call_soon(tick)

    spawned_in: list[int] = []
    real_init = subprocess.Popen.__init__

    def recording_init(self: subprocess.Popen[Any], *args: Any, **kwargs: Any) -> None:
        spawned_in.append(turn)
        real_init(self, *args, **kwargs)

    monkeypatch.setattr(subprocess.Popen, "__init__", recording_init)
    configs = server_configs(tmp_path, {f"s{i}": {"command": sys.executable, "args": [str(FAULTY_SERVER)]}
                                        for i in range(SERVERS)})
    manager = McpManager(configs, env={"PATH": "/usr/bin:/bin"}, startup_timeout=30)
    tick()
    try:
        manager.start()
        await manager.wait_started(timeout=60)
        assert [s.status for s in manager.states.values()] == [ServerStatus.READY] * SERVERS
        assert len(spawned_in) == SERVERS
        assert len(set(spawned_in)) == SERVERS, f"spawns shared a loop turn: {spawned_in}"
    finally:
        stop = True
        await manager.aclose()


def test_no_event_loop_is_kept_by_its_spawn_lock(tmp_path: Path) -> None:
    # found in review: the lock refers to its loop once a spawn had to wait, so a table keyed weakly by the loop
    # kept every loop that ever spawned two servers at once
    from mini_claude.mcp.transports import stdio_child

    async def two_at_once() -> None:
        configs = server_configs(tmp_path, {f"s{i}": {"command": sys.executable, "args": [str(FAULTY_SERVER)]}
                                            for i in range(2)})
        manager = McpManager(configs, env={"PATH": "/usr/bin:/bin"}, startup_timeout=30)
        try:
            manager.start()
            await manager.wait_started(timeout=60)
        finally:
            await manager.aclose()

    for _ in range(3):
        asyncio.run(two_at_once())
    assert stdio_child._spawn_turns == {}
