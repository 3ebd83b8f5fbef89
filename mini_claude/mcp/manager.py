"""Many MCP servers at once: config → parallel startup → naming → routing → refresh → shutdown.

Every enabled server starts concurrently, each bounded by its own startup timeout; each ends `ready`, `failed`
(with a reason that says what to change), or stays `disabled` / `needs-approval` / `needs-auth`. One slow or
broken server never delays or breaks another, and `start()` returns at once so the REPL prompt is never blocked.
Every server's lifecycle lives here, in one place.
"""

from __future__ import annotations

import asyncio
import contextlib
import fnmatch
import logging
import os
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from mini_claude.errors import McpError, McpTimeoutError, ServerExitedError, TransportError
from mini_claude.mcp.client import CallToolResult, McpClient, McpTool, tool_timeout_s
from mini_claude.mcp.config import ServerConfig
from mini_claude.mcp.naming import ToolNameTable
from mini_claude.mcp.transports.base import Transport
from mini_claude.mcp.transports.factory import AGENT_CREDENTIAL_VARS, build_transport, server_environment

__all__ = [
    "AGENT_CREDENTIAL_VARS",
    "McpManager",
    "ServerState",
    "ServerStatus",
    "server_environment",
    "startup_timeout_s",
]

log = logging.getLogger(__name__)

DEFAULT_STARTUP_TIMEOUT_S = 30.0
SHUTDOWN_TIMEOUT_S = 8.0
REFRESH_DEBOUNCE_S = 0.05

class ServerStatus(StrEnum):
    STARTING = "starting"
    READY = "ready"
    FAILED = "failed"
    DISABLED = "disabled"
    NEEDS_APPROVAL = "needs-approval"
    NEEDS_AUTH = "needs-auth"


@dataclass
class ServerState:
    """What the manager knows of one server; `mcp list` and `/mcp` show it."""

    config: ServerConfig
    status: ServerStatus = ServerStatus.STARTING
    error: str | None = None
    client: McpClient | None = None
    tools: list[McpTool] = field(default_factory=list)
    startup_s: float | None = None

    @property
    def name(self) -> str:
        return self.config.name

    def summary(self) -> str:
        """The detail column of a status line: tool count or the reason."""
        if self.status is ServerStatus.READY:
            n = len(self.tools)
            return f"{n} tool{'s' if n != 1 else ''}"
        return self.error or ""


def startup_timeout_s(env: Mapping[str, str]) -> float:
    """`MCP_TIMEOUT` (milliseconds, as in Claude Code), default 30 s."""
    raw = env.get("MCP_TIMEOUT", "")
    try:
        value = float(raw) / 1000.0
    except ValueError:
        return DEFAULT_STARTUP_TIMEOUT_S
    return value if value > 0 else DEFAULT_STARTUP_TIMEOUT_S


TransportFactory = Callable[[ServerConfig, Mapping[str, str]], Transport]


def default_transport(cfg: ServerConfig, env: Mapping[str, str]) -> Transport:
    """The transport a server's config asks for (no interactive login at startup: see build_transport)."""
    return build_transport(cfg, env)


class McpManager:
    """Owns every configured server's connection.

    Example:

        manager = McpManager(loaded.servers.values(), env=os.environ)
        manager.start()                 # returns at once; servers start in the background
        await manager.wait_started()    # optional: -p mode waits for each to be ready or failed
        tools = manager.tools()         # Tool adapters of every ready server
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
    ) -> None:
        self.env: Mapping[str, str] = dict(os.environ if env is None else env)
        self.startup_timeout = startup_timeout if startup_timeout is not None else startup_timeout_s(self.env)
        self._transport_factory = transport_factory
        self.on_change = on_change
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
        self._table: ToolNameTable | None = None
        self._tools_cache: list[Any] | None = None
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
        for task in [*self._tasks.values(), *self._refresh_tasks]:
            task.cancel()
        pending = [t for t in [*self._tasks.values(), *self._refresh_tasks] if not t.done()]
        if pending:
            await asyncio.wait(pending, timeout=SHUTDOWN_TIMEOUT_S)
        closing = [asyncio.ensure_future(s.client.close()) for s in self.states.values() if s.client is not None]
        closing.extend(t for t in self._close_tasks if not t.done())
        if closing:
            await asyncio.wait(closing, timeout=SHUTDOWN_TIMEOUT_S)
        for state in self.states.values():
            state.client = None

    async def _start_one(self, state: ServerState) -> None:
        cfg = state.config
        began = time.monotonic()
        client: McpClient | None = None
        try:
            transport = self._transport_factory(cfg, self.env)
            client = McpClient(transport, name=cfg.name)
            client.on_notification("notifications/tools/list_changed", lambda _m, _p: self._schedule_refresh(state))
            async with asyncio.timeout(self.startup_timeout):
                await client.connect(timeout_s=self.startup_timeout)
                tools = await client.list_tools()
        except TimeoutError:
            self._fail(state, client, f"did not start within {self.startup_timeout:g}s (raise MCP_TIMEOUT, in ms, "
                                      f"or check `{cfg.command or cfg.url}` in {cfg.source})")
            return
        except McpTimeoutError as exc:
            self._fail(state, client, f"{exc.message} (raise MCP_TIMEOUT, in ms, or check the server in {cfg.source})")
            return
        except McpError as exc:
            self._fail(state, client, _reason(exc, cfg))
            return
        except asyncio.CancelledError:
            if client is not None:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(client.close(), SHUTDOWN_TIMEOUT_S)
            raise
        except Exception as exc:  # one server's surprise must cost that server only
            log.debug("server %s failed to start", cfg.name, exc_info=True)
            self._fail(state, client, f"failed to start: {exc!r}")
            return
        state.client = client
        state.tools = _filter_tools(tools, cfg)
        state.status, state.error = ServerStatus.READY, None
        state.startup_s = time.monotonic() - began
        client.session_closed_callback = lambda err: self._on_server_lost(state, err)  # type: ignore[attr-defined]
        self._changed(state)

    def _fail(self, state: ServerState, client: McpClient | None, reason: str) -> None:
        state.status, state.error = ServerStatus.FAILED, reason
        state.tools = []
        state.client = None
        if client is not None:
            task = asyncio.get_running_loop().create_task(client.close(), name=f"mcp-close-{state.name}")
            self._close_tasks.add(task)
            task.add_done_callback(self._close_tasks.discard)
        self._changed(state)

    def _on_server_lost(self, state: ServerState, error: McpError) -> None:
        if self._closed or state.status is not ServerStatus.READY:
            return
        self._fail(state, state.client, f"connection lost: {_reason(error, state.config)}")

    def _changed(self, state: ServerState) -> None:
        self._table = None
        self._tools_cache = None
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
        state.tools = _filter_tools(tools, state.config)
        self._changed(state)

    def name_table(self) -> ToolNameTable:
        if self._table is None:
            pairs = [(s.name, t.name) for s in self.states.values() if s.status is ServerStatus.READY
                     for t in s.tools]
            self._table = ToolNameTable(pairs)
        return self._table

    def tools(self) -> list[Any]:
        """Tool adapters (mini_claude.tools.mcp_tool.McpToolAdapter) for every ready server's tools."""
        if self._tools_cache is None:
            from mini_claude.tools.mcp_tool import McpToolAdapter

            table = self.name_table()
            adapters = []
            for state in self.states.values():
                if state.status is not ServerStatus.READY:
                    continue
                for tool in state.tools:
                    adapters.append(McpToolAdapter(self, state.name, tool, table.qualified(state.name, tool.name)))
            self._tools_cache = adapters
        return self._tools_cache

    def server_of(self, qualified_name: str) -> str | None:
        entry = self.name_table().lookup(qualified_name)
        return entry[0] if entry else None

    def instructions(self) -> dict[str, str]:
        return {s.name: s.client.instructions for s in self.states.values()
                if s.status is ServerStatus.READY and s.client is not None and s.client.instructions}

    async def call_tool(self, server: str, tool: str, arguments: dict[str, Any], *,
                        on_progress: Callable[[float, float | None, str | None], None] | None = None
                        ) -> CallToolResult:
        state = self.states.get(server)
        if state is None or state.client is None or state.status is not ServerStatus.READY:
            reason = state.error if state is not None and state.error else "not connected"
            raise TransportError(f"not available: {reason}", server=server)
        # the server's `timeout` (ms) wins over MCP_TOOL_TIMEOUT, read from the session env (which includes .env)
        timeout_s = state.config.timeout_ms / 1000.0 if state.config.timeout_ms else tool_timeout_s(self.env)
        return await state.client.call_tool(tool, arguments, timeout_s=timeout_s, on_progress=on_progress)


def _filter_tools(tools: list[McpTool], cfg: ServerConfig) -> list[McpTool]:
    kept = tools
    if cfg.include_tools is not None:
        kept = [t for t in kept if any(fnmatch.fnmatchcase(t.name, p) for p in cfg.include_tools)]
    if cfg.exclude_tools:
        kept = [t for t in kept if not any(fnmatch.fnmatchcase(t.name, p) for p in cfg.exclude_tools)]
    return kept


def _reason(exc: McpError, cfg: ServerConfig) -> str:
    """A failure reason without the "MCP server 'x':" prefix (the status line already names the server)."""
    text = exc.message
    if isinstance(exc, ServerExitedError):
        text = str(exc).removeprefix(f"MCP server {cfg.name!r}: ")
    if isinstance(exc, TransportError) and cfg.type == "stdio" and "command" not in text:
        text += f" (check mcpServers.{cfg.name} in {cfg.source})"
    return text
