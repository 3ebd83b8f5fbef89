"""The `Transport` protocol: start, send one message, receive messages, close.

A transport turns bytes into decoded JSON values and back. It does not interpret them (the session does), except
that a transport may drop input that is not JSON at all, keeping it for diagnostics.

`receive()` returns the next decoded JSON value (normally a dict; possibly a list or scalar, which the session
rejects). When the connection is over it raises `TransportError` (or `ServerExitedError` for a process): every
later call raises again, immediately. `close()` is idempotent and never hangs past its own bounded timeouts.

Optional capabilities are declared, not probed: a transport that can do more than the five methods implements one of
the small runtime-checkable protocols below, and callers ask `isinstance(transport, SupportsSessionId)` (as httpx
does for its transports), never `getattr(transport, "session_id", None)`.

A transport that loses the way to one request's answer (an HTTP response stream cut before the reply, a reply over
the size cap) returns a `RequestFailed(request_id, StreamLostError(...))` (or `MessageTooLargeError`) from
`receive()` in place of that reply: a typed value the
JSON-RPC session fails that one pending request with. It is never dressed up as a JSON-RPC error object, which a
server could forge.

Example:

    transport = StdioTransport(StdioParams(command="python", args=["server.py"]), server="demo")
    await transport.start()
    await transport.send({"jsonrpc": "2.0", "id": 1, "method": "ping"})
    reply = await transport.receive()
    await transport.close()
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from mini_claude.errors import McpError

__all__ = [
    "HttpAuth",
    "MessageHeaders",
    "RequestFailed",
    "SupportsAbandon",
    "SupportsMessageHeaders",
    "SupportsProtocolVersion",
    "SupportsSessionId",
    "SupportsStderr",
    "SupportsStderrSink",
    "Transport",
]

# Extra HTTP headers for one outgoing JSON-RPC message (SEP-2243's Mcp-Method / Mcp-Name / Mcp-Param-*).
MessageHeaders = Callable[[dict[str, Any]], Mapping[str, str]]


@dataclass(frozen=True)
class RequestFailed:
    """What `receive()` returns in place of the reply to `request_id` when the transport lost the way to it."""

    request_id: Any
    error: McpError  # StreamLostError, MessageTooLargeError


class Transport(Protocol):
    async def start(self) -> None:
        """Open the connection (spawn the process, ...). Raises TransportError when that fails."""

    async def send(self, message: dict[str, Any]) -> None:
        """Send one JSON-RPC message. Raises TransportError when the connection is gone."""

    async def receive(self) -> Any:
        """The next decoded JSON value from the peer. Raises TransportError when the connection is over."""

    async def close(self) -> None:
        """Close and release everything (reap processes). Idempotent; bounded in time."""

    def diagnostics(self) -> str:
        """Recent stderr / non-JSON output of the peer, for error messages (may be empty)."""


@runtime_checkable
class SupportsSessionId(Protocol):
    """A transport with a server-assigned session (Streamable HTTP's `Mcp-Session-Id`)."""

    @property
    def session_id(self) -> str | None:
        """The session id the server gave us, None before it gave one (or when it gives none)."""


@runtime_checkable
class SupportsStderr(Protocol):
    """A transport whose peer has a stderr of its own (a child process), kept apart from its other output."""

    def stderr_text(self) -> str:
        """The tail of the peer's stderr (may be empty)."""


@runtime_checkable
class SupportsStderrSink(Protocol):
    """A transport that hands its peer's stderr, chunk by chunk as it comes, to `on_stderr` (the server's log keeps
    it from the first byte); `on_stderr(b"")` says the stderr ended. Set it before `start`."""

    on_stderr: Callable[[bytes], None] | None


@runtime_checkable
class SupportsProtocolVersion(Protocol):
    """A transport that must send the negotiated protocol version with every message (`MCP-Protocol-Version`)."""

    def set_protocol_version(self, version: str | None) -> None:
        """Send `version` from now on (None: send none)."""


@runtime_checkable
class SupportsMessageHeaders(Protocol):
    """A transport that can send extra headers per message (SEP-2243). Set `message_headers` to a producer."""

    message_headers: MessageHeaders | None


@runtime_checkable
class SupportsAbandon(Protocol):
    """A transport that holds per-request resources (a response stream) the owner can release early."""

    def abandon(self, request_id: Any) -> None:
        """The owner gave up on `request_id`: stop reading its response stream; deliver nothing for it."""


class HttpAuth(Protocol):
    """What an HTTP transport (Streamable HTTP, legacy SSE) asks of an authorization provider.

    The transport calls `request_headers()` before every HTTP request it makes to the server (POST, GET, DELETE)
    and merges the result into that request's headers. When the server answers 401 or 403 (or 400 carrying a
    `DPoP-Nonce` header), the transport calls `handle_challenge()`; True means "retry this same request once more
    with fresh `request_headers()`" (the transport bounds retries per request), False means "not something
    authorization can fix" and the transport raises its usual HttpStatusError. The provider raises
    `AuthRequiredError` when a login by the user is needed and cannot happen now, `AuthError` when authorization
    failed; the transport lets both propagate (they fail the request that met them).
    Implemented by `mini_claude.mcp.auth.OAuthProvider`.
    """

    async def request_headers(self, method: str, url: str) -> dict[str, str]:
        """Headers for one request: `Authorization` (and a `DPoP` proof) when a token is held, else {}."""

    async def handle_challenge(self, method: str, url: str, status: int, headers: Mapping[str, str]) -> bool:
        """React to a 401/403 (or a DPoP nonce demand): get, refresh or step up a token. True: retry."""
