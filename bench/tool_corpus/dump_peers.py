"""Save the third-party peers' `tools/list` (../shared/peers/install-peers.sh) into servers/peer-*.json, the same
format as the servers collected from public repositories. Run after installing the peers:

    .venv/bin/python bench/tool_corpus/dump_peers.py [PEERS_DIR]     # default .cache/peers
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import sys
from pathlib import Path

from mini_claude.mcp.config import load_mcp_config
from mini_claude.mcp.manager import McpManager

HERE = Path(__file__).resolve().parent
PEERS = {  # corpus name -> (peers.env variable, package it comes from)
    "peer-everything": ("PEER_EVERYTHING", "npm @modelcontextprotocol/server-everything"),
    "peer-filesystem": ("PEER_FILESYSTEM", "npm @modelcontextprotocol/server-filesystem"),
    "peer-time": ("PEER_TIME", "PyPI mcp-server-time"),
    "peer-fastmcp-demo": ("PEER_FASTMCP_V1", "../shared/peers/demo_server.py on FastMCP (PyPI mcp 1.x)"),
}


def _peer_commands(peers_dir: Path) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for line in (peers_dir / "peers.env").read_text().splitlines():
        if line.startswith("PEER_") and "=" in line:
            name, value = line.split("=", 1)
            found[name] = shlex.split(shlex.split(value, comments=True)[0])
    return found


async def _lists_settled(manager: McpManager, timeout_s: float = 5.0, poll_s: float = 0.2) -> None:
    """Until every server's tool list has stopped changing for one poll (server-everything adds tools after
    `initialized`, announced with list_changed), at most `timeout_s`."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    last: dict[str, int] | None = None
    while loop.time() < deadline:
        await manager.settle_lists()
        counts = {name: len(state.tools) for name, state in manager.states.items()}
        if counts == last:
            return
        last = counts
        await asyncio.sleep(poll_s)


async def main(peers_dir: Path) -> int:
    commands = _peer_commands(peers_dir)
    servers = {name: {"command": commands[var][0], "args": commands[var][1:]} for name, (var, _) in PEERS.items()}
    loaded = load_mcp_config(cwd=HERE, home=HERE, env={}, strict=True,
                             extra=[json.dumps({"mcpServers": servers})])
    manager = McpManager(loaded.servers.values(), env=dict(os.environ))
    manager.start()
    try:
        await manager.wait_started()
        await _lists_settled(manager)
        for name, (_, package) in PEERS.items():
            state = manager.states[name]
            tools = [t.raw for t in state.tools]
            record = {"server": name, "source": {"peer": package, "how": "tools/list of the installed peer, "
                                                 "saved by bench/tool_corpus/dump_peers.py", "license": "MIT"},
                      "tools": [{k: t[k] for k in ("name", "description", "inputSchema") if k in t} for t in tools]}
            (HERE / "servers" / f"{name}.json").write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n")
            print(f"{name}: {len(tools)} tools")
    finally:
        await manager.aclose()
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(".cache/peers"))))
