"""The `Transport` protocol: start, send one message, receive messages, close.

A transport turns bytes into decoded JSON values and back. It does not interpret them (the session does), except
that a transport may drop input that is not JSON at all, keeping it for diagnostics.

`receive()` returns the next decoded JSON value (normally a dict; possibly a list or scalar, which the session
rejects). When the connection is over it raises `TransportError` (or `ServerExitedError` for a process): every
later call raises again, immediately. `close()` is idempotent and never hangs past its own bounded timeouts.

Example:

    transport = StdioTransport(StdioParams(command="python", args=["server.py"]), server="demo")
    await transport.start()
    await transport.send({"jsonrpc": "2.0", "id": 1, "method": "ping"})
    reply = await transport.receive()
    await transport.close()
"""

from __future__ import annotations

from typing import Any, Protocol

__all__ = ["Transport"]


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
