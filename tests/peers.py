"""The third-party MCP peers (installed by scripts/test.sh via ../shared/peers): `peer_command(NAME)`.

The launch commands come from `$MINI_CLAUDE_PEERS_DIR/peers.env` (default `.cache/peers/peers.env`), the file the
installer writes. A missing peer skips the test on a developer machine and fails it under CI
(`MINI_CLAUDE_REQUIRE_PEERS=1`, see tests/helpers.py `require`)."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from tests.helpers import ROOT, require

__all__ = ["PEERS", "peer_command"]

INSTALL_HINT = "run `bash ../shared/peers/install-peers.sh .cache/peers` (scripts/test.sh does it)"


def _env_file() -> Path:
    return Path(os.environ.get("MINI_CLAUDE_PEERS_DIR") or ROOT / ".cache" / "peers") / "peers.env"


def _peers_env() -> dict[str, str]:
    env_file = _env_file()
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
    """The argv of a peer (e.g. 'PEER_EVERYTHING'), or `require()` it: skip saying why, fail under CI."""
    cmd = PEERS.get(name)
    if not cmd:
        require(f"peer {name}", f"not in {_env_file()}; {INSTALL_HINT}")
    argv = shlex.split(cmd)
    program = next((arg for arg in argv if arg != "env" and "=" not in arg), argv[0])  # past `env PORT=3001`
    if not Path(program).exists():
        require(f"peer {name}", f"{program} does not exist; {INSTALL_HINT}")
    return argv
