"""The third-party MCP peers (installed by scripts/test.sh via ../shared/peers): `peer_command(NAME)`."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _peers_env() -> dict[str, str]:
    peers_dir = Path(os.environ.get("MINI_CLAUDE_PEERS_DIR") or ROOT / ".cache" / "peers")
    env_file = peers_dir / "peers.env"
    if not env_file.exists():
        return {}
    values: dict[str, str] = {}
    for line in env_file.read_text().splitlines():
        line = line.split("#", 1)[0].strip() if not line.lstrip().startswith("PEER_") else line.strip()
        if not line.startswith("PEER_") or "=" not in line:
            continue
        key, _, rest = line.partition("=")
        # value is a double-quoted string, possibly followed by a comment
        parts = shlex.split(rest, comments=True)
        if parts:
            values[key] = parts[0]
    return values


PEERS = _peers_env()


def peer_command(name: str) -> list[str]:
    """The argv of a peer (e.g. 'PEER_EVERYTHING'), or skip the test saying why."""
    cmd = PEERS.get(name)
    if not cmd:
        pytest.skip(f"{name} is not installed: run `bash ../shared/peers/install-peers.sh .cache/peers` "
                    "(scripts/test.sh does it)")
    argv = shlex.split(cmd)
    if not Path(argv[0]).exists() and argv[0] != "env":
        pytest.skip(f"{name}: {argv[0]} is missing; reinstall the peers")
    return argv
