"""Fixtures for the state-folder tests: the real CLI against the mock model (`cli`, as in tests/integration)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.conftest import Cli


@pytest.fixture
def cli(tmp_path: Path) -> Iterator[Cli]:
    c = Cli(tmp_path)
    yield c
    c.close()
