"""Many MCP servers at once: config → parallel startup → naming → routing → refresh → shutdown.

Every enabled server starts concurrently, each bounded by its own startup timeout; each ends `ready`, `failed`
(with a reason that says what to change), or stays `disabled` / `needs-approval` / `needs-auth`. One slow or
broken server never delays or breaks another, and `start()` returns at once so the REPL prompt is never blocked.
Every server's lifecycle lives here, in one place. What it hands out is plain data (`ServerState`,
`McpToolEntry`, in server_state.py); the session wraps tool entries in Tool adapters, so this layer never imports
mini_claude.tools. Failure texts (a hung stdio server's stderr tail among them) are worded in failures.py.

Losing a connection:

* A stdio server whose process dies, or whose pipe breaks, becomes `failed`; the next call that needs it
  restarts it (after a backoff of 1 s, 2 s, … 30 s; at most 5 times in a row without a successful call). The call
  that was in flight fails with the reason and is never replayed.
* A remote (http / sse) server whose connection is lost (the transport ended, a call could not reach it, its
  response stream was cut, or the server forgot our session: HTTP 404) stays `ready` with its tools listed and
  `ServerState.lost` saying why; the call that was lost fails with a message saying so, and the next call
  reconnects first (new transport, new client, new handshake, tools re-listed), bounded by the startup timeout.
  Concurrent calls share one reconnect. A call refused with HTTP 404 (the server never ran it) is retried once,
  transparently, on the new session. A reconnect that cannot reach the server (down, restarting) fails that call
  and leaves the server lost, so the next call tries again; any other reconnect failure makes it `failed`.
* A login needed (AuthRequiredError), at startup or mid-session, makes the server `needs-auth`.

Pinned tool definitions (pinning.py, when a `PinStore` is given): every listing of a server's tools (startup,
reconnect, `tools/list_changed`) is compared with the pins; a tool whose definition changed is withheld
(`ServerState.withheld`: not offered, a call by name is refused) until `accept_changed()`, and so are changed
instructions (left out of `instructions()`); `pins.on_review` hears of each review worth telling the user about
(withheld tools or instructions not announced before, new tools).

Why this module is long: it is one state machine — start, lose, reconnect, restart (by hand or self-healing),
refresh, shut down — whose transitions share the same per-server state and in-flight tasks; what could leave
(failure wording, the tool catalogue, naming, pinning, the plain state) already lives in its own module.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any

from mini_claude.errors import AuthRequiredError, ConfigError, McpError, McpTimeoutError, TransportError
from mini_claude.mcp.catalog import ToolCatalog
from mini_claude.mcp.client import McpClient
from mini_claude.mcp.config import ServerConfig
from mini_claude.mcp.connect import build_transport
from mini_claude.mcp.failures import (
    failure_reason,
    is_connection_loss,
    lost_reason,
    needs_login_text,
    session_refused,
    start_failure,
)
from mini_claude.mcp.naming import ToolNameTable
from mini_claude.mcp.negotiation import EraMemory
from mini_claude.mcp.pinning import PinStore, ReviewCallback, ToolChange, ToolPins, server_key
from mini_claude.mcp.protocol import CallToolResult, McpTool, tool_max_timeout_s, tool_timeout_s
from mini_claude.mcp.server_state import (
    MAX_RESTARTS_IN_A_ROW,
    McpToolEntry,
    ServerState,
    ServerStatus,
    filter_tools,
    restart_backoff_s,
    startup_timeout_s,
)
from mini_claude.mcp.transports.base import SupportsStderr, Transport

__all__ = [
    "ClientReady",
    "ClientSetup",
    "McpManager",
    "McpToolEntry",
    "ServerState",
    "ServerStatus",
    "ToolRunner",
]

log = logging.getLogger(__name__)

SHUTDOWN_TIMEOUT_S = 8.0
LOST_CLOSE_GRACE_S = 5.0  # how long calls in flight on a refused session may take to get their own answers
REFRESH_DEBOUNCE_S = 0.05
LIST_SETTLE_S = 2.0  # how long a model request waits for a tools/list_changed refresh in flight
# the reason a server switched off for a project starts with (set_enabled, disabledMcpServers); only that kind of
# "disabled" is lifted by set_enabled(True)
SWITCHED_OFF = "disabled for this project"

TransportFactory = Callable[[ServerConfig, Mapping[str, str]], Transport]
# called with each new client before it connects (startup and every reconnect): register request handlers
# (sampling/createMessage, elicitation/create, roots/list) and notification callbacks there
ClientSetup = Callable[[ServerConfig, McpClient], None]
# awaited with each client once connected, inside the startup timeout (logging/setLevel and the like)
ClientReady = Callable[[ServerConfig, McpClient], Awaitable[None]]
# runs one tools/call on a ready client: (client, tool, arguments, idle timeout s) -> result
ToolRunner = Callable[[McpClient, str, dict[str, Any], float], Awaitable[CallToolResult]]


class _StartFailed(Exception):
    """Internal: connecting failed; the status the server gets and the reason shown."""

    def __init__(self, status: ServerStatus, reason: str, *, transient: bool = False) -> None:
        self.status = status
        self.reason = reason
        self.transient = transient  # the server could not be reached (down, restarting): worth another try
        super().__init__(reason)


def default_transport(cfg: ServerConfig, env: Mapping[str, str]) -> Transport:
    """The transport a server's config asks for (no interactive login at startup: see build_transport)."""
    return build_transport(cfg, env)


class McpManager:
    """Owns every configured server's connection.

    Example:

        manager = McpManager(loaded.servers.values(), env=os.environ)
        manager.start()                 # returns at once; servers start in the background
        await manager.wait_started()    # optional: -p mode waits for each to be ready or failed
        entries = manager.tools()       # McpToolEntry for every ready server's tools
        await manager.aclose()
    """

    def __init__(
        self,
        servers: Iterable[ServerConfig],
        *,
        env: Mapping[str, str] | None = None,
        held: Mapping[str, tuple[ServerStatus, str]] | None = None,
        transport_factory: TransportFactory = default_transport,
        startup_timeout: float | None = None,
        on_change: Callable[[ServerState], None] | None = None,
        client_setup: ClientSetup | None = None,
        client_ready: ClientReady | None = None,
        era_memory: EraMemory | None = None,
        pins: PinStore | None = None,
        on_review: ReviewCallback | None = None,
    ) -> None:
        self.env: Mapping[str, str] = dict(os.environ if env is None else env)
        self.startup_timeout = startup_timeout if startup_timeout is not None else startup_timeout_s(self.env)
        self._transport_factory = transport_factory
        self.on_change = on_change
        self.client_setup = client_setup
        self.client_ready = client_ready
        self.era_memory = era_memory  # where each server's protocol era is remembered (None: not remembered)
        self.pins = ToolPins(pins, on_review)  # where tool definitions are pinned (None: all listed are offered)
        self.states: dict[str, ServerState] = {}
        held = held or {}
        for cfg in servers:
            state = ServerState(cfg)
            if cfg.disabled:
                state.status, state.error = ServerStatus.DISABLED, "disabled in config"
            elif cfg.name in held:
                state.status, state.error = held[cfg.name]
            self.states[cfg.name] = state
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._refresh_tasks: set[asyncio.Task[None]] = set()
        # close() of clients that failed or were lost: awaited, never cancelled, by aclose() (a cancelled close
        # could leave a live process behind, and state.client is already None so nothing else would stop it)
        self._close_tasks: set[asyncio.Task[None]] = set()
        self._reconnects: dict[str, asyncio.Task[None]] = {}  # one shared reconnect per server
        self._catalog = ToolCatalog(self.states)
        self._closed = False

    # ---- lifecycle ---------------------------------------------------------------------------------------------

    def start(self) -> None:
        """Start every server that may start, concurrently. Returns at once."""
        for state in self.states.values():
            if state.status is ServerStatus.STARTING and state.name not in self._tasks:
                self._tasks[state.name] = asyncio.get_running_loop().create_task(
                    self._start_one(state), name=f"mcp-start-{state.name}")

    async def wait_started(self, timeout: float | None = None) -> None:
        """Wait until every starting server is ready or failed (each is bounded by its own timeout)."""
        tasks = [t for t in self._tasks.values() if not t.done()]
        if tasks:
            await asyncio.wait(tasks, timeout=timeout if timeout is not None else self.startup_timeout + 5)

    async def aclose(self) -> None:
        """Stop every server. Bounded in time; safe to call twice."""
        if self._closed:
            return
        self._closed = True
        running = [*self._tasks.values(), *self._refresh_tasks, *self._reconnects.values()]
        for task in running:
            task.cancel()
        pending = [t for t in running if not t.done()]
        if pending:
            await asyncio.wait(pending, timeout=SHUTDOWN_TIMEOUT_S)
        closing = [asyncio.ensure_future(s.client.close()) for s in self.states.values() if s.client is not None]
        closing.extend(t for t in self._close_tasks if not t.done())
        if closing:
            await asyncio.wait(closing, timeout=SHUTDOWN_TIMEOUT_S)
        for state in self.states.values():
            state.client = None

    async def restart(self, name: str) -> ServerState:
        """Stop one server (if it runs) and start it again, bounded by the startup timeout like `start()`; return
        its new state (ready, failed or needs-auth). For a server that is ready, failed, needs a login (after
        `mcp login`) or still starting. Raises ConfigError for an unknown name or a server that may not start
        (disabled, or a project server awaiting approval). If the caller is cancelled, the start goes on in the
        background and is announced through `on_change` as usual."""
        state = self.states.get(name)
        if state is None:
            known = ", ".join(sorted(self.states)) or "none"
            raise ConfigError(f"no MCP server named {name!r} (configured: {known})")
        if state.status in (ServerStatus.DISABLED, ServerStatus.NEEDS_APPROVAL):
            raise ConfigError(f"MCP server {name!r} is {state.status.label}: {state.error or 'it may not start'}")
        if self._closed:
            raise TransportError("cannot restart: the session's MCP servers are shut down", server=name)
        # a start or reconnect in flight would race the new one for `state`. A start is stopped; a reconnect is
        # waited for (bounded by the startup timeout), since tool calls may be awaiting it and must not see a
        # cancellation that is not theirs
        starting = self._tasks.pop(name, None)
        if starting is not None and not starting.done():
            starting.cancel()
            await asyncio.wait([starting], timeout=SHUTDOWN_TIMEOUT_S)
        reconnect = self._reconnects.pop(name, None)
        if reconnect is not None and not reconnect.done():
            await asyncio.wait([reconnect], timeout=self.startup_timeout + SHUTDOWN_TIMEOUT_S)
        old = state.client
        # detach first, so the old client's closed callback sees it is no longer current and ignores it
        state.client, state.tools, state.withheld, state.lost, state.startup_s = None, [], [], None, None
        state.restart_after = None
        state.status, state.error = ServerStatus.STARTING, None
        self._changed(state)
        if old is not None:
            # awaited: a stdio server must be gone before its successor starts (one process per server)
            with contextlib.suppress(Exception):
                await asyncio.wait_for(old.close(), SHUTDOWN_TIMEOUT_S)
        task = asyncio.get_running_loop().create_task(self._start_one(state), name=f"mcp-start-{name}")
        self._tasks[name] = task
        # shielded: a cancelled caller (Ctrl+C while waiting) leaves the start to finish in the background
        await asyncio.shield(task)
        return state

    async def set_enabled(self, name: str, enabled: bool) -> ServerState:
        """Switch a server off (its connection closed, `disabled`) or on again (started like `restart`)."""
        state = self.states.get(name)
        if state is None:
            raise ConfigError(f"no MCP server named {name!r} (configured: {', '.join(sorted(self.states))})")
        if enabled:
            if state.status is ServerStatus.DISABLED and not (state.error or "").startswith(SWITCHED_OFF):
                # disabled in its config, or denied / not approved for this project: that is not lifted here
                raise ConfigError(f"MCP server {name!r} stays off: {state.error or 'disabled'}")
            if state.status is ServerStatus.DISABLED:
                state.status = ServerStatus.FAILED  # restart() starts anything but disabled / unapproved
            return await self.restart(name) if state.status is not ServerStatus.READY else state
        starting = self._tasks.pop(name, None)
        if starting is not None and not starting.done():  # a start in flight must not make it ready afterwards
            starting.cancel()
            await asyncio.wait([starting], timeout=SHUTDOWN_TIMEOUT_S)
        self._set_down(state, ServerStatus.DISABLED, SWITCHED_OFF)
        state.restart_after = None
        return state

    async def _start_one(self, state: ServerState) -> None:
        began = time.monotonic()
        try:
            client, tools = await self._connect(state)
        except _StartFailed as failed:
            self._set_down(state, failed.status, failed.reason)
            return
        self._set_ready(state, client, tools)
        state.startup_s = time.monotonic() - began
        self._changed(state)
        self.pins.announce(state.name)

    async def _connect(self, state: ServerState) -> tuple[McpClient, list[McpTool]]:
        """A new transport and client, connected and listed within the startup timeout; raises _StartFailed."""
        cfg = state.config
        transport: Transport | None = None
        client: McpClient | None = None
        try:
            transport = self._transport_factory(cfg, self.env)
            client = McpClient(transport, name=cfg.name, protocol_version=cfg.protocol_version,
                               era_memory=self.era_memory, era_key=server_key(cfg))
            client.on_notification("notifications/tools/list_changed", lambda _m, _p: self._schedule_refresh(state))
            if self.client_setup is not None:
                self.client_setup(cfg, client)
            async with asyncio.timeout(self.startup_timeout):
                await client.connect(timeout_s=self.startup_timeout)
                if self.client_ready is not None:
                    await self.client_ready(cfg, client)
                tools = await client.list_tools()
        except asyncio.CancelledError:
            if client is not None:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(client.close(), SHUTDOWN_TIMEOUT_S)
            raise
        except BaseException as exc:
            if client is not None:
                self._close_later(state, client)
            if not isinstance(exc, Exception):
                raise
            # what the server said before it hung or died is usually the real cause ("waiting for database…")
            diagnostics = transport.diagnostics() if transport is not None else ""
            stderr = transport.stderr_text() if isinstance(transport, SupportsStderr) else ""
            status, reason = start_failure(exc, cfg, self.startup_timeout, diagnostics, stderr)
            transient = isinstance(exc, TimeoutError | McpTimeoutError | TransportError)
            raise _StartFailed(status, reason, transient=transient) from None
        return client, tools

    def _set_ready(self, state: ServerState, client: McpClient, tools: list[McpTool]) -> None:
        state.client = client
        self._apply_pins(state, filter_tools(tools, state.config))
        state.status, state.error, state.lost = ServerStatus.READY, None, None
        client.session_closed_callback = lambda err: self._on_server_lost(state, client, err)

    def _apply_pins(self, state: ServerState, listed: list[McpTool]) -> None:
        """Offer the listed tools that match their pins; withhold the changed ones (pinning.py)."""
        instructions = state.client.instructions if state.client is not None else None
        review = self.pins.review(self.pins.key_for(state.config), state.name, listed, instructions)
        state.tools, state.withheld = list(review.allowed), list(review.changed)

    def accept_changed(self, name: str) -> list[ToolChange]:
        """Pin the current definitions of a ready server's withheld tools and instructions (the user saw the diff
        and accepted) and offer them from now on; returns the tools accepted (an unpinnable one stays withheld)."""
        state = self.states.get(name)
        if state is None:
            known = ", ".join(sorted(self.states)) or "none"
            raise ConfigError(f"no MCP server named {name!r} (configured: {known})")
        changes = [change for change in state.withheld if change.pinnable]
        if self.pins.store is None or not (changes or self.pins.withheld_instructions(name)):
            return []
        review = self.pins.accept(self.pins.key_for(state.config), state.name, changes)
        state.tools, state.withheld = list(review.allowed), list(review.changed)
        self._changed(state)
        return changes

    def _set_down(self, state: ServerState, status: ServerStatus, reason: str) -> None:
        """The server is failed / needs-auth: its tools leave the list, its client (if any) is closed."""
        client = state.client
        state.status, state.error, state.lost = status, reason, None
        state.tools, state.withheld = [], []
        state.client = None
        if client is not None:
            self._close_later(state, client)
        self._changed(state)

    def _fail(self, state: ServerState, client: McpClient | None, reason: str) -> None:
        if client is not None and client is not state.client:
            self._close_later(state, client)
        self._set_down(state, ServerStatus.FAILED, reason)

    def _close_later(self, state: ServerState, client: McpClient, *, grace_s: float = 0.0) -> None:
        closing = client.close_when_idle(grace_s) if grace_s > 0 else client.close()
        task = asyncio.get_running_loop().create_task(closing, name=f"mcp-close-{state.name}")
        self._close_tasks.add(task)
        task.add_done_callback(self._close_tasks.discard)

    def _on_server_lost(self, state: ServerState, client: McpClient, error: McpError) -> None:
        if self._closed or state.status is not ServerStatus.READY or state.client is not client:
            return
        if isinstance(error, AuthRequiredError):
            self._set_down(state, ServerStatus.NEEDS_AUTH, needs_login_text(error, state.config))
        elif state.is_remote:
            self._mark_lost(state, client, error)
        else:  # a stdio server that exited: restarted on the next call that needs it (_heal)
            self._fail(state, client, f"connection lost: {failure_reason(error, state.config)}")
            if state.crashes_in_a_row < MAX_RESTARTS_IN_A_ROW:
                state.restart_after = time.monotonic() + restart_backoff_s(state.crashes_in_a_row)
            else:  # it starts, then dies again every time: stop trying until the user reconnects it
                state.error = f"{state.error} (gave up after {state.crashes_in_a_row} restarts in a row)"

    def _mark_lost(self, state: ServerState, client: McpClient, error: McpError) -> None:
        """A remote server's connection is gone: keep its tools, close the client, reconnect on the next call."""
        if self._closed or state.status is not ServerStatus.READY or state.client is not client:
            return  # already handled (another call, or the closed callback, got there first)
        state.lost, state.error = lost_reason(error), None
        state.client = None
        # calls still in flight on the old session get their own answers before it is closed: when the server
        # forgot the session it refuses each of them, so they are known not to have run and are retried
        self._close_later(state, client, grace_s=LOST_CLOSE_GRACE_S if session_refused(error, client) else 0.0)
        log.info("%s: connection lost (%s); reconnecting on the next call", state.name, state.lost)
        self._changed(state)

    async def _ensure_connected(self, state: ServerState) -> None:
        """Reconnect a lost remote server (one shared attempt for concurrent callers)."""
        if state.status is not ServerStatus.READY or state.lost is None:
            return
        task = self._reconnects.get(state.name)
        if task is None or task.done():
            task = asyncio.get_running_loop().create_task(self._reconnect(state), name=f"mcp-reconnect-{state.name}")
            self._reconnects[state.name] = task
        # shielded: one caller giving up (cancelled) must not abort the reconnect the others wait for
        await asyncio.shield(task)

    async def _reconnect(self, state: ServerState) -> None:
        lost = state.lost
        log.info("%s: reconnecting (the connection was lost: %s)", state.name, lost)
        try:
            client, tools = await self._connect(state)
        except _StartFailed as failed:
            if failed.transient and failed.status is ServerStatus.FAILED:
                # still unreachable (down, restarting): keep the tools and try again on the next call
                state.error = f"reconnecting failed: {failed.reason}"
                self._changed(state)
                return
            reason = failed.reason
            if failed.status is ServerStatus.FAILED:
                reason = f"reconnecting failed: {reason} (the connection was lost: {lost})"
            self._set_down(state, failed.status, reason)
            return
        if self._closed or state.status is not ServerStatus.READY:  # shut down, or switched off meanwhile
            await client.close()
            return
        self._set_ready(state, client, tools)
        self._changed(state)
        self.pins.announce(state.name)

    def _changed(self, state: ServerState) -> None:
        self._catalog.invalidate()
        if self.on_change is not None:
            try:
                self.on_change(state)
            except Exception:
                log.exception("on_change callback failed")

    # ---- tools -------------------------------------------------------------------------------------------------

    def _schedule_refresh(self, state: ServerState) -> None:
        if self._closed:
            return
        task = asyncio.get_running_loop().create_task(self._refresh(state))
        self._refresh_tasks.add(task)
        task.add_done_callback(self._refresh_tasks.discard)

    async def _refresh(self, state: ServerState) -> None:
        await asyncio.sleep(REFRESH_DEBOUNCE_S)  # list_changed often comes in bursts
        client = state.client
        if client is None or state.status is not ServerStatus.READY:
            return
        try:
            tools = await client.list_tools()
        except McpError as exc:
            log.warning("%s: refreshing tools failed: %s", state.name, exc)
            return
        self._apply_pins(state, filter_tools(tools, state.config))
        self._changed(state)
        self.pins.announce(state.name)

    def name_table(self) -> ToolNameTable:
        return self._catalog.name_table()

    def tools(self) -> list[McpToolEntry]:
        """Every ready server's tools under their qualified names. The same list object is returned until a
        server's state or tools change, so a caller may cache what it builds from it (the session's adapters)."""
        return self._catalog.entries()

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
        """Wait (bounded) for the tool-list refreshes that `list_changed` notifications started, so a model
        request made now sees the new list. A refresh still running after `timeout_s` goes on in the background."""
        pending = [t for t in self._refresh_tasks if not t.done()]
        if pending:
            await asyncio.wait(pending, timeout=timeout_s)

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
                return result
            except AuthRequiredError as exc:
                if state.client is client:
                    self._set_down(state, ServerStatus.NEEDS_AUTH, needs_login_text(exc, state.config))
                raise
            except McpError as exc:
                # the server forgot our session, so it never ran the call: run it once more on a new session
                retry = state.is_remote and attempt == 1 and session_refused(exc, client)
                if not retry and (not state.is_remote or not is_connection_loss(exc)):
                    raise
                self._mark_lost(state, client, exc)
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

    async def _heal(self, state: ServerState) -> None:
        """Restart a stdio server that exited, once its backoff has passed; at most `MAX_RESTARTS_IN_A_ROW`
        times without a successful call in between (then it stays failed, saying so)."""
        if state.status is not ServerStatus.FAILED or state.restart_after is None or self._closed:
            return
        wait = state.restart_after - time.monotonic()
        if wait > 0:
            raise TransportError(f"not available: {state.error}; restarting it in {wait:.0f}s", server=state.name)
        state.crashes_in_a_row += 1
        state.restarts += 1
        log.info("%s: restarting (try %d in a row): %s", state.name, state.crashes_in_a_row, state.error)
        await self.restart(state.name)
        if state.status is ServerStatus.FAILED:
            if state.crashes_in_a_row >= MAX_RESTARTS_IN_A_ROW:
                state.error = f"{state.error} (gave up after {state.crashes_in_a_row} restarts in a row)"
            else:
                state.restart_after = time.monotonic() + restart_backoff_s(state.crashes_in_a_row)

    async def _ready_client(self, state: ServerState) -> McpClient:
        """The connected client of a ready server, reconnecting a lost remote one (or restarting an exited stdio
        one) first."""
        await self._heal(state)
        await self._ensure_connected(state)
        if state.status is ServerStatus.READY and state.lost is not None:
            raise TransportError(f"connection to the server was lost ({state.lost}); "
                                 f"{state.error or 'reconnecting failed'}; it will try again on the next call",
                                 server=state.name)
        if state.client is None or state.status is not ServerStatus.READY:
            raise TransportError(f"not available: {state.error or 'not connected'}", server=state.name)
        return state.client
