"""Many MCP servers at once: config → parallel startup → naming → routing → refresh → shutdown.

Every enabled server starts concurrently, each bounded by its own startup timeout; each ends `ready`, `failed`
(with a reason that says what to change), or stays `disabled` / `needs-approval` / `needs-auth`. One slow or
broken server never delays or breaks another, and `start()` returns at once so the REPL prompt is never blocked.
Every server's lifecycle lives here, in one place. What it hands out is plain data (`ServerState`,
`McpToolEntry`, in server_state.py); the session wraps tool entries in Tool adapters, so this layer never imports
mini_claude.tools. Failure texts (a hung stdio server's stderr tail among them) are worded in failures.py.

This module owns every server's lifecycle (start, restart, switch off, shut down) and what a fresh listing does to
the offered tools. Finding a server's tools, instructions and connected client, and routing `tools/call` to it, is
routing.py's `ServerRouting`, the base `McpManager` inherits it from.

Losing a connection (a stdio server exits, a remote one's connection drops) and getting it back — the background
restart of a stdio server, its tools still offered meanwhile, the shared reconnect of a remote one — is healing.py;
connecting one server within its startup timeout (extended while a slow server still works) is startup.py.

Ordering of `tools/list_changed` against calls, model requests and searches: list_refresh.py.

Pinned tool definitions (pinning.py, when a `PinStore` is given): every listing of a server's tools (startup,
reconnect, `tools/list_changed`) is compared with the pins; a tool whose definition changed is withheld
(`ServerState.withheld`: not offered, a call by name is refused) until `accept_changed()`, and so are changed
instructions (left out of `instructions()`); `pins.on_review` hears of each review worth telling the user about
(withheld tools or instructions not announced before, new tools).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import Callable, Iterable, Mapping

from mini_claude.errors import ConfigError, TransportError
from mini_claude.mcp.catalog import ToolCatalog
from mini_claude.mcp.client import McpClient
from mini_claude.mcp.config import ServerConfig
from mini_claude.mcp.healing import Healer
from mini_claude.mcp.list_refresh import ListRefresher
from mini_claude.mcp.negotiation import EraMemory
from mini_claude.mcp.pinning import PinStore, ReviewCallback, ToolChange, ToolPins
from mini_claude.mcp.protocol import McpTool
from mini_claude.mcp.routing import ServerRouting, ToolRunner
from mini_claude.mcp.server_state import (
    McpToolEntry,
    ServerState,
    ServerStatus,
    filter_tools,
    startup_timeout_s,
)
from mini_claude.mcp.startup import (
    STARTUP_CEILING_FACTOR,
    ClientReady,
    ClientSetup,
    Connector,
    StartFailed,
    TransportFactory,
    default_transport,
)

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
# the reason a server switched off for a project starts with (set_enabled, disabledMcpServers); only that kind of
# "disabled" is lifted by set_enabled(True)
SWITCHED_OFF = "disabled for this project"


class McpManager(ServerRouting):
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
        self.on_change = on_change
        self._eras = era_memory  # where each server's protocol era is remembered (None: not remembered)
        self._connector = Connector(env=self.env, timeout_s=self.startup_timeout, factory=transport_factory,
                                    on_list_changed=lambda cfg, client: self._lists.changed(cfg.name, client),
                                    close_later=lambda name, client: self.close_later(self.states[name], client),
                                    era_memory=era_memory, client_setup=client_setup, client_ready=client_ready)
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
        self._lists = ListRefresher(self.states, self._apply_listing)
        # close() of clients that failed or were lost: awaited, never cancelled, by aclose() (a cancelled close
        # could leave a live process behind, and state.client is already None so nothing else would stop it)
        self._close_tasks: set[asyncio.Task[None]] = set()
        self._healer = Healer(self)
        self._catalog = ToolCatalog(self.states)
        self._closed = False

    # ---- lifecycle ---------------------------------------------------------------------------------------------

    def start(self) -> None:
        """Start every server that may start, concurrently. Returns at once. The era memory is written once, when
        the last of them is up or down (EraMemory.hold)."""
        if self._eras is not None:
            self._eras.hold()
        for state in self.states.values():
            if state.status is ServerStatus.STARTING and state.name not in self._tasks:
                task = asyncio.get_running_loop().create_task(self._start_one(state), name=f"mcp-start-{state.name}")
                task.add_done_callback(self._started_one)
                self._tasks[state.name] = task
        self._started_one(None)

    def _started_one(self, _task: asyncio.Task[None] | None) -> None:
        if self._eras is not None and all(t.done() for t in self._tasks.values()):
            self._eras.flush()

    async def wait_started(self, timeout: float | None = None) -> None:
        """Wait until every starting server is ready or failed (each is bounded by its own timeout)."""
        tasks = [t for t in self._tasks.values() if not t.done()]
        if tasks:
            await asyncio.wait(tasks, timeout=timeout if timeout is not None else self.startup_wait_s + 5)

    @property
    def startup_wait_s(self) -> float:
        """The longest one start may take: the startup timeout, extended while a slow server works (startup.py)."""
        return self.startup_timeout * STARTUP_CEILING_FACTOR

    @property
    def closed(self) -> bool:
        return self._closed

    async def aclose(self) -> None:
        """Stop every server. Bounded in time; safe to call twice."""
        if self._closed:
            return
        self._closed = True
        running = [*self._tasks.values(), *self._lists.tasks(), *self._healer.tasks.values()]
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
        if self._eras is not None:
            self._eras.flush()

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
        reconnect = self._healer.cancel(name)  # a background restart stops; a remote reconnect is waited for
        if reconnect is not None:
            await asyncio.wait([reconnect], timeout=self.startup_wait_s + SHUTDOWN_TIMEOUT_S)
        old = state.client
        # detach first, so the old client's closed callback sees it is no longer current and ignores it
        state.client, state.tools, state.withheld, state.lost, state.startup_s = None, [], [], None, None
        state.restart_after = None
        state.status, state.error = ServerStatus.STARTING, None
        self.changed(state)
        if old is not None:
            # awaited: a stdio server must be gone before its successor starts (one process per server)
            with contextlib.suppress(Exception):
                await asyncio.wait_for(old.close(), SHUTDOWN_TIMEOUT_S)
        task = asyncio.get_running_loop().create_task(self._start_one(state), name=f"mcp-start-{name}")
        task.add_done_callback(self._started_one)  # a restart while the fleet starts: the fleet is up once it is
        self._tasks[name] = task
        # shielded: a cancelled caller (Ctrl+C while waiting) leaves the start to finish in the background
        await asyncio.shield(task)
        return state

    async def set_enabled(self, name: str, enabled: bool, *, lift_hold: bool = False) -> ServerState:
        """Switch a server off (its connection closed, `disabled`) or on again (started like `restart`).
        `lift_hold`: the caller checked that nothing holds the server back any more (the settings switched it on
        and a session started now would start it), so a hold of any kind is lifted, except `"disabled": true` in
        its config."""
        state = self.states.get(name)
        if state is None:
            raise ConfigError(f"no MCP server named {name!r} (configured: {', '.join(sorted(self.states))})")
        if enabled:
            if lift_hold and not state.config.disabled and state.status in (ServerStatus.DISABLED,
                                                                            ServerStatus.NEEDS_APPROVAL):
                state.status, state.error = ServerStatus.DISABLED, SWITCHED_OFF
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
        healing = self._healer.cancel(name)  # a background restart is cancelled; a remote reconnect waited for
        if healing is not None:
            await asyncio.wait([healing], timeout=self.startup_wait_s + SHUTDOWN_TIMEOUT_S)
        self.set_down(state, ServerStatus.DISABLED, SWITCHED_OFF)
        state.restart_after = None
        return state

    async def _start_one(self, state: ServerState) -> None:
        began = time.monotonic()
        try:
            client, tools = await self.connect_state(state)
        except StartFailed as failed:
            self.set_down(state, failed.status, failed.reason)
            return
        self.bring_up(state, client, tools, startup_s=time.monotonic() - began)

    async def connect_state(self, state: ServerState) -> tuple[McpClient, list[McpTool]]:
        """A new transport and client for `state`, connected and listed (startup.py); raises StartFailed."""
        return await self._connector.connect(state.config)

    def bring_up(self, state: ServerState, client: McpClient, tools: list[McpTool], *,
                 startup_s: float | None = None) -> None:
        """A (re)connected client: the server is ready with its listed tools, and the user hears of it."""
        self._set_ready(state, client, tools)
        if startup_s is not None:
            state.startup_s = startup_s
        self.changed(state)
        self.pins.announce(state.name)

    def _set_ready(self, state: ServerState, client: McpClient, tools: list[McpTool]) -> None:
        state.client = client
        self._apply_pins(state, filter_tools(tools, state.config))
        state.status, state.error, state.lost = ServerStatus.READY, None, None
        self._lists.listed(state.name)
        client.session_closed_callback = lambda err: self._healer.on_lost(state, client, err)

    def _apply_pins(self, state: ServerState, listed: list[McpTool]) -> None:
        """Offer the listed tools that match their pins; withhold the changed ones (pinning.py)."""
        instructions = state.client.instructions if state.client is not None else None
        review = self.pins.review(self.pins.key_for(state.config), state.name, listed, instructions)
        state.tools, state.withheld = list(review.allowed), list(review.changed)

    def _apply_listing(self, state: ServerState, tools: list[McpTool]) -> None:
        """A refreshed listing (list_refresh.py): pinned, offered, announced."""
        self._apply_pins(state, filter_tools(tools, state.config))
        self.changed(state)
        self.pins.announce(state.name)

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
        self.changed(state)
        return changes

    def set_down(self, state: ServerState, status: ServerStatus, reason: str) -> None:
        """The server is failed / needs-auth: its tools leave the list, its client (if any) is closed."""
        client = state.client
        state.status, state.error, state.lost = status, reason, None
        state.tools, state.withheld = [], []
        state.client = None
        if client is not None:
            self.close_later(state, client)
        self.changed(state)

    def close_later(self, state: ServerState, client: McpClient, *, grace_s: float = 0.0) -> None:
        """Close a client that is no longer current, in the background (awaited by aclose(), never cancelled)."""
        closing = client.close_when_idle(grace_s) if grace_s > 0 else client.close()
        task = asyncio.get_running_loop().create_task(closing, name=f"mcp-close-{state.name}")
        self._close_tasks.add(task)
        task.add_done_callback(self._close_tasks.discard)

    def changed(self, state: ServerState) -> None:
        self._catalog.changed(state)
        if self.on_change is not None:
            try:
                self.on_change(state)
            except Exception:
                log.exception("on_change callback failed")
