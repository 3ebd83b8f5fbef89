"""The tools of every ready server under their qualified names (`mcp__server__tool`), as the manager offers them.

`ToolCatalog` reads the manager's `ServerState`s; the manager calls `changed(state)` whenever a state or a tool list
changes. Each server's names and entries are worked out once per listing, when it changes (as a fleet comes up,
server by server), so putting the whole catalogue together for a model request is linear and cheap. Between
changes `entries()` returns the same list object, and a server's `server_entries()` the same entries, so callers
may cache what they build from them.
It also remembers every name it ever offered, so a call by the model to a tool of a server that has gone down (or
to a withheld tool) is explained instead of being "unknown".
"""

from __future__ import annotations

from collections.abc import Mapping

from mini_claude.mcp.naming import ServerNames, ToolNameTable, qualify_tool_name
from mini_claude.mcp.protocol import McpTool
from mini_claude.mcp.server_state import McpToolEntry, ServerState, ServerStatus

__all__ = ["ToolCatalog"]


class ToolCatalog:
    def __init__(self, states: Mapping[str, ServerState]) -> None:
        self._states = states
        self._table: ToolNameTable | None = None
        self._entries: list[McpToolEntry] | None = None
        self._owners: dict[str, str] = {}  # every qualified name ever offered -> its server
        # per ready server, for the tool list it was made from (`state.tools`, compared by identity): its names, and
        # its entries under those names (valid while the whole table gives every tool its own base name)
        self._named: dict[str, tuple[list[McpTool], ServerNames, list[McpToolEntry]]] = {}

    def invalidate(self) -> None:
        self._table = None
        self._entries = None

    def changed(self, state: ServerState) -> None:
        """A server's state or tools changed: its part is worked out now, the whole put together on next use."""
        self.invalidate()
        if state.status is ServerStatus.READY:
            self._part(state)
        else:
            self._named.pop(state.name, None)

    def _part(self, state: ServerState) -> tuple[list[McpTool], ServerNames, list[McpToolEntry]]:
        part = self._named.get(state.name)
        if part is None or part[0] is not state.tools:
            names = ServerNames(state.name, (tool.name for tool in state.tools))
            by_pair = dict(zip(names.pairs, names.names, strict=True))
            entries = [McpToolEntry(state.name, tool, by_pair[(state.name, tool.name)]) for tool in state.tools]
            part = self._named[state.name] = (state.tools, names, entries)
        return part

    def _ready(self) -> list[ServerState]:
        return [state for state in self._states.values() if state.status is ServerStatus.READY]

    def name_table(self) -> ToolNameTable:
        if self._table is None:
            ready = self._ready()
            self._table = ToolNameTable.combine(self._part(state)[1] for state in ready)
            for state in ready:
                for pair in self._part(state)[1].pairs:
                    self._owners[self._table.qualified(*pair)] = pair[0]
        return self._table

    def entries(self) -> list[McpToolEntry]:
        if self._entries is None:
            self._entries = [entry for state in self._ready() for entry in self.server_entries(state.name)]
        return self._entries

    def server_entries(self, server: str) -> list[McpToolEntry]:
        """One ready server's tools under their qualified names ([] for a server not ready)."""
        state = self._states.get(server)
        if state is None or state.status is not ServerStatus.READY:
            return []
        _, names, entries = self._part(state)
        table = self.name_table()
        if all(table.qualified(*pair) == name for pair, name in zip(names.pairs, names.names, strict=True)):
            return entries
        return [McpToolEntry(state.name, tool, table.qualified(state.name, tool.name)) for tool in state.tools]

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
