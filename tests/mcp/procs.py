"""The faulty test server (tests/mcp/servers/faulty_server.py): its path, and StdioParams that run it.

Process assertions (`assert_pid_gone`, `assert_group_gone`, `read_pidfile`, ...) live in tests/helpers.py."""

from __future__ import annotations

import sys
from pathlib import Path

from mini_claude.mcp.transports.stdio import StdioParams

__all__ = ["FAULTY_SERVER", "faulty_params"]

SERVERS_DIR = Path(__file__).resolve().parent / "servers"
FAULTY_SERVER = SERVERS_DIR / "faulty_server.py"


def faulty_params(mode: str = "normal", *extra: str, env: dict[str, str] | None = None) -> StdioParams:
    """StdioParams that run the faulty server in `mode` with this interpreter."""
    return StdioParams(command=sys.executable, args=[str(FAULTY_SERVER), "--mode", mode, *extra], env=env)
