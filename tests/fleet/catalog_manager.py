"""A stand-in for the manager over a real catalogue: what the session's tool adapters read of a manager (`states`,
`tools()`, `server_tools()`), for tests that drive servers' states by hand."""

from __future__ import annotations

from typing import Any

from mini_claude.mcp.catalog import ToolCatalog
from mini_claude.mcp.server_state import ServerState


class CatalogManager:
    def __init__(self, states: dict[str, ServerState]) -> None:
        self.states = states
        self.catalog = ToolCatalog(states)

    def tools(self) -> list[Any]:
        return self.catalog.entries()

    def server_tools(self, server: str) -> list[Any]:
        return self.catalog.server_entries(server)
