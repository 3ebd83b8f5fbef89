#!/usr/bin/env bash
# Create .venv and install mini-claude with its dev extras. Idempotent: a second run with an unchanged
# pyproject.toml makes no network call.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
PY=${PYTHON:-python3}
"$PY" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' \
  || { echo "mini-claude needs Python >= 3.11 (found $("$PY" --version 2>&1)); set PYTHON=/path/to/python3.11" >&2; exit 1; }
[ -x .venv/bin/python ] || "$PY" -m venv .venv
STAMP=.venv/.mini-claude-installed
WANT=$(sha256sum pyproject.toml | cut -d' ' -f1)
if [ "$(cat "$STAMP" 2>/dev/null)" != "$WANT" ]; then
  echo "[setup] installing mini-claude into .venv" >&2
  .venv/bin/python -m pip install -q --disable-pip-version-check -e ".[dev]"
  echo "$WANT" > "$STAMP"
fi
