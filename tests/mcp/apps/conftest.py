"""The `world` fixture of the bridge tests (tests/mcp/apps/bridge_world.py), closed after each test."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.mcp.apps.bridge_world import World


@pytest.fixture
async def world() -> AsyncIterator[World]:
    made = World()
    yield made
    await made.apps.aclose()
