"""The `world` fixture of the bridge tests, from tests/mcp/apps/bridge_world.py (shared with the red team's)."""

from __future__ import annotations

from tests.mcp.apps.bridge_world import world

__all__ = ["world"]
