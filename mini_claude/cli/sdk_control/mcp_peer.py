"""MCP servers that live in the SDK's process (`--mcp-config` entries with `"type": "sdk"`, the SDK's
`create_sdk_mcp_server`), reached through the control channel: each JSON-RPC message we send the server is one
`mcp_message` control request `{"server_name", "message"}`, and the SDK's answer `{"mcp_response": ...}` is the
server's reply.

`SdkMcpPeer` is the peer object of an in-process transport (mcp/transports/inprocess.py's shape: `deliver(message)`
and replies pushed back through the function given to `attach`). Until that transport lands, `PeerTransport` here
is a minimal one over the same shape (the `Transport` protocol of mcp/transports/base.py), used by the tests.

A request whose control request fails (the SDK did not answer, its stdin ended) is failed as that request alone:
`RequestFailed(id, TransportError)`, never a JSON-RPC error object made up here.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

from mini_claude.cli.sdk_control.channel import ControlChannel, ControlError
from mini_claude.errors import TransportError
from mini_claude.mcp.transports.base import RequestFailed

__all__ = ["PeerTransport", "SdkMcpPeer", "sdk_server_names"]

Push = Callable[[dict[str, Any] | RequestFailed], None]


def sdk_server_names(servers: dict[str, Any]) -> list[str]:
    """The names of `mcpServers` entries that live in the SDK's process."""
    return [name for name, entry in servers.items() if isinstance(entry, dict) and entry.get("type") == "sdk"]


class SdkMcpPeer:
    def __init__(self, channel: ControlChannel, server_name: str) -> None:
        self.channel = channel
        self.server_name = server_name
        self._push: Push | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    def attach(self, push: Push) -> None:
        """Where the server's replies go (the transport's inbox)."""
        self._push = push

    async def deliver(self, message: dict[str, Any]) -> None:
        """Send one message to the server; its reply (to a request) is pushed once the SDK answers. Returns at once:
        requests run concurrently."""
        task = asyncio.create_task(self._exchange(message))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _exchange(self, message: dict[str, Any]) -> None:
        is_request = "method" in message and message.get("id") is not None
        try:
            answer = await self.channel.request({"subtype": "mcp_message", "server_name": self.server_name,
                                                 "message": message})
        except ControlError as exc:
            if is_request:
                self._emit(RequestFailed(message["id"], TransportError(str(exc), server=self.server_name)))
            return
        reply = answer.get("mcp_response")
        if is_request and isinstance(reply, dict) and ("result" in reply or "error" in reply):
            self._emit(reply)
        elif is_request:
            self._emit(RequestFailed(message["id"], TransportError("the SDK's answer to an mcp_message carried no "
                                                                   "JSON-RPC reply", server=self.server_name)))

    def _emit(self, item: dict[str, Any] | RequestFailed) -> None:
        if self._push is not None:
            self._push(item)

    async def aclose(self) -> None:
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task


class PeerTransport:
    """A transport over a peer object (`attach`, `deliver`, `aclose`): what is delivered goes to the peer, what it
    pushes back is received."""

    def __init__(self, peer: SdkMcpPeer) -> None:
        self.peer = peer
        self._inbox: asyncio.Queue[dict[str, Any] | RequestFailed | None] = asyncio.Queue()
        self._closed = False

    async def start(self) -> None:
        self.peer.attach(self._inbox.put_nowait)

    async def send(self, message: dict[str, Any]) -> None:
        if self._closed:
            raise TransportError("the connection is closed", server=self.peer.server_name)
        await self.peer.deliver(message)

    async def receive(self) -> Any:
        if self._closed:
            raise TransportError("the connection is closed", server=self.peer.server_name)
        item = await self._inbox.get()
        if item is None:
            raise TransportError("the connection is closed", server=self.peer.server_name)
        return item

    async def close(self) -> None:
        if not self._closed:
            self._closed = True
            await self.peer.aclose()
            self._inbox.put_nowait(None)

    def diagnostics(self) -> str:
        return ""
