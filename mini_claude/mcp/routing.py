"""The manager's way to its servers: the tools of every ready server under their qualified names (catalog.py), each
server's instructions, why a name is not callable now, `tools/call` routed to its server within its timeouts (a
session the server forgot retried once, a lost connection handed to healing.py), a connected client for anything
else (resources, prompts, skills), and waiting until `list_changed` refreshes are applied (list_refresh.py).
`ServerRouting` is the base of `McpManager` (manager.py), which owns every server's lifecycle and sets every
attribute declared below.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from mini_claude.errors import AuthRequiredError, McpError, McpTimeoutError, TransportError
from mini_claude.mcp.catalog import ToolCatalog
from mini_claude.mcp.client import McpClient
from mini_claude.mcp.failures import is_connection_loss, lost_reason, needs_login_text, session_refused
from mini_claude.mcp.healing import Healer
from mini_claude.mcp.list_refresh import LIST_SETTLE_S, ListRefresher
from mini_claude.mcp.naming import ToolNameTable
from mini_claude.mcp.pinning import ToolPins
from mini_claude.mcp.protocol import CallToolResult, tool_max_timeout_s, tool_timeout_s
from mini_claude.mcp.server_state import McpToolEntry, ServerState, ServerStatus

__all__ = ["ServerRouting", "ToolRunner"]

log = logging.getLogger(__name__)

# runs one tools/call on a ready client: (client, tool, arguments, idle timeout s) -> result
ToolRunner = Callable[[McpClient, str, dict[str, Any], float], Awaitable[CallToolResult]]


class ServerRouting:
    """Finds a server's tools, clients and instructions for the session (see the module docstring)."""

    env: Mapping[str, str]
    states: dict[str, ServerState]
    pins: ToolPins
    _tasks: dict[str, asyncio.Task[None]]
    _lists: ListRefresher
    _healer: Healer
    _catalog: ToolCatalog

    @property
    def startup_wait_s(self) -> float:
        raise NotImplementedError  # McpManager's

    def set_down(self, state: ServerState, status: ServerStatus, reason: str) -> None:
        raise NotImplementedError  # McpManager's: the server failed or needs a login

    def name_table(self) -> ToolNameTable:
        return self._catalog.name_table()

    def tools(self) -> list[McpToolEntry]:
        """Every ready server's tools under their qualified names. The same list object is returned until a
        server's state or tools change, so a caller may cache what it builds from it (the session's adapters)."""
        return self._catalog.entries()

    def server_tools(self, server: str) -> list[McpToolEntry]:
        """One ready server's part of `tools()` (the same entries while its tools are unchanged)."""
        return self._catalog.server_entries(server)

    def server_of(self, qualified_name: str) -> str | None:
        return self._catalog.server_of(qualified_name)

    def instructions(self) -> dict[str, str]:
        # instructions changed since accepted stay out of the system prompt until accepted (pinning.py)
        return {s.name: s.client.instructions for s in self.states.values()
                if s.status is ServerStatus.READY and s.client is not None and s.client.instructions
                and self.pins.offers_instructions(s.name, s.client.instructions)}

    def explain_unavailable(self, qualified_name: str) -> str | None:
        """Why a tool the model named is not callable now (server down, tool withheld); see catalog.py."""
        return self._catalog.explain_unavailable(qualified_name)

    async def settle_lists(self, timeout_s: float = LIST_SETTLE_S) -> None:
        """Wait (bounded) until every `list_changed` read so far has been applied (list_refresh.py), so a model
        request made now sees the new list."""
        await self._lists.settle(timeout_s)

    async def settle_for_search(self, timeout_s: float | None = None) -> list[str]:
        """Before a search of the tools: wait (bounded by the startup wait) for servers still starting or
        restarting, then make sure every list_changed a called server sent is applied (list_refresh.py). Returns
        the servers still not ready, each as "name (status)", for the search to name."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + (timeout_s if timeout_s is not None else self.startup_wait_s)
        starting = [t for t in self._tasks.values() if not t.done()] + self._healer.restarting_soon(self.states)
        if starting:
            await asyncio.wait(starting, timeout=max(0.0, deadline - loop.time()))
        await self._lists.settle_after_calls(max(0.0, min(LIST_SETTLE_S, deadline - loop.time())))
        return [f"{s.name} ({'restarting' if s.lost else s.status.label})" for s in self.states.values()
                if s.status is ServerStatus.STARTING or (s.status is ServerStatus.READY and s.lost)]

    async def call_tool(self, server: str, tool: str, arguments: dict[str, Any], *,
                        on_progress: Callable[[float, float | None, str | None], None] | None = None,
                        runner: ToolRunner | None = None) -> CallToolResult:
        """Call a tool on a ready server. The call may go `MCP_TOOL_TIMEOUT` (or the server's `timeout`) without
        an answer or progress, and never past `MCP_TOOL_MAX_TIMEOUT`. `runner` runs it on the client instead of
        `client.call_tool` (a task-augmented call, mini_claude.mcp.host.tasks)."""
        max_s = tool_max_timeout_s(self.env)
        try:
            async with asyncio.timeout(max_s):
                return await self._call_tool(server, tool, arguments, on_progress, runner)
        except TimeoutError:
            raise McpTimeoutError(f"tools/call {tool} (MCP_TOOL_MAX_TIMEOUT)", max_s, server=server) from None

    async def _call_tool(self, server: str, tool: str, arguments: dict[str, Any],
                         on_progress: Callable[[float, float | None, str | None], None] | None,
                         runner: ToolRunner | None) -> CallToolResult:
        state = self.states.get(server)
        if state is None:
            raise TransportError("not available: not configured", server=server)
        withheld = state.withheld_reason(tool)
        if withheld is not None:  # never sent: the model must not reach a definition the user has not accepted
            raise McpError(withheld, server=server)
        # the server's `timeout` (ms) wins over MCP_TOOL_TIMEOUT, read from the session env (which includes .env)
        timeout_s = state.config.timeout_ms / 1000.0 if state.config.timeout_ms else tool_timeout_s(self.env)
        for attempt in (1, 2):
            client = await self._ready_client(state)
            try:
                if runner is not None:
                    result = await runner(client, tool, arguments, timeout_s)
                else:
                    result = await client.call_tool(tool, arguments, timeout_s=timeout_s, on_progress=on_progress)
                state.crashes_in_a_row = 0
                self._lists.called(server)
                return result
            except AuthRequiredError as exc:
                if state.client is client:
                    self.set_down(state, ServerStatus.NEEDS_AUTH, needs_login_text(exc, state.config))
                raise
            except McpError as exc:
                # the server forgot our session, so it never ran the call: run it once more on a new session
                retry = state.is_remote and attempt == 1 and session_refused(exc, client)
                if not retry and (not state.is_remote or not is_connection_loss(exc)):
                    raise
                self._healer.mark_lost(state, client, exc)
                if retry:
                    log.info("%s: session refused (%s); retrying %s on a new session", server, exc.message, tool)
                    continue
                raise TransportError(f"connection to the server was lost ({lost_reason(exc)}); it will "
                                     "reconnect on the next call", server=server) from None
        raise AssertionError("unreachable")  # pragma: no cover

    async def connected_client(self, server: str) -> McpClient:
        """The connected client of a ready server (for resources, prompts, skills: anything but tools/call),
        reconnecting a lost remote one first. Raises TransportError saying why when it is not available."""
        state = self.states.get(server)
        if state is None:
            raise TransportError("not available: not configured", server=server)
        return await self._ready_client(state)

    async def _ready_client(self, state: ServerState) -> McpClient:
        """The connected client of a ready server, reconnecting a lost remote one (or waiting for an exited stdio
        one's restart) first."""
        await self._healer.ensure_connected(state)
        if state.status is ServerStatus.READY and state.lost is not None and not state.is_remote:
            raise TransportError(f"not available: {state.lost}; {state.error or 'restarting'}", server=state.name)
        if state.status is ServerStatus.READY and state.lost is not None:
            raise TransportError(f"connection to the server was lost ({state.lost}); "
                                 f"{state.error or 'reconnecting failed'}; it will try again on the next call",
                                 server=state.name)
        if state.client is None or state.status is not ServerStatus.READY:
            raise TransportError(f"not available: {state.error or 'not connected'}", server=state.name)
        return state.client
