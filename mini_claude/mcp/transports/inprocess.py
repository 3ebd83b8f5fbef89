"""`InProcessTransport`: a `Transport` to an MCP server living in this process (or reached through one), with no
pipe, no socket and no JSON text on the way: message dicts go through a queue.

The far end is any `MessagePeer` — `mini_claude.mcp.server.McpServerCore` for servers written in Python beside the
agent, or an object that forwards the dicts over some channel of its own (a server living in another process). The
peer contract is three small protocols:

    peer = ...                                     # a MessagePeer
    session = await peer.open_session(link)        # one connection; `link` is how the peer talks back
    await session.deliver(message)                 # client -> server, one JSON-RPC message (a dict)
    link.push(message)                             # server -> client, one JSON-RPC message (never blocks)
    link.end("why")                                # the server ended this connection (receive() then raises)
    await session.close()                          # the client hung up (idempotent, bounded)

Every `start()` opens a fresh session, so a reconnect gets a new MCP session against the same peer. The two sides
never share a mutable object: each message is copied structurally on its way in both directions (`json_copy`,
which also refuses what a JSON wire could not carry: a non-string key, a set, an object of some class, a value
nested deeper than `MAX_MESSAGE_DEPTH`). A server that pushes such a message ends its connection with a
`TransportError` saying why, as a server writing garbage to a pipe would.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Protocol, runtime_checkable

from mini_claude.errors import TransportError
from mini_claude.mcp.transports.inbox import Inbox
from mini_claude.mcp.transports.json_depth import MAX_MESSAGE_DEPTH

__all__ = ["CLOSE_WAIT_S", "InProcessTransport", "MessagePeer", "NotJsonError", "PeerLink", "PeerSession",
           "json_copy"]

log = logging.getLogger(__name__)

CLOSE_WAIT_S = 5.0  # how long a peer session's close() may take before the transport stops waiting for it


class NotJsonError(TypeError):
    """A value that a JSON wire could not carry (see `json_copy`)."""


def json_copy(value: Any, *, depth_limit: int = MAX_MESSAGE_DEPTH) -> Any:
    """A structural copy of a JSON value: new dicts and lists, the same immutable scalars. Tuples become lists, a
    str/int/float subclass (an enum member) its plain value, as a wire would deliver them. Raises `NotJsonError`
    naming the path of anything else (and of a value nested deeper than `depth_limit`). Iterative, so no nesting
    the limit allows can exhaust the interpreter's stack."""
    if type(value) in _SCALARS:
        return value
    scalars = _SCALARS
    root: list[Any] = [None]
    # (source value, the container its copy goes into, the key there, its depth, the trail of keys to it)
    stack: list[tuple[Any, Any, Any, int, Any]] = [(value, root, 0, 1, None)]
    pop, push = stack.pop, stack.append
    while stack:
        source, parent, slot, depth, trail = pop()
        kind = type(source)
        if kind is dict:
            if depth > depth_limit:
                raise NotJsonError(f"{_path(trail)}: nested too deeply")
            out: dict[str, Any] = {}
            for key, item in source.items():
                if type(key) is not str:
                    raise NotJsonError(f"{_path(trail)}: key {key!r} is not a string")
                out[key] = item
                if type(item) not in scalars:
                    push((item, out, key, depth + 1, (trail, key)))
            parent[slot] = out
        elif kind is list or kind is tuple:
            if depth > depth_limit:
                raise NotJsonError(f"{_path(trail)}: nested too deeply")
            items = list(source)
            for index, item in enumerate(items):
                if type(item) not in scalars:
                    push((item, items, index, depth + 1, (trail, index)))
            parent[slot] = items
        elif isinstance(source, str):
            parent[slot] = str.__str__(source)
        elif isinstance(source, int | float):
            parent[slot] = float(source) if isinstance(source, float) else int(source)
        else:
            raise NotJsonError(f"{_path(trail)}: {kind.__name__} is not a JSON value")
    return root[0]


def _path(trail: Any) -> str:
    """`$.a[0].b` for the trail `(((None, "a"), 0), "b")`."""
    keys: list[str | int] = []
    while trail is not None:
        trail, key = trail
        keys.append(key)
    return "$" + "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in reversed(keys))


_SCALARS = (str, int, float, bool, type(None))


@runtime_checkable
class PeerLink(Protocol):
    """How a peer session talks back to its transport. Both methods are plain calls that never block."""

    def push(self, message: dict[str, Any]) -> None:
        """One server -> client JSON-RPC message (copied by the link; dropped once the connection is over)."""

    def end(self, reason: str) -> None:
        """The server side ended this connection; the client's `receive()` raises TransportError(reason)."""


class PeerSession(Protocol):
    """One connection's server side, as the transport sees it."""

    async def deliver(self, message: dict[str, Any]) -> None:
        """One client -> server JSON-RPC message (already a private copy). Should return promptly: long work
        (a tool call) runs in a task of the peer's own."""

    async def close(self) -> None:
        """The client closed the connection: stop what runs for it. Idempotent."""


@runtime_checkable
class MessagePeer(Protocol):
    """Something an `InProcessTransport` can open MCP connections to."""

    async def open_session(self, link: PeerLink) -> PeerSession:
        """A new connection whose server -> client messages go to `link`. Raises TransportError when refused."""
        ...


class _Link:
    """The transport's `PeerLink`: server messages into the inbox `receive()` reads."""

    def __init__(self, inbox: Inbox, server: str | None) -> None:
        self._inbox = inbox
        self._server = server

    def push(self, message: dict[str, Any]) -> None:
        if self._inbox.error is not None:
            return
        try:
            copied = json_copy(message)
        except NotJsonError as exc:
            self.end(f"the in-process server sent a message that is not JSON ({exc})")
            return
        self._inbox.put(copied)

    def end(self, reason: str) -> None:
        self._inbox.end(TransportError(reason, server=self._server))


class InProcessTransport:
    """A `Transport` whose server is a `MessagePeer` in this process.

        transport = InProcessTransport(core, server="calc")   # core: an McpServerCore
        client = McpClient(transport, name="calc")
        await client.connect(timeout_s=5)
    """

    def __init__(self, peer: MessagePeer, *, server: str | None = None) -> None:
        if not isinstance(peer, MessagePeer):
            raise TransportError(f"{type(peer).__name__} is not an MCP server object (it has no open_session)",
                                 server=server)
        self.peer = peer
        self.server = server
        self._inbox = Inbox()
        self._session: PeerSession | None = None
        self._closed = False
        self._close_task: asyncio.Future[None] | None = None

    async def start(self) -> None:
        if self._closed:
            raise TransportError("the connection was closed", server=self.server)
        if self._session is not None:
            raise TransportError("start() called twice", server=self.server)
        self._session = await self.peer.open_session(_Link(self._inbox, self.server))

    async def send(self, message: dict[str, Any]) -> None:
        if self._inbox.error is not None:
            raise self._inbox.error.with_traceback(None)
        if self._session is None:
            raise TransportError("send() before start()", server=self.server)
        try:
            copied = json_copy(message)
        except NotJsonError as exc:
            raise TransportError(f"cannot send a message that is not JSON ({exc})", server=self.server) from None
        await self._session.deliver(copied)

    async def receive(self) -> Any:
        return await self._inbox.receive()

    async def close(self) -> None:
        """End the connection (receive() raises from now on) and close the peer's session, bounded; idempotent:
        a second call waits for the first one's close."""
        if not self._closed:
            self._closed = True
            self._inbox.end(TransportError("connection closed by the client", server=self.server))
            self._inbox.clear()
            if self._session is not None:
                self._close_task = asyncio.ensure_future(self._session.close())
        task = self._close_task
        if task is None:
            return
        done, _ = await asyncio.wait({task}, timeout=CLOSE_WAIT_S)
        if not done:
            log.warning("%s: the in-process server took over %gs to close its session", self.server, CLOSE_WAIT_S)
        elif not task.cancelled() and task.exception() is not None:
            log.warning("%s: the in-process server failed closing its session: %s", self.server, task.exception())

    def diagnostics(self) -> str:
        return self._inbox.diagnostics()
