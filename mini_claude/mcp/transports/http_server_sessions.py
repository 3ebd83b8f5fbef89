"""The sessions of the Streamable HTTP server (http_server.py): one `HttpSession` per `Mcp-Session-Id`, each with
the peer's session (a `ServerSession` of `McpServerCore`) and the streams its messages go out on.

Routing. Every server → client message is `push`ed to the session's link; which HTTP response carries it is read
from a context variable that the POST handler sets while it hands the client's request to the peer. The peer
serves each request in a task of its own, and a task inherits the context it was created in, so the request's
reply, its progress and log notifications, and the requests its tool makes of the client (`elicitation/create`)
all reach that POST's stream. A message pushed outside any request (a `list_changed`), or whose POST stream is
gone, goes to the session's standalone GET stream when the client opened one; otherwise it is dropped (logged).

Bounds: at most `MAX_SESSIONS` sessions; a session idle (no request, no open stream) for `IDLE_TIMEOUT_S` is
closed (its id then answers 404, as after DELETE); a stream holds at most `STREAM_QUEUE_MAX` unsent messages
(a client that stops reading loses its stream, not the server its memory).
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import secrets
import time
from typing import Any

from mini_claude.mcp.transports.inprocess import MessagePeer, NotJsonError, PeerSession, json_copy

__all__ = ["IDLE_TIMEOUT_S", "MAX_SESSIONS", "STREAM_QUEUE_MAX", "HttpSession", "OutStream", "SessionTable",
           "route"]

log = logging.getLogger(__name__)

MAX_SESSIONS = 64
IDLE_TIMEOUT_S = 3600.0
STREAM_QUEUE_MAX = 10_000


class OutStream:
    """Messages waiting to be written on one HTTP response (a POST's reply stream or the standalone GET stream)."""

    def __init__(self, request_id: Any = None) -> None:
        self.request_id = request_id  # the POST's request: its reply ends the stream (None: the GET stream)
        self.queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.ended = asyncio.Event()  # set by close(): the writer of the response stops at once

    @property
    def closed(self) -> bool:
        return self.ended.is_set()

    def close(self) -> None:
        self.ended.set()

    def put(self, message: dict[str, Any]) -> bool:
        """Queue `message`; False when the stream is closed or full (it is then closed)."""
        if self.closed:
            return False
        if self.queue.qsize() >= STREAM_QUEUE_MAX:
            log.warning("an HTTP stream of mcp serve was closed: its client read none of %d messages",
                        STREAM_QUEUE_MAX)
            self.close()
            return False
        self.queue.put_nowait(message)
        return True

    def is_final(self, message: dict[str, Any]) -> bool:
        """Whether `message` is the reply that ends this POST's stream."""
        return (self.request_id is not None and "method" not in message and "id" in message
                and _same_id(message["id"], self.request_id))


route: contextvars.ContextVar[OutStream | None] = contextvars.ContextVar("mcp_http_route", default=None)


class _Link:
    """The peer session's `PeerLink`: each message to the stream of the request it belongs to (module docstring)."""

    def __init__(self, owner: HttpSession) -> None:
        self._owner = owner

    def push(self, message: dict[str, Any]) -> None:
        try:
            copied = json_copy(message)
        except NotJsonError as exc:
            log.error("mcp serve: dropped a message that is not JSON (%s)", exc)
            return
        stream = route.get()
        if stream is not None and stream in self._owner.posts and stream.put(copied):
            return
        standalone = self._owner.standalone
        if standalone is not None and standalone.put(copied):
            return
        log.debug("mcp serve: no open stream for a %s message; dropped",
                  copied.get("method", "reply"))

    def end(self, reason: str) -> None:
        log.info("mcp serve: session ended: %s", reason)
        self._owner.ended = True
        for stream in (*self._owner.posts, self._owner.standalone):
            if stream is not None:
                stream.close()


class HttpSession:
    """One MCP session of the HTTP server: its id, the peer's side of it and its open streams."""

    def __init__(self, session_id: str) -> None:
        self.id = session_id
        self.peer: PeerSession | None = None
        self.link = _Link(self)
        self.posts: set[OutStream] = set()
        self.standalone: OutStream | None = None
        self.protocol_version: str | None = None
        self.ended = False
        self.last_used = time.monotonic()

    def touch(self) -> None:
        self.last_used = time.monotonic()

    def idle(self, now: float) -> bool:
        return not self.posts and self.standalone is None and now - self.last_used > IDLE_TIMEOUT_S

    async def close(self) -> None:
        self.ended = True
        for stream in (*self.posts, self.standalone):
            if stream is not None:
                stream.close()
        if self.peer is not None:
            await self.peer.close()


class SessionTable:
    """The open sessions by id (bounded: see the module docstring)."""

    def __init__(self, peer: MessagePeer) -> None:
        self._peer = peer
        self._sessions: dict[str, HttpSession] = {}

    def get(self, session_id: str) -> HttpSession | None:
        session = self._sessions.get(session_id)
        if session is not None and session.ended:
            return None
        return session

    async def open(self) -> HttpSession | None:
        """A new session, or None when `MAX_SESSIONS` are open and none of them is idle."""
        await self.sweep()
        if len(self._sessions) >= MAX_SESSIONS:
            return None
        session = HttpSession(secrets.token_urlsafe(24))  # visible ASCII, unguessable
        session.peer = await self._peer.open_session(session.link)
        self._sessions[session.id] = session
        return session

    async def remove(self, session: HttpSession) -> None:
        self._sessions.pop(session.id, None)
        await session.close()

    async def sweep(self) -> None:
        """Close the sessions that ended or sat idle too long."""
        now = time.monotonic()
        for session in list(self._sessions.values()):
            if session.ended or session.idle(now):
                await self.remove(session)

    async def close_all(self) -> None:
        sessions = list(self._sessions.values())
        self._sessions.clear()
        if sessions:
            await asyncio.gather(*(session.close() for session in sessions), return_exceptions=True)

    def __len__(self) -> int:
        return len(self._sessions)


def _same_id(a: Any, b: Any) -> bool:
    """JSON-RPC ids compare by type and value (1 and "1" differ; true is no id)."""
    return type(a) is type(b) and a == b and not isinstance(a, bool)
