"""The MCP Apps example servers from npm (scripts/install-apps-peers.sh installs them pinned into
`.cache/apps-peers`; scripts/test.sh runs it): `apps_peer_entry(NAME)` is a stdio server entry for one of them.

A missing install skips the test on a developer machine and fails it under CI (`MINI_CLAUDE_REQUIRE_PEERS=1`, see
tests/helpers.py `require`)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from tests.helpers import ROOT, require

__all__ = ["APPS_PEERS", "apps_peer_entry", "apps_peers_dir"]

# name -> the program npm puts in node_modules/.bin
APPS_PEERS = {
    "basic-vanillajs": "mcp-server-basic-vanillajs",
    "budget-allocator": "mcp-budget-allocator-server",
}
INSTALL_HINT = "run `bash scripts/install-apps-peers.sh` (scripts/test.sh does it)"


def apps_peers_dir() -> Path:
    return Path(os.environ.get("MINI_CLAUDE_APPS_PEERS_DIR") or ROOT / ".cache" / "apps-peers")


def apps_peer_entry(name: str) -> dict[str, Any]:
    """`{"command": BIN, "args": ["--stdio"]}` for example server `name` (a key of APPS_PEERS), or `require()` it."""
    program = apps_peers_dir() / "node_modules" / ".bin" / APPS_PEERS[name]
    if not program.exists():
        require(f"MCP Apps example server {name}", f"{program} does not exist; {INSTALL_HINT}")
    return {"command": str(program), "args": ["--stdio"]}
