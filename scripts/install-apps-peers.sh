#!/usr/bin/env bash
# Install the MCP Apps example servers (npm, extension io.modelcontextprotocol/ui) beside the product, for the
# browser tests in tests/integration/apps/: a scripted model calls their tools and a real browser renders their views.
#
#   bash scripts/install-apps-peers.sh [DEST]      (DEST defaults to .cache/apps-peers, git-ignored)
#
# What lands in DEST:
#   node_modules/.bin/mcp-server-basic-vanillajs    the "Get Server Time" view (a button that calls a server tool)
#   node_modules/.bin/mcp-budget-allocator-server   the data-heavy view (Chart.js inline, many canvases)
#   VERSION     the pinned list, written last: its presence (with both programs there) makes a second run a no-op.
#
# Only the two the tests need: server-pdf would add about 100 MB for what the fixture server
# (tests/mcp/servers/apps_server.py) already covers. Both start with `--stdio`. The versions are pinned exactly;
# the npm download is bounded by a timeout; on failure the script says what failed and exits non-zero, leaving no
# VERSION behind (the next run starts again). Measured: about 3 s with a warm npm cache, 50 MB.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PACKAGES=(
  "@modelcontextprotocol/server-basic-vanillajs@2.0.3"
  "@modelcontextprotocol/server-budget-allocator@2.0.3"
)
BINS=(mcp-server-basic-vanillajs mcp-budget-allocator-server)
WANT="${PACKAGES[*]}"
DEST=${1:-${MINI_CLAUDE_APPS_PEERS_DIR:-$ROOT/.cache/apps-peers}}
TIMEOUT=${MINI_CLAUDE_TOOLS_TIMEOUT:-300}

say() { echo "[apps-peers] $*" >&2; }
fail() { say "FAILED: $*"; exit 1; }

installed() {
  [ "$(cat "$DEST/VERSION" 2>/dev/null)" = "$WANT" ] || return 1
  local bin
  for bin in "${BINS[@]}"; do [ -x "$DEST/node_modules/.bin/$bin" ] || return 1; done
}

installed && exit 0
command -v npm >/dev/null || fail "npm is not on PATH (Node.js 18 or newer is needed)"
began=$(date +%s)
rm -rf "$DEST/node_modules" "$DEST/VERSION"
mkdir -p "$DEST"
# A package.json of our own, so npm installs here and never walks up into the checkout.
echo '{"name": "mini-claude-apps-peers", "private": true}' > "$DEST/package.json"
say "installing $WANT into $DEST"
(cd "$DEST" && timeout "$TIMEOUT" npm install --no-audit --no-fund --no-save --loglevel=error "${PACKAGES[@]}") \
  || fail "npm could not install $WANT (network?)"
for spec in "${PACKAGES[@]}"; do
  name=${spec%@*}; version=${spec##*@}
  grep -q "\"version\": \"$version\"" "$DEST/node_modules/$name/package.json" \
    || fail "$name is not at version $version after the install"
done
for bin in "${BINS[@]}"; do
  [ -x "$DEST/node_modules/.bin/$bin" ] || fail "the install has no $bin"
done
echo "$WANT" > "$DEST/VERSION"
say "ready in $DEST ($(( $(date +%s) - began )) s)"
