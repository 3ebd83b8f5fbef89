"""Losing a connection, and getting it back: the manager's self-healing (manager.py owns the rest of a server's life).

* A stdio server whose process dies, or whose pipe breaks, stays `ready` with its tools still offered and
  `ServerState.lost` saying why, and is restarted in the background after a backoff (1 s, 2 s, 4 s, … 30 s). A
  call that arrives meanwhile waits for the restart (bounded: the backoff left, when it is under
  `CALL_WAITS_FOR_RESTART_S`, plus the startup timeout); the call that was in flight when it died fails with the
  reason and is never replayed. After `MAX_RESTARTS_IN_A_ROW` restarts without a successful call in between (each
  either failed, or the server died again) it becomes `failed`, saying why and that it gave up; `restart()` (by
  hand) starts it again.
* A remote (http / sse) server whose connection is lost (the transport ended, a call could not reach it, its
  response stream was cut, or the server forgot our session: HTTP 404) stays `ready` with its tools listed and
  `lost` saying why; the call that was lost fails with a message saying so, and the next call reconnects first
  (new transport, new client, new handshake, tools re-listed), bounded by the startup timeout. Concurrent calls
  share one reconnect. A reconnect that cannot reach the server (down, restarting) fails that call and leaves the
  server lost, so the next call tries again; any other reconnect failure makes it `failed`.
* A login needed (AuthRequiredError) mid-session makes the server `needs-auth`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Protocol

from mini_claude.errors import AuthRequiredError, McpError, TransportError
from mini_claude.mcp.client import McpClient
from mini_claude.mcp.failures import failure_reason, lost_reason, needs_login_text, session_refused
from mini_claude.mcp.protocol import McpTool
from mini_claude.mcp.server_state import MAX_RESTARTS_IN_A_ROW, ServerState, ServerStatus, restart_backoff_s
from mini_claude.mcp.startup import StartFailed

__all__ = ["CALL_WAITS_FOR_RESTART_S", "HealHost", "Healer"]

log = logging.getLogger(__name__)

LOST_CLOSE_GRACE_S = 5.0  # how long calls in flight on a refused session may take to get their own answers
CALL_WAITS_FOR_RESTART_S = 5.0  # a call waits for a restart whose backoff ends within this; else it fails at once


class HealHost(Protocol):
    """What the healer needs from the manager."""

    @property
    def closed(self) -> bool: ...

    @property
    def startup_wait_s(self) -> float:
        """The longest a start may take (the startup timeout, extended while a slow server works)."""
        ...

    async def connect_state(self, state: ServerState) -> tuple[McpClient, list[McpTool]]: ...

    def bring_up(self, state: ServerState, client: McpClient, tools: list[McpTool]) -> None: ...

    def set_down(self, state: ServerState, status: ServerStatus, reason: str) -> None: ...

    def close_later(self, state: ServerState, client: McpClient, *, grace_s: float = 0.0) -> None: ...

    def changed(self, state: ServerState) -> None: ...


class Healer:
    """The manager's lost connections: one shared reconnect (remote) or background restart (stdio) per server."""

    def __init__(self, host: HealHost) -> None:
        self.host = host
        self.tasks: dict[str, asyncio.Task[None]] = {}

    def cancel(self, name: str) -> asyncio.Task[None] | None:
        """Stop a background restart (its backoff sleep, or its start); returns the task to await. A remote
        reconnect is not cancelled (calls wait for it): it is returned to be waited for."""
        task = self.tasks.pop(name, None)
        if task is None or task.done():
            return None
        if task.get_name().startswith("mcp-heal-"):
            task.cancel()
        return task

    def restarting_soon(self, states: dict[str, ServerState]) -> list[asyncio.Task[None]]:
        """The restarts and reconnects in flight that a caller may wait for: those whose backoff ends within
        `CALL_WAITS_FOR_RESTART_S` (a server backing off for 30 s is not waited for)."""
        now = time.monotonic()
        return [task for name, task in self.tasks.items() if not task.done() and name in states
                and (states[name].restart_after or now) - now <= CALL_WAITS_FOR_RESTART_S]

    # ---- losing it ---------------------------------------------------------------------------------------------

    def on_lost(self, state: ServerState, client: McpClient, error: McpError) -> None:
        """The client's session ended (its `session_closed_callback`)."""
        if self.host.closed or state.status is not ServerStatus.READY or state.client is not client:
            return
        if isinstance(error, AuthRequiredError):
            self.host.set_down(state, ServerStatus.NEEDS_AUTH, needs_login_text(error, state.config))
            return
        if state.is_remote:
            self.mark_lost(state, client, error)
            return
        reason = f"connection lost: {failure_reason(error, state.config)}"
        if state.crashes_in_a_row >= MAX_RESTARTS_IN_A_ROW:  # it starts, then dies again every time
            self.host.set_down(state, ServerStatus.FAILED,
                               f"{reason} (gave up after {state.crashes_in_a_row} restarts in a row)")
            return
        state.lost, state.error, state.client = reason, None, None
        self.host.close_later(state, client)  # reaps what is left of it
        log.info("%s: %s; restarting it in the background", state.name, reason)
        self._heal_later(state)
        self.host.changed(state)

    def mark_lost(self, state: ServerState, client: McpClient, error: McpError) -> None:
        """A remote server's connection is gone: keep its tools, close the client, reconnect on the next call."""
        if self.host.closed or state.status is not ServerStatus.READY or state.client is not client:
            return  # already handled (another call, or the closed callback, got there first)
        state.lost, state.error = lost_reason(error), None
        state.client = None
        # calls still in flight on the old session get their own answers before it is closed: when the server
        # forgot the session it refuses each of them, so they are known not to have run and are retried
        self.host.close_later(state, client,
                              grace_s=LOST_CLOSE_GRACE_S if session_refused(error, client) else 0.0)
        log.info("%s: connection lost (%s); reconnecting on the next call", state.name, state.lost)
        self.host.changed(state)

    # ---- getting it back ---------------------------------------------------------------------------------------

    async def ensure_connected(self, state: ServerState) -> None:
        """Before a call: reconnect a lost remote server (one shared attempt for concurrent callers), or wait
        (bounded) for a stdio server's restart in the background."""
        if state.status is not ServerStatus.READY or state.lost is None:
            return
        task = self.tasks.get(state.name)
        if state.is_remote:
            if task is None or task.done():
                task = asyncio.get_running_loop().create_task(self._reconnect(state),
                                                              name=f"mcp-reconnect-{state.name}")
                self.tasks[state.name] = task
            # shielded: one caller giving up (cancelled) must not abort the reconnect the others wait for
            await asyncio.shield(task)
            return
        if task is None or task.done():
            self._heal_later(state)
            task = self.tasks[state.name]
        left = max(0.0, (state.restart_after or 0.0) - time.monotonic())
        if left > CALL_WAITS_FOR_RESTART_S:
            raise TransportError(f"not available: {state.lost}; restarting it in {left:.0f}s", server=state.name)
        done, _ = await asyncio.wait({asyncio.shield(task)}, timeout=left + self.host.startup_wait_s)
        if not done:
            raise TransportError(f"not available: {state.lost}; still restarting", server=state.name)

    def _heal_later(self, state: ServerState) -> None:
        state.restart_after = time.monotonic() + restart_backoff_s(state.crashes_in_a_row)
        self.tasks[state.name] = asyncio.get_running_loop().create_task(self._heal(state),
                                                                        name=f"mcp-heal-{state.name}")

    async def _heal(self, state: ServerState) -> None:
        """Restart an exited stdio server after its backoff, again after each failed restart, until it is up or
        `MAX_RESTARTS_IN_A_ROW` restarts in a row were spent."""
        while True:
            await asyncio.sleep(max(0.0, (state.restart_after or 0.0) - time.monotonic()))
            if self.host.closed or state.status is not ServerStatus.READY or state.lost is None:
                return
            state.crashes_in_a_row += 1
            state.restarts += 1
            log.info("%s: restarting (try %d in a row): %s", state.name, state.crashes_in_a_row, state.lost)
            try:
                client, tools = await self.host.connect_state(state)
            except StartFailed as failed:
                gave_up = state.crashes_in_a_row >= MAX_RESTARTS_IN_A_ROW
                if failed.status is not ServerStatus.FAILED or gave_up:
                    reason = failed.reason
                    if gave_up:
                        reason = f"{reason} (gave up after {state.crashes_in_a_row} restarts in a row)"
                    state.restart_after = None
                    self.host.set_down(state, failed.status, reason)
                    return
                state.error = f"restarting failed: {failed.reason}"
                state.restart_after = time.monotonic() + restart_backoff_s(state.crashes_in_a_row)
                self.host.changed(state)
                continue
            state.restart_after = None
            if not self._still_wanted(state):  # shut down, or switched off meanwhile
                await client.close()
                return
            self.host.bring_up(state, client, tools)
            return

    def _still_wanted(self, state: ServerState) -> bool:
        """After an await: the manager is open and the server still ready (not switched off or restarted by hand)."""
        return not self.host.closed and state.status is ServerStatus.READY

    async def _reconnect(self, state: ServerState) -> None:
        lost = state.lost
        log.info("%s: reconnecting (the connection was lost: %s)", state.name, lost)
        try:
            client, tools = await self.host.connect_state(state)
        except StartFailed as failed:
            if failed.transient and failed.status is ServerStatus.FAILED:
                # still unreachable (down, restarting): keep the tools and try again on the next call
                state.error = f"reconnecting failed: {failed.reason}"
                self.host.changed(state)
                return
            reason = failed.reason
            if failed.status is ServerStatus.FAILED:
                reason = f"reconnecting failed: {reason} (the connection was lost: {lost})"
            self.host.set_down(state, failed.status, reason)
            return
        if self.host.closed or state.status is not ServerStatus.READY:  # shut down, or switched off meanwhile
            await client.close()
            return
        self.host.bring_up(state, client, tools)
