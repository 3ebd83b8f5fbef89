#!/usr/bin/env bash
# Set up (if needed), install the third-party MCP test peers, lint, and run the whole test suite.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
bash scripts/setup.sh
PEERS_DIR=${MINI_CLAUDE_PEERS_DIR:-$ROOT/.cache/peers}
if [ -f "$ROOT/../shared/peers/install-peers.sh" ]; then
  bash "$ROOT/../shared/peers/install-peers.sh" "$PEERS_DIR" >/dev/null \
    || echo "[test] some peers failed to install; tests that need them say so and skip" >&2
fi
export MINI_CLAUDE_PEERS_DIR=$PEERS_DIR
.venv/bin/ruff check mini_claude tests bench
exec .venv/bin/python -m pytest "$@"
