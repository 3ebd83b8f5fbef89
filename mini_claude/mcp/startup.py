"""Connecting one server: a new transport and client, handshake and first tool listing, within its startup timeout.

The manager (manager.py) and its healing (healing.py) call `Connector.connect` for every start, restart and
reconnect; it returns the connected client and its listed tools, or raises `StartFailed` with the status the
server gets and a reason that says what to change (failures.py words it).

Slow is not dead: the startup timeout (`MCP_TIMEOUT`) measures the server, not our own queue. Its clock starts once
the process is spawned (the transport started), and when it runs out while the server is still making progress —
its stdout or stderr produced bytes, or its process used CPU time, in the last second of the window
(`SupportsProgress`, `PROGRESS_LOOK_S`) — it is extended by another timeout, up to `STARTUP_CEILING_FACTOR` times
the timeout in all. So sixty servers starting
together on a busy machine are not declared failed for waiting in the same run queue, while a server that is
silent and idle (hung on a lock, waiting for a socket) still fails after one timeout, with its stderr tail.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Protocol, TypeVar, runtime_checkable

from mini_claude.errors import McpTimeoutError, TransportError
from mini_claude.mcp.client import McpClient
from mini_claude.mcp.config import ServerConfig
from mini_claude.mcp.connect import build_transport
from mini_claude.mcp.failures import start_failure
from mini_claude.mcp.negotiation import EraMemory
from mini_claude.mcp.pinning import server_key
from mini_claude.mcp.protocol import McpTool
from mini_claude.mcp.server_state import ServerStatus
from mini_claude.mcp.transports.base import SupportsStderr, Transport

__all__ = ["STARTUP_CEILING_FACTOR", "ClientReady", "ClientSetup", "Connector", "StartFailed", "SupportsProgress",
           "TransportFactory", "default_transport"]

log = logging.getLogger(__name__)

SHUTDOWN_TIMEOUT_S = 8.0
STARTUP_CEILING_FACTOR = 4.0  # a server still making progress may take up to this many startup timeouts
PROGRESS_LOOK_S = 1.0  # progress counts when seen in this last part of a startup window

T = TypeVar("T")
TransportFactory = Callable[[ServerConfig, Mapping[str, str]], Transport]
# called with each new client before it connects (startup and every reconnect): register request handlers
# (sampling/createMessage, elicitation/create, roots/list) and notification callbacks there
ClientSetup = Callable[[ServerConfig, McpClient], None]
# awaited with each client once connected, inside the startup timeout (logging/setLevel and the like)
ClientReady = Callable[[ServerConfig, McpClient], Awaitable[None]]


@runtime_checkable
class SupportsProgress(Protocol):
    """A transport that can tell whether its server did anything lately (stdio: bytes read, CPU time used)."""

    def progress(self) -> int:
        """A number that grows whenever the server makes progress; compare two readings."""
        ...


class StartFailed(Exception):
    """Connecting failed; the status the server gets and the reason shown."""

    def __init__(self, status: ServerStatus, reason: str, *, transient: bool = False) -> None:
        self.status = status
        self.reason = reason
        self.transient = transient  # the server could not be reached (down, restarting): worth another try
        super().__init__(reason)


def default_transport(cfg: ServerConfig, env: Mapping[str, str]) -> Transport:
    """The transport a server's config asks for (no interactive login at startup: see build_transport)."""
    return build_transport(cfg, env)


class Connector:
    """Builds and connects clients for the manager. `on_list_changed(cfg)` is called for each
    `notifications/tools/list_changed` a client receives, as it is read (before any later message is handled)."""

    def __init__(self, *, env: Mapping[str, str], timeout_s: float, factory: TransportFactory,
                 on_list_changed: Callable[[ServerConfig, McpClient], None],
                 close_later: Callable[[str, McpClient], None],
                 era_memory: EraMemory | None = None, client_setup: ClientSetup | None = None,
                 client_ready: ClientReady | None = None) -> None:
        self.env = env
        self.timeout_s = timeout_s
        self.factory = factory
        self.on_list_changed = on_list_changed
        self.close_later = close_later
        self.era_memory = era_memory
        self.client_setup = client_setup
        self.client_ready = client_ready

    async def connect(self, cfg: ServerConfig) -> tuple[McpClient, list[McpTool]]:
        """A new transport and client, connected and listed within the startup timeout; raises StartFailed."""
        transport: Transport | None = None
        client: McpClient | None = None
        ceiling = self.timeout_s * STARTUP_CEILING_FACTOR
        try:
            transport = self.factory(cfg, self.env)
            client = McpClient(transport, name=cfg.name, protocol_version=cfg.protocol_version,
                               era_memory=self.era_memory, era_key=server_key(cfg))
            bound = client
            client.on_notification("notifications/tools/list_changed",
                                   lambda _m, _p: self.on_list_changed(cfg, bound))
            if self.client_setup is not None:
                self.client_setup(cfg, client)
            tools = await within_startup(self._handshake(cfg, client, ceiling), transport, self.timeout_s, ceiling)
        except asyncio.CancelledError:
            if client is not None:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(client.close(), SHUTDOWN_TIMEOUT_S)
            raise
        except BaseException as exc:
            if client is not None:
                self.close_later(cfg.name, client)
            if not isinstance(exc, Exception):
                raise
            # what the server said before it hung or died is usually the real cause ("waiting for database…")
            diagnostics = transport.diagnostics() if transport is not None else ""
            stderr = transport.stderr_text() if isinstance(transport, SupportsStderr) else ""
            # a timeout is the server idle (no output, no CPU) for a whole MCP_TIMEOUT: that is what is named
            status, reason = start_failure(exc, cfg, self.timeout_s, diagnostics, stderr)
            transient = isinstance(exc, TimeoutError | McpTimeoutError | TransportError)
            raise StartFailed(status, reason, transient=transient) from None
        return client, tools

    async def _handshake(self, cfg: ServerConfig, client: McpClient, ceiling: float) -> list[McpTool]:
        await client.connect(timeout_s=ceiling)
        if self.client_ready is not None:
            await self.client_ready(cfg, client)
        return await client.list_tools()


class _SilentTimeout(TimeoutError):
    """The startup timeout ran out with the server idle (no bytes, no CPU) since the last look."""

    def __init__(self, waited_s: float) -> None:
        self.waited_s = waited_s
        super().__init__(f"no progress within {waited_s:g}s")


async def within_startup(work: Awaitable[T], transport: Transport, timeout_s: float, ceiling_s: float) -> T:
    """Await `work` for `timeout_s`, extended by another `timeout_s` each time the server made progress in the last
    one (see the module docstring), never past `ceiling_s`. Raises TimeoutError (a `_SilentTimeout`) when time
    is up."""
    task = asyncio.ensure_future(work)
    loop = asyncio.get_running_loop()
    # progress is judged over the last part of each window: a server that booted (CPU, a banner on stderr) and then
    # went idle is silent by the deadline, and fails after one timeout, not two
    look_s = min(PROGRESS_LOOK_S, timeout_s / 4)
    try:
        began = loop.time()
        deadline = began + timeout_s
        while True:
            done, _ = await asyncio.wait({task}, timeout=max(0.0, deadline - look_s - loop.time()))
            if done:
                return task.result()
            mark = transport.progress() if isinstance(transport, SupportsProgress) else None
            done, _ = await asyncio.wait({task}, timeout=max(0.0, deadline - loop.time()))
            if done:
                return task.result()
            now = loop.time()
            seen = transport.progress() if isinstance(transport, SupportsProgress) else None
            if seen is not None and seen != mark and now - began < ceiling_s:
                log.debug("startup timeout reached with the server still working: waiting %gs more", timeout_s)
                deadline = min(now + timeout_s, began + ceiling_s)
                continue
            raise _SilentTimeout(round(now - began))
    finally:
        if not task.done():
            task.cancel()
            await asyncio.wait({task})
        elif not task.cancelled():
            task.exception()  # seen here, or raised by result() above
