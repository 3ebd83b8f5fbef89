"""What the Claude Code parity tests share (tests/*/test_*parity.py): Claude Code's binary and how each client is run
offline against the mock model. Each scenario runs once per client (`CLIENTS`) with the same assertions; a test
file keeps only its own scenarios and the differences it documents (what the model was sent:
tests/integration/conftest.py `sent_tool_results`)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.helpers import ROOT, require

__all__ = ["CLAUDE_BIN_ENV", "CLIENTS", "INSTALLED", "RUN_TIMEOUT_S", "claude_binary", "client_argv"]

CLAUDE_BIN_ENV = "CLAUDE_CODE_BIN"
INSTALLED = ROOT / ".cache" / "claude-code" / "node_modules" / "@anthropic-ai" / "claude-code-linux-x64" / "claude"
RUN_TIMEOUT_S = 120
CLIENTS = pytest.mark.parametrize("client", ["mini-claude", "claude-code"])


def claude_binary() -> str:
    """Claude Code's binary (`$CLAUDE_CODE_BIN`, else the one scripts/test.sh installs); skipped without it, a
    failure under CI."""
    given = os.environ.get(CLAUDE_BIN_ENV)
    path = Path(given) if given else INSTALLED
    if not path.is_file():
        require("Claude Code's binary", f"not at {path} (`mkdir -p .cache/claude-code && cd .cache/claude-code && "
                                        f"npm install @anthropic-ai/claude-code`, or set {CLAUDE_BIN_ENV})")
    return str(path)


def client_argv(client: str, env: dict[str, str], tmp: Path) -> list[str]:
    """The command that runs `client` ("mini-claude" or "claude-code") offline; `env` gets what that client needs
    (Claude Code: sandboxed, no updater, no traffic but the mock; mini-claude: its state under `tmp`, this checkout)."""
    if client == "claude-code":
        env.update(IS_SANDBOX="1", DISABLE_AUTOUPDATER="1", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1")
        return [claude_binary()]
    env.update(MINI_CLAUDE_STATE_DIR=str(tmp / "state"), PYTHONPATH=str(ROOT))
    return [sys.executable, "-m", "mini_claude"]
