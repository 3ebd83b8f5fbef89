#!/usr/bin/env bash
# Set up (if needed) and run the offline demo: the real SDK against the bundled mock model and demo MCP server.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bash "$ROOT/scripts/setup.sh"
exec "$ROOT/.venv/bin/mini-claude" demo "$@"
