"""Helpers for the CLI tests (imported as `cli_helpers`): run `python -m mini_claude` as a subprocess with its
own HOME, state dir and working directory, against the mock model over loopback HTTP."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PYTHON = str(ROOT / ".venv" / "bin" / "python") if (ROOT / ".venv" / "bin" / "python").exists() else sys.executable


def clean_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """The test process's environment without any model/agent variables, with HOME and state in tmp_path."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ANTHROPIC_", "OPENAI_", "MINI_CLAUDE_", "MCP_"))}
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env.update(HOME=str(home), MINI_CLAUDE_STATE_DIR=str(tmp_path / "state"), PYTHONPATH=str(ROOT),
               MINI_CLAUDE_RETRY_BASE_S="0.001")
    env.update(extra)
    return env


def anthropic_env(tmp_path: Path, url: str, **extra: str) -> dict[str, str]:
    return clean_env(tmp_path, ANTHROPIC_BASE_URL=url, ANTHROPIC_API_KEY="x", **extra)


def openai_env(tmp_path: Path, url: str, **extra: str) -> dict[str, str]:
    return clean_env(tmp_path, MINI_CLAUDE_BACKEND="openai", OPENAI_BASE_URL=url + "/v1", OPENAI_API_KEY="x",
                     **extra)


def cli(args: list[str], *, cwd: Path, env: dict[str, str], timeout: float = 30) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PYTHON, "-m", "mini_claude", *args], cwd=cwd, env=env, text=True, capture_output=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)


def read_log(path: Path) -> list[dict[str, Any]]:
    """The mock's request log (one JSON object a line)."""
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
