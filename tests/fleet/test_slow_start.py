"""Slow is not dead (issue 19): the startup timeout measures the server, not our queue.

A server still working when `MCP_TIMEOUT` runs out (using CPU, as sixty interpreters starting on two busy cores
do) gets more time; a silent, idle one still fails after one timeout. Real processes; no sleeps in the test.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from mini_claude.mcp.manager import McpManager, ServerStatus
from tests.helpers import server_configs, server_env

pytestmark = pytest.mark.timeout(60)

ROOT = Path(__file__).resolve().parents[2]
PROBE = ROOT / "tests" / "mcp" / "servers" / "probe_server.py"
# busy for 2.5 s before it becomes the probe server: no output, but CPU all along
BUSY_THEN_PROBE = ("import os, sys, time\nt = time.monotonic()\nwhile time.monotonic() - t < 2.5:\n    pass\n"
                   "os.execv(sys.executable, [sys.executable, sys.argv[1]])")


async def test_a_server_busy_past_the_timeout_is_given_time_and_an_idle_one_is_not(tmp_path: Path) -> None:
    servers = {"busy": {"command": sys.executable, "args": ["-c", BUSY_THEN_PROBE, str(PROBE)]},
               "idle": {"command": "sh", "args": ["-c", f'sleep 20; exec "{sys.executable}" "{PROBE}"']}}
    manager = McpManager(server_configs(tmp_path, servers), env={**server_env(tmp_path), "MCP_TIMEOUT": "1000"})
    began = time.monotonic()
    manager.start()
    try:
        await manager.wait_started()
        busy, idle = manager.states["busy"], manager.states["idle"]
        assert busy.status is ServerStatus.READY, busy.error  # 2.5 s of work with a 1 s timeout
        assert idle.status is ServerStatus.FAILED and (idle.error or "").startswith("did not start within 1s")
        assert time.monotonic() - began < 15  # the idle one did not get the busy one's extensions
    finally:
        await manager.aclose()
