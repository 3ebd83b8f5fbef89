"""MCP servers that live in the SDK's process (`--mcp-config` entries with `"type": "sdk"`, the SDK's
`create_sdk_mcp_server`), reached through the control channel: each JSON-RPC message we send the server is one
`mcp_message` control request `{"server_name", "message"}`, and the SDK's answer `{"mcp_response": ...}` is the
server's reply.

`SdkMcpPeer` is a `MessagePeer` of mcp/transports/inprocess.py, so the session's manager reaches it through an
`InProcessTransport` like any in-process server: `open_session(link)` gives a session whose `deliver(message)` sends
one message and returns at once (the exchange runs in a task), replies go back through `link.push(reply)`, and
`link.end(reason)` ends the connection once the SDK's stdin has ended (every request still waiting then fails with
that reason).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, Protocol

from mini_claude.cli.sdk_control.channel import ControlChannel, ControlError
from mini_claude.errors import TransportError

__all__ = ["SdkMcpPeer", "SdkMcpSession", "sdk_server_names"]


def sdk_server_names(servers: dict[str, Any]) -> list[str]:
    """The names of `mcpServers` entries that live in the SDK's process."""
    return [name for name, entry in servers.items() if isinstance(entry, dict) and entry.get("type") == "sdk"]


class Link(Protocol):
    """How a session talks back to its transport (inprocess.py's `PeerLink`)."""

    def push(self, message: dict[str, Any]) -> None: ...

    def end(self, reason: str) -> None: ...


class SdkMcpPeer:
    """One server of the SDK's process, by name."""

    def __init__(self, channel: ControlChannel, server_name: str) -> None:
        self.channel = channel
        self.server_name = server_name

    async def open_session(self, link: Link) -> SdkMcpSession:
        if self.channel.closed:
            raise TransportError("the SDK's input (stdin) has ended", server=self.server_name)
        return SdkMcpSession(self, link)


class SdkMcpSession:
    def __init__(self, peer: SdkMcpPeer, link: Link) -> None:
        self.peer = peer
        self.link = link
        self._tasks: set[asyncio.Task[None]] = set()

    async def deliver(self, message: dict[str, Any]) -> None:
        task = asyncio.create_task(self._exchange(message))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _exchange(self, message: dict[str, Any]) -> None:
        peer = self.peer
        try:
            answer = await peer.channel.request({"subtype": "mcp_message", "server_name": peer.server_name,
                                                 "message": message})
        except ControlError as exc:
            if peer.channel.closed:  # no answer can come any more: the connection is over
                self.link.end(str(exc))
            return  # one request not answered in time: the client's own timeout tells its caller
        reply = answer.get("mcp_response")
        if "method" in message and message.get("id") is not None and isinstance(reply, dict) \
                and ("result" in reply or "error" in reply):
            self.link.push(reply)

    async def close(self) -> None:
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
