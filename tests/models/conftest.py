"""Fixtures for the model backends (the mock server itself comes from tests/conftest.py)."""

from __future__ import annotations

import pytest


@pytest.fixture
def mock_server(mock_model):  # type: ignore[no-untyped-def]
    """The root `mock_model` fixture under the name these tests use."""
    return mock_model
