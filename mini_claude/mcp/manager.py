"""Many MCP servers at once: config → parallel startup → naming → routing → refresh → shutdown.

Every enabled server starts concurrently, each bounded by its own startup timeout; each ends `ready`, `failed`
(with a reason that says what to change), or stays `disabled` / `needs-approval` / `needs-auth`. One slow or
broken server never delays or breaks another, and `start()` returns at once so the REPL prompt is never blocked.
Every server's lifecycle lives here, in one place. What it hands out is plain data (`ServerState`,
`McpToolEntry`, in server_state.py); the session wraps tool entries in Tool adapters, so this layer never imports
mini_claude.tools. Failure texts (a hung stdio server's stderr tail among them) are worded in failures.py.

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
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any

from mini_claude.errors import AuthRequiredError, ConfigError, McpError, McpTimeoutError, TransportError
from mini_claude.mcp.catalog import ToolCatalog
from mini_claude.mcp.client import McpClient
from mini_claude.mcp.config import ServerConfig
from mini_claude.mcp.failures import is_connection_loss, lost_reason, needs_login_text, session_refused
from mini_claude.mcp.healing import Healer
from mini_claude.mcp.list_refresh import LIST_SETTLE_S, ListRefresher
from mini_claude.mcp.naming import ToolNameTable
from mini_claude.mcp.negotiation import EraMemory
from mini_claude.mcp.pinning import PinStore, ReviewCallback, ToolChange, ToolPins
from mini_claude.mcp.protocol import CallToolResult, McpTool, tool_max_timeout_s, tool_timeout_s
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

# runs one tools/call on a ready client: (client, tool, arguments, idle timeout s) -> result
ToolRunner = Callable[[McpClient, str, dict[str, Any], float], Awaitable[CallToolResult]]


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

    # ---- tools -------------------------------------------------------------------------------------------------

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
