#!/usr/bin/env bash
# Set up (if needed), install the third-party MCP test peers, the Claude Agent SDK (tests/compat), uv + pipx
# (tests/e2e/test_tool_install.py) and the MCP Apps example servers (tests/integration/apps), lint, type-check, and
# run the whole test suite.
# The peer installer's output goes to $PEERS_DIR/install.log; when it fails, the log's tail is shown, and under
# MINI_CLAUDE_REQUIRE_PEERS=1 (CI, see .ci/run) the run stops there. Without the switch the tests that need a
# missing peer skip and say why (pytest ends with a one-line "skips: ..." summary).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
bash scripts/setup.sh
STRICT=${MINI_CLAUDE_REQUIRE_PEERS:-0}
PEERS_DIR=${MINI_CLAUDE_PEERS_DIR:-$ROOT/.cache/peers}
INSTALLER=$ROOT/../shared/peers/install-peers.sh
if [ -f "$INSTALLER" ]; then
  mkdir -p "$PEERS_DIR"
  LOG=$PEERS_DIR/install.log
  if ! bash "$INSTALLER" "$PEERS_DIR" >"$LOG" 2>&1; then
    echo "[test] the peer installer failed; the end of $LOG:" >&2
    tail -n 30 "$LOG" >&2
    if [ "$STRICT" = 1 ]; then
      echo "[test] FAILED: MINI_CLAUDE_REQUIRE_PEERS=1 needs every peer installed" >&2
      exit 1
    fi
    echo "[test] tests that need the missing peers will skip and say so" >&2
  fi
elif [ "$STRICT" = 1 ]; then
  echo "[test] FAILED: MINI_CLAUDE_REQUIRE_PEERS=1 needs the peer installer at $INSTALLER" >&2
  exit 1
fi
export MINI_CLAUDE_PEERS_DIR=$PEERS_DIR
# Claude Code's own binary (npm), for the tests that run the same scenario against it (tests/hooks parity).
CLAUDE_CODE_VERSION=2.1.197
CLAUDE_CODE_DIR=$ROOT/.cache/claude-code
if [ ! -x "$CLAUDE_CODE_DIR/node_modules/@anthropic-ai/claude-code-linux-x64/claude" ]; then
  mkdir -p "$CLAUDE_CODE_DIR"
  if ! (cd "$CLAUDE_CODE_DIR" && timeout 300 npm install --no-audit --no-fund --loglevel=error \
          "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION") >"$CLAUDE_CODE_DIR/install.log" 2>&1; then
    echo "[test] npm could not install @anthropic-ai/claude-code@$CLAUDE_CODE_VERSION; the end of its log:" >&2
    tail -n 20 "$CLAUDE_CODE_DIR/install.log" >&2
    if [ "$STRICT" = 1 ]; then
      echo "[test] FAILED: MINI_CLAUDE_REQUIRE_PEERS=1 needs Claude Code's binary for the parity tests" >&2
      exit 1
    fi
  fi
fi
# The Claude Agent SDK (wheel + its shipped examples) beside the product, for tests/compat and bench/api.py.
AGENT_SDK_DIR=$ROOT/.cache/agent-sdk
if ! bash scripts/install-agent-sdk.sh "$AGENT_SDK_DIR" 2>"$ROOT/.cache/agent-sdk-install.log"; then
  echo "[test] could not install claude-agent-sdk; the end of its log:" >&2
  tail -n 20 "$ROOT/.cache/agent-sdk-install.log" >&2
  if [ "$STRICT" = 1 ]; then
    echo "[test] FAILED: MINI_CLAUDE_REQUIRE_PEERS=1 needs claude-agent-sdk for the compatibility tests" >&2
    exit 1
  fi
  echo "[test] the tests that run the SDK's examples will skip and say so" >&2
fi
# uv and pipx beside the product, for the test that installs mini-claude as a tool from a clone (tests/e2e).
if ! bash scripts/install-tools.sh 2>"$ROOT/.cache/tools-install.log"; then
  echo "[test] could not install uv and pipx; the end of its log:" >&2
  tail -n 20 "$ROOT/.cache/tools-install.log" >&2
  if [ "$STRICT" = 1 ]; then
    echo "[test] FAILED: MINI_CLAUDE_REQUIRE_PEERS=1 needs uv and pipx for the install test" >&2
    exit 1
  fi
  echo "[test] the install test will skip and say so" >&2
fi
# The MCP Apps example servers (npm, pinned) for the browser tests (tests/integration/apps).
if ! bash scripts/install-apps-peers.sh >"$ROOT/.cache/apps-peers-install.log" 2>&1; then
  echo "[test] could not install the MCP Apps example servers; the end of its log:" >&2
  tail -n 20 "$ROOT/.cache/apps-peers-install.log" >&2
  if [ "$STRICT" = 1 ]; then
    echo "[test] FAILED: MINI_CLAUDE_REQUIRE_PEERS=1 needs the MCP Apps example servers for the browser tests" >&2
    exit 1
  fi
  echo "[test] the browser tests that run them will skip and say so" >&2
fi
.venv/bin/ruff check mini_claude tests bench
.venv/bin/mypy  # strict on mini_claude/mcp and mini_claude/net (pyproject.toml [tool.mypy])
# Two workers by default (CI has two cores; most tests wait on child processes, servers and terminals rather than
# compute): MINI_CLAUDE_TEST_WORKERS=N changes it, 0 runs everything in this one process.
WORKERS=${MINI_CLAUDE_TEST_WORKERS:-2}
if [ "$WORKERS" = 0 ]; then
  exec .venv/bin/python -m pytest "$@"
fi
exec .venv/bin/python -m pytest -n "$WORKERS" "$@"
