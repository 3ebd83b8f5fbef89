"""Fixtures for the state-folder tests: the real CLI against the mock model (`cli`, as in tests/integration)."""

from __future__ import annotations




