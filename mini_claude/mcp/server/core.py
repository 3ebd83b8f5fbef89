"""`McpServerCore`: an MCP server's state and tools, independent of any transport — one `ServerSession` per client
connection (session.py), opened through `open_session(link)` (the `MessagePeer` protocol of
`mini_claude.mcp.transports.inprocess`).

    core = McpServerCore("calc", "1.0.0", [ServerTool.of("add", "Add two numbers", schema, add)])
    transport = InProcessTransport(core, server="calc")     # what the manager builds for a `"type": "sdk"` server

Tools may be added or removed while connected (`add_tool`, `remove_tool`): every initialized session is sent
`notifications/tools/list_changed`. `aclose()` ends every session (their clients see the connection end).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from mini_claude.mcp.server.session import ServerSession
from mini_claude.mcp.server.tools import ServerTool
from mini_claude.mcp.transports.inprocess import PeerLink

__all__ = ["McpServerCore"]


class McpServerCore:
    """A transport-agnostic MCP tools server (see the module docstring)."""

    def __init__(self, name: str, version: str = "1.0.0", tools: Iterable[ServerTool] = (),
                 instructions: str | None = None) -> None:
        if not isinstance(name, str) or not name:
            raise ValueError("an MCP server needs a non-empty name")
        self.name = name
        self.version = version
        self.instructions = instructions
        self._tools: dict[str, ServerTool] = {}
        for tool in tools:
            if not isinstance(tool, ServerTool):
                raise TypeError(f"server {name!r}: {tool!r} is not a ServerTool")
            if tool.name in self._tools:
                raise ValueError(f"server {name!r}: two tools are named {tool.name!r}")
            self._tools[tool.name] = tool
        self._sessions: set[ServerSession] = set()

    def __repr__(self) -> str:
        return f"McpServerCore(name={self.name!r}, version={self.version!r}, tools={list(self._tools)!r})"

    # ---- tools ---------------------------------------------------------------------------------------------------

    @property
    def tools(self) -> list[ServerTool]:
        return list(self._tools.values())

    def tool(self, name: str) -> ServerTool | None:
        return self._tools.get(name)

    def add_tool(self, tool: ServerTool) -> None:
        """Add (or replace, by name) a tool; connected clients are told the list changed."""
        self._tools[tool.name] = tool
        self._list_changed()

    def remove_tool(self, name: str) -> bool:
        """Remove a tool (False when there was none of that name); connected clients are told."""
        if self._tools.pop(name, None) is None:
            return False
        self._list_changed()
        return True

    def _list_changed(self) -> None:
        for session in list(self._sessions):
            if session.initialized:
                session.notify("notifications/tools/list_changed")

    # ---- connections ---------------------------------------------------------------------------------------------

    @property
    def sessions(self) -> int:
        """How many client connections are open."""
        return len(self._sessions)

    async def open_session(self, link: PeerLink) -> ServerSession:
        """A new client connection whose messages to the client go to `link`."""
        session = ServerSession(self, link)
        self._sessions.add(session)
        return session

    def forget(self, session: ServerSession) -> None:
        """A session closed (called by the session)."""
        self._sessions.discard(session)

    async def aclose(self) -> None:
        """End every connection: each client sees its connection end; running calls are cancelled."""
        sessions = list(self._sessions)
        for session in sessions:
            session.end(f"the in-process server {self.name!r} shut down")
        if sessions:
            await asyncio.gather(*(session.close() for session in sessions))
