"""The system prompt: who the agent is, where it works, and what each MCP server says about itself."""

from __future__ import annotations

import datetime as _dt
import platform
from collections.abc import Mapping
from pathlib import Path

__all__ = ["MAX_SERVER_INSTRUCTIONS_CHARS", "build_system_prompt"]

MAX_SERVER_INSTRUCTIONS_CHARS = 2000

_BASE = """You are mini-claude, a coding agent working in the user's terminal.
Use the tools to read, search and change files and to run commands; prefer reading before editing.
Be concise. When a tool fails, read its error and adapt instead of repeating the same call."""


def build_system_prompt(cwd: Path, server_instructions: Mapping[str, str] | None = None) -> str:
    parts = [
        _BASE,
        f"Working directory: {cwd}\nPlatform: {platform.system()}\nDate: {_dt.date.today().isoformat()}",
    ]
    for name, text in sorted((server_instructions or {}).items()):
        text = text.strip()
        if not text:
            continue
        if len(text) > MAX_SERVER_INSTRUCTIONS_CHARS:
            text = text[:MAX_SERVER_INSTRUCTIONS_CHARS] + " […]"
        parts.append(f'Instructions from MCP server "{name}" (its tools are named mcp__{name}__*):\n{text}')
    return "\n\n".join(parts)
