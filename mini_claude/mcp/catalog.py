"""The tools of every ready server under their qualified names (`mcp__server__tool`), as the manager offers them.

`ToolCatalog` reads the manager's `ServerState`s; the manager calls `invalidate()` whenever a state or a tool list
changes. Between changes `entries()` returns the same list object, so callers may cache what they build from it.
It also remembers every name it ever offered, so a call by the model to a tool of a server that has gone down (or
to a withheld tool) is explained instead of being "unknown".
"""

from __future__ import annotations

from collections.abc import Mapping

from mini_claude.mcp.naming import ToolNameTable, qualify_tool_name
from mini_claude.mcp.server_state import McpToolEntry, ServerState, ServerStatus

__all__ = ["ToolCatalog"]


class ToolCatalog:
    def __init__(self, states: Mapping[str, ServerState]) -> None:
        self._states = states
        self._table: ToolNameTable | None = None
        self._entries: list[McpToolEntry] | None = None
        self._owners: dict[str, str] = {}  # every qualified name ever offered -> its server

    def invalidate(self) -> None:
        self._table = None
        self._entries = None

    def name_table(self) -> ToolNameTable:
        if self._table is None:
            pairs = [(s.name, t.name) for s in self._states.values() if s.status is ServerStatus.READY
                     for t in s.tools]
            self._table = ToolNameTable(pairs)
            for pair in pairs:
                self._owners[self._table.qualified(*pair)] = pair[0]
        return self._table

    def entries(self) -> list[McpToolEntry]:
        if self._entries is None:
            table = self.name_table()
            self._entries = [McpToolEntry(state.name, tool, table.qualified(state.name, tool.name))
                             for state in self._states.values() if state.status is ServerStatus.READY
                             for tool in state.tools]
        return self._entries

    def server_of(self, qualified_name: str) -> str | None:
        entry = self.name_table().lookup(qualified_name)
        return entry[0] if entry else None

    def explain_unavailable(self, qualified_name: str) -> str | None:
        """Why a tool name the model used is not callable now, when it belonged to a server that is down:
        "MCP server 'x' is not available: <reason>"; or when the tool is withheld (its definition changed since
        the user accepted it). None when the name is unknown or callable."""
        if qualified_name in self.name_table():
            return None
        for candidate in self._states.values():
            for change in candidate.withheld:
                if qualify_tool_name(candidate.name, change.name) == qualified_name:
                    return f"MCP server {candidate.name!r}: {candidate.withheld_reason(change.name)}"
        server = self._owners.get(qualified_name)
        state = self._states.get(server) if server is not None else None
        if state is None or state.status is ServerStatus.READY:
            return None
        return f"MCP server {state.name!r} is not available: {state.error or state.status.value}"
