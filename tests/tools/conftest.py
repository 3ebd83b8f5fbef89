"""Fixtures for the built-in tool tests: a fresh ToolContext on a temporary working directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from mini_claude.tools.base import ToolContext


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    work = tmp_path / "work"
    work.mkdir()
    return ToolContext(cwd=work, spill_dir=tmp_path / "spill")
