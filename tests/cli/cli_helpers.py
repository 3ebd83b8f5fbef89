"""Helpers for the CLI tests (imported as `cli_helpers`): reading the mock model's request log. Environments and
running `python -m mini_claude` come from tests/helpers.py (`clean_env`, `anthropic_env`, `run_cli`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["read_log"]


def read_log(path: Path) -> list[dict[str, Any]]:
    """The mock's request log (one JSON object a line)."""
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
