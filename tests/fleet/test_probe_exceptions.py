"""Slow is not dead (issue 19): a startup cut short never leaves an exception unretrieved.

Under a loaded machine the startup timeout (a cancellation) could land in the very loop iteration in which the
era probe (`server/discover`) failed with a legacy server's -32601: the probe task was then done, so not
cancelled, and its `_LegacyServer` was never retrieved — asyncio printed `Task exception was never retrieved` with a
traceback on stderr. Here the cancellation is scheduled exactly there, deterministically.
"""

from __future__ import annotations

import asyncio
import gc
from typing import Any

import pytest

from mini_claude.mcp.client import McpClient
from tests.mcp.memory_transport import MemoryTransport, RpcFailure, memory_pair


class _CancelOnDiscoverError(MemoryTransport):
    """Hands the client the probe's error reply and, before the probe task can see it, cancels `victim`."""

    victim: asyncio.Task[Any] | None = None

    async def receive(self) -> Any:
        message = await super().receive()
        if isinstance(message, dict) and "error" in message and self.victim is not None:
            asyncio.get_running_loop().call_soon(self.victim.cancel)
        return message


async def test_a_probe_failing_as_the_startup_is_cancelled_is_retrieved() -> None:
    loop = asyncio.get_running_loop()
    reported: list[dict[str, Any]] = []
    previous = loop.get_exception_handler()
    loop.set_exception_handler(lambda _loop, context: reported.append(context))
    try:
        _, server = memory_pair()
        await server.stop()
        transport = _CancelOnDiscoverError(server="legacy")
        server.transport = transport
        server.start()

        def refuse(_params: Any) -> Any:
            raise RpcFailure(-32601, "Method not found: server/discover")

        server.on("server/discover", refuse)
        client = McpClient(transport, name="legacy")
        connecting = asyncio.ensure_future(client.connect(timeout_s=30))
        transport.victim = connecting
        with pytest.raises(asyncio.CancelledError):
            await connecting
        await client.close()
        await server.stop()
        del connecting, transport.victim
        for _ in range(3):
            await asyncio.sleep(0)
        gc.collect()
        await asyncio.sleep(0)
    finally:
        loop.set_exception_handler(previous)
    assert [(c.get("message"), repr(c.get("exception"))) for c in reported] == []
