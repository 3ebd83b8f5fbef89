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
from mini_claude.mcp.server_state import McpToolEntry, ServerState, ServerStatus

__all__ = ["ToolCatalog"]


class ToolCatalog:
    def __init__(self, states: Mapping[str, ServerState]) -> None:
        self._states = states
        self._table: ToolNameTable | None = None
        self._entries: list[McpToolEntry] | None = None
        self._owners: dict[str, str] = {}  # every qualified name ever offered -> its server
        # per ready server, for the tool list it was made from (`state.tools`, compared by identity): its names, and
        # its entries under those names (valid while no other server claims one of them: `_claims`)
        self._named: dict[str, _Part] = {}
        self._claims: dict[str, int] = {}  # name -> how many ready servers' parts name a tool so

    def invalidate(self) -> None:
        self._table = None
        self._entries = None

    def changed(self, state: ServerState) -> None:
        """A server's state or tools changed: its part is worked out now, the whole put together on next use."""
        self.invalidate()
        if state.status is ServerStatus.READY:
            self._part(state)
        else:
            self._release(state.name)

    def _part(self, state: ServerState) -> _Part:
        part = self._named.get(state.name)
        if part is None or part.tools is not state.tools:
            self._release(state.name)
            part = self._named[state.name] = _Part(state)
            for name in part.unique_names:
                claims = self._claims[name] = self._claims.get(name, 0) + 1
                if claims == 1:  # a name another server claims too is given by the table (`name_table`)
                    self._owners[name] = state.name
        return part

    def _release(self, server: str) -> None:
        part = self._named.pop(server, None)
        for name in part.unique_names if part is not None else ():
            left = self._claims.pop(name) - 1
            if left:
                self._claims[name] = left
            if left == 1:  # the one server left claiming it has the name back (rare: a collision ended)
                self._owners[name] = next(other.server for other in self._named.values() if name in other.unique_names)

    def _ready(self) -> list[ServerState]:
        return [state for state in self._states.values() if state.status is ServerStatus.READY]

    def name_table(self) -> ToolNameTable:
        if self._table is None:
            ready = self._ready()
            self._table = ToolNameTable.combine(self._part(state).names for state in ready)
            if any(not self._clean(self._part(state)) for state in ready):  # names moved: remember the final ones
                for state in ready:
                    for pair in self._part(state).names.pairs:
                        self._owners[self._table.qualified(*pair)] = pair[0]
        return self._table

    def entries(self) -> list[McpToolEntry]:
        if self._entries is None:
            self._entries = [entry for state in self._ready() for entry in self.server_entries(state.name)]
        return self._entries

    def server_entries(self, server: str) -> list[McpToolEntry]:
        """One ready server's tools under their qualified names ([] for a server not ready). Linear in its own
        tools while none of their names is another's (always, short of a hash collision or an impostor)."""
        state = self._states.get(server)
        if state is None or state.status is not ServerStatus.READY:
            return []
        part = self._part(state)
        if self._clean(part):
            return part.entries
        table = self.name_table()
        return [McpToolEntry(state.name, tool, table.qualified(state.name, tool.name)) for tool in state.tools]

    def _clean(self, part: _Part) -> bool:
        """The part's tools keep their own names: no two of them, nor any other ready server's tool, share one."""
        return part.unambiguous and all(self._claims.get(name) == 1 for name in part.unique_names)

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


class _Part:
    """One ready server's tools, named once per listing."""

    def __init__(self, state: ServerState) -> None:
        self.server = state.name
        self.tools = state.tools  # the list it was made from (a new listing is a new list)
        self.names = ServerNames(state.name, (tool.name for tool in state.tools))
        by_pair = dict(zip(self.names.pairs, self.names.names, strict=True))
        self.entries = [McpToolEntry(state.name, tool, by_pair[(state.name, tool.name)]) for tool in state.tools]
        self.unique_names = set(self.names.names)
        self.unambiguous = len(self.unique_names) == len(self.names.names)

