"""Fixtures for the thinking, output-budget and caching tests: the settings tests' CLI (the real `python -m
mini_claude` against the mock model, with helpers to write settings files)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.settings.conftest import SettingsCli


@pytest.fixture
def cli(tmp_path: Path) -> Iterator[SettingsCli]:
    c = SettingsCli(tmp_path)
    yield c
    c.close()
