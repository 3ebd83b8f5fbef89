"""Children are watched without a thread each (issue 19): on Linux with pidfds, ten stdio servers add no
`waitpid-N` thread (asyncio's default ThreadedChildWatcher on Python 3.11 starts one per child), and an exit is
still seen at once, with its exit code."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest

from mini_claude.errors import ServerExitedError
from mini_claude.mcp.manager import McpManager, ServerStatus
from mini_claude.mcp.transports.stdio import StdioParams, StdioTransport
from mini_claude.mcp.transports.stdio_child import _pidfds_work
from tests.helpers import server_configs, server_env

pytestmark = [pytest.mark.timeout(60),
              pytest.mark.skipif(sys.platform != "linux" or not _pidfds_work(), reason="needs Linux pidfds")]

ROOT = Path(__file__).resolve().parents[2]
PROBE = ROOT / "tests" / "mcp" / "servers" / "probe_server.py"


def _waitpid_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if "waitpid-" in t.name]


async def test_ten_servers_add_no_watcher_thread(tmp_path: Path) -> None:
    before = _waitpid_threads()
    servers = {f"s{i}": {"command": sys.executable, "args": [str(PROBE)]} for i in range(10)}
    manager = McpManager(server_configs(tmp_path, servers), env=server_env(tmp_path))
    manager.start()
    try:
        await manager.wait_started()
        assert all(s.status is ServerStatus.READY for s in manager.states.values())
        assert _waitpid_threads() == before
    finally:
        await manager.aclose()


async def test_an_exit_is_seen_with_its_code() -> None:
    transport = StdioTransport(StdioParams(sys.executable, ["-c", "import sys; sys.exit(7)"]), server="seven")
    await transport.start()
    with pytest.raises(ServerExitedError) as ended:
        await transport.receive()
    assert ended.value.exit_code == 7 and transport.exit_code == 7
    await transport.close()
