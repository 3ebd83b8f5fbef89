#!/usr/bin/env bash
# Install uv and pipx (PyPI) beside the product, for the test that installs mini-claude as a user would
# (tests/e2e/test_tool_install.py: `uv tool install <clone>`, `pipx install <clone>`) — never into .venv, so the
# product's own dependencies stay what pyproject says.
#
#   bash scripts/install-tools.sh [DEST]        (DEST defaults to .cache/tools, git-ignored)
#
# What lands in DEST:
#   venv/       a virtualenv holding uv and pipx: venv/bin/uv, venv/bin/pipx
#   uv-cache/   uv's download cache, which the test reuses so a second install needs no network
#   VERSION     "uv UV_VERSION pipx PIPX_VERSION", written last: its presence is what makes a second run a no-op.
#
# Every download is bounded by a timeout; on failure the script says what failed and exits non-zero, leaving no
# VERSION behind (the next run starts again).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
UV_VERSION=0.13.9
PIPX_VERSION=1.18.4
WANT="uv $UV_VERSION pipx $PIPX_VERSION"
DEST=${1:-${MINI_CLAUDE_TOOLS_DIR:-$ROOT/.cache/tools}}
PY=${PYTHON:-$ROOT/.venv/bin/python}
TIMEOUT=${MINI_CLAUDE_TOOLS_TIMEOUT:-300}

say() { echo "[tools] $*" >&2; }
fail() { say "FAILED: $*"; exit 1; }

# installed and still runnable (a virtualenv's scripts name its python by path: a moved checkout needs a new one)
if [ "$(cat "$DEST/VERSION" 2>/dev/null)" = "$WANT" ] && "$DEST/venv/bin/uv" --version >/dev/null 2>&1 \
   && "$DEST/venv/bin/pipx" --version >/dev/null 2>&1; then
  exit 0
fi
[ -x "$PY" ] || fail "no Python at $PY (run scripts/setup.sh first, or set PYTHON)"
began=$(date +%s)
rm -rf "$DEST/venv" "$DEST/VERSION"
mkdir -p "$DEST/uv-cache"
"$PY" -m venv "$DEST/venv" || fail "could not make a virtualenv at $DEST/venv"
say "installing uv $UV_VERSION and pipx $PIPX_VERSION into $DEST/venv"
timeout "$TIMEOUT" "$DEST/venv/bin/python" -m pip --disable-pip-version-check --no-input --timeout 60 install -q \
    "uv==$UV_VERSION" "pipx==$PIPX_VERSION" \
  || fail "pip could not install uv $UV_VERSION and pipx $PIPX_VERSION (network?)"
have=$("$DEST/venv/bin/uv" --version) || fail "the installed uv does not run"
case "$have" in "uv $UV_VERSION"*) ;; *) fail "uv says '$have', not $UV_VERSION" ;; esac
have=$("$DEST/venv/bin/pipx" --version) || fail "the installed pipx does not run"
[ "$have" = "$PIPX_VERSION" ] || fail "pipx says '$have', not $PIPX_VERSION"
echo "$WANT" > "$DEST/VERSION"
say "uv $UV_VERSION and pipx $PIPX_VERSION ready in $DEST ($(( $(date +%s) - began )) s)"
