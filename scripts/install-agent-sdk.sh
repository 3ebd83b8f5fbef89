#!/usr/bin/env bash
# Install the Claude Agent SDK (PyPI claude-agent-sdk) beside the product, for the compatibility tests
# (tests/compat) and bench/api.py — never into .venv, so the product's own dependencies stay what pyproject says.
#
#   bash scripts/install-agent-sdk.sh [DEST]        (DEST defaults to .cache/agent-sdk)
#
# What lands in DEST:
#   site/       the wheel, `pip install --target site --no-deps` (its bundled Claude Code binary included); a test
#               puts `site` on PYTHONPATH to import `claude_agent_sdk`. Its dependencies (anyio, sniffio, mcp,
#               jsonschema) come from .venv; this script checks their versions satisfy the wheel's pins.
#   examples/   the sdist's examples/ folder, nothing else from the sdist.
#   VERSION     the installed version, written last: its presence is what makes a second run a no-op.
#
# Local files instead of PyPI (offline development, tests): MINI_CLAUDE_AGENT_SDK_WHEEL=/path/to/x.whl and
# MINI_CLAUDE_AGENT_SDK_SDIST=/path/to/x.tar.gz. Every download is bounded by a timeout; on failure the script
# says what failed and exits non-zero, leaving no half-installed DEST behind (VERSION is absent).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VERSION=0.2.190
DEST=${1:-${MINI_CLAUDE_AGENT_SDK_DIR:-$ROOT/.cache/agent-sdk}}
PY=${PYTHON:-$ROOT/.venv/bin/python}
TIMEOUT=${MINI_CLAUDE_AGENT_SDK_TIMEOUT:-600}   # the wheel is ~190 MB (the CLI binary inside it)

say() { echo "[agent-sdk] $*" >&2; }
fail() { say "FAILED: $*"; exit 1; }

if [ "$(cat "$DEST/VERSION" 2>/dev/null)" = "$VERSION" ] && [ -d "$DEST/site/claude_agent_sdk" ] \
    && [ -f "$DEST/examples/quick_start.py" ]; then
  exit 0
fi
[ -x "$PY" ] || fail "no Python at $PY (run scripts/setup.sh first, or set PYTHON)"

# The wheel's runtime dependencies must already be in the interpreter that will import it.
"$PY" - <<'EOF' || fail "the SDK's dependencies are missing or too old in $PY (see above)"
import sys
from importlib.metadata import PackageNotFoundError, version
want = {"anyio": (4, 0), "sniffio": (1, 0), "mcp": (1, 23), "jsonschema": (4, 20)}
below = {"mcp": (3, 0)}
bad = []
for name, low in want.items():
    try:
        have = version(name)
    except PackageNotFoundError:
        bad.append(f"{name} is not installed")
        continue
    parts = tuple(int(p) for p in have.split(".")[:2] if p.isdigit())
    if parts < low or (name in below and parts >= below[name]):
        bad.append(f"{name} {have} is outside the wheel's range")
for line in bad:
    print(f"[agent-sdk] {line}", file=sys.stderr)
sys.exit(1 if bad else 0)
EOF

rm -rf "$DEST"
mkdir -p "$DEST"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/agent-sdk.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
PIP=("$PY" -m pip --disable-pip-version-check --no-input --timeout 60)
began=$(date +%s)

WHEEL=${MINI_CLAUDE_AGENT_SDK_WHEEL:-claude-agent-sdk==$VERSION}
say "installing $WHEEL into $DEST/site"
timeout "$TIMEOUT" "${PIP[@]}" install -q --no-deps --target "$DEST/site" "$WHEEL" \
  || fail "pip could not install $WHEEL (network? set MINI_CLAUDE_AGENT_SDK_WHEEL to a local wheel)"
[ -x "$DEST/site/claude_agent_sdk/_bundled/claude" ] \
  || fail "the installed wheel has no bundled CLI at site/claude_agent_sdk/_bundled/claude (wrong platform?)"

SDIST=${MINI_CLAUDE_AGENT_SDK_SDIST:-}
if [ -z "$SDIST" ]; then
  say "downloading the sdist of claude-agent-sdk $VERSION for its examples"
  timeout "$TIMEOUT" "${PIP[@]}" download -q --no-deps --no-binary :all: -d "$WORK" \
      "claude-agent-sdk==$VERSION" 2>"$WORK/download.log" \
    || { tail -n 5 "$WORK/download.log" >&2; fail "pip could not download the sdist (set MINI_CLAUDE_AGENT_SDK_SDIST)"; }
  SDIST=$(ls "$WORK"/claude_agent_sdk-"$VERSION".tar.gz 2>/dev/null || true)
  [ -n "$SDIST" ] || fail "pip downloaded no claude_agent_sdk-$VERSION.tar.gz"
fi
[ -f "$SDIST" ] || fail "no sdist at $SDIST"
tar -xzf "$SDIST" -C "$WORK" --wildcards "*/examples/*" || fail "could not extract examples/ from $SDIST"
mv "$WORK"/claude_agent_sdk-*/examples "$DEST/examples" || fail "$SDIST has no examples/ folder"

PYTHONPATH="$DEST/site" "$PY" -c "import claude_agent_sdk as s; assert s.__version__ == '$VERSION', s.__version__" \
  || fail "the installed claude_agent_sdk does not import as version $VERSION"
echo "$VERSION" > "$DEST/VERSION"
say "claude-agent-sdk $VERSION ready in $DEST ($(( $(date +%s) - began )) s)"
