"""Ordering of `notifications/tools/list_changed`: guarantees, not timing windows.

A server's `list_changed` marks it stale in the very callback that reads it, before any later message of that
server (a call's result among them) is handled, and starts one refresh (`tools/list`, again while more
notifications come). `settle()` — awaited before each model request — waits, bounded, until no refresh is in
flight, so a notification read before a call's result is applied before the next request. `settle_after_calls()` —
before `ToolSearch` answers — first pings every server that answered a call since its tools were listed: a
server's messages arrive in order, so once the ping is answered every notification it sent before (right after a
call's result, too) has been read; then it settles.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping

from mini_claude.errors import McpError
from mini_claude.mcp.client import McpClient
from mini_claude.mcp.protocol import McpTool
from mini_claude.mcp.server_state import ServerState, ServerStatus

__all__ = ["BARRIER_S", "LIST_SETTLE_S", "ListRefresher"]

log = logging.getLogger(__name__)

REFRESH_DEBOUNCE_S = 0.02  # list_changed often comes in bursts: one listing for a burst
LIST_SETTLE_S = 10.0  # how long a model request or a search waits for a tools/list_changed refresh in flight
BARRIER_S = 2.0  # how long a search waits for a called server's ping answer


class ListRefresher:
    """The manager's tool-list refreshes. `apply(state, tools)` takes a new listing (pins, catalogue, announce)."""

    def __init__(self, states: Mapping[str, ServerState], apply: Callable[[ServerState, list[McpTool]], None]
                 ) -> None:
        self._states = states
        self._apply = apply
        self._refreshes: dict[str, asyncio.Task[None]] = {}  # one tools/list refresh at a time per server
        self._stale: set[str] = set()  # servers whose list_changed came and whose tools are not listed again yet
        self._called: set[str] = set()  # servers that answered a call since their tools were last listed

    def tasks(self) -> list[asyncio.Task[None]]:
        return list(self._refreshes.values())

    def listed(self, name: str) -> None:
        """The server's tools were just listed (a start, a restart, a reconnect)."""
        self._called.discard(name)

    def called(self, name: str) -> None:
        """The server answered a tools/call."""
        self._called.add(name)

    def changed(self, name: str, client: McpClient) -> None:
        """`notifications/tools/list_changed` from `client`, called as it is read."""
        state = self._states.get(name)
        if state is None or state.client is not client:
            return  # a client that is not (or no longer) the server's: its list is not ours to refresh
        self._stale.add(name)
        running = self._refreshes.get(name)
        if running is None or running.done():
            self._refreshes[name] = asyncio.get_running_loop().create_task(self._refresh(state),
                                                                           name=f"mcp-refresh-{name}")

    async def _refresh(self, state: ServerState) -> None:
        """List the tools again until no list_changed came meanwhile (a burst costs one or two listings)."""
        await asyncio.sleep(REFRESH_DEBOUNCE_S)
        while state.name in self._stale:
            self._stale.discard(state.name)
            client = state.client
            if client is None or state.status is not ServerStatus.READY:
                return
            try:
                tools = await client.list_tools()
            except McpError as exc:
                log.warning("%s: refreshing tools failed: %s", state.name, exc)
                return
            if state.client is not client:
                return
            self._called.discard(state.name)
            self._apply(state, tools)

    async def settle(self, timeout_s: float = LIST_SETTLE_S) -> None:
        """Wait (bounded) for the refreshes in flight; one still running after `timeout_s` goes on by itself."""
        pending = [t for t in self._refreshes.values() if not t.done()]
        if pending:
            await asyncio.wait(pending, timeout=timeout_s)

    async def settle_after_calls(self, timeout_s: float = LIST_SETTLE_S) -> None:
        """Ping every ready server called since its last listing (bounded by `BARRIER_S`), then `settle()`."""
        barriers = [asyncio.ensure_future(asyncio.wait_for(s.client.ping(), BARRIER_S))
                    for s in self._states.values() if s.name in self._called and s.client is not None
                    and s.status is ServerStatus.READY]
        if barriers:
            await asyncio.wait(barriers)
            for barrier in barriers:
                if not barrier.cancelled():
                    barrier.exception()  # a server that does not answer a ping only loses the guarantee
        await self.settle(timeout_s)
