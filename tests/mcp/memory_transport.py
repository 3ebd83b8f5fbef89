"""An in-memory `Transport` and a scriptable fake MCP server on its other end, for client unit tests.

    transport, server = memory_pair()
    server.on("tools/list", lambda params: {"tools": [...]})
    client = McpClient(transport, name="mem")
    await client.connect(timeout_s=5)

Handlers get the request params and return the result (sync or async), raise `RpcFailure` for a JSON-RPC error,
or return `NO_REPLY` to never answer. Every message the client sent is kept in `server.received`, every message
the server sent in `server.sent`.

Tests wait on positive signals, never on a sleep: `wait_for(method)` (the client sent it), `wait_replied(id)` (the
server's reply is on the wire), `barrier()` (a server → client ping answered: the client has dispatched everything
sent before it), `wait_closed()` (the client closed the connection: nothing more can arrive).

`RecordingTransport` wraps a real transport and keeps every message in both directions (for peer tests).
"""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import Callable
from typing import Any

from mini_claude.errors import ServerExitedError, TransportError
from mini_claude.mcp.transports.base import Transport

__all__ = ["NO_REPLY", "FakeServer", "MemoryTransport", "RecordingTransport", "RpcFailure", "memory_pair"]

NO_REPLY = object()
_EOF = object()


class RpcFailure(Exception):
    """Raised by a fake-server handler: the reply becomes a JSON-RPC error."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


class MemoryTransport:
    """The client's end. Messages are deep-copied through JSON, like a real wire."""

    def __init__(self, server: str | None = None) -> None:
        self.server = server
        self.to_server: asyncio.Queue[Any] = asyncio.Queue()
        self.to_client: asyncio.Queue[Any] = asyncio.Queue()
        self.started = False
        self.closed = False
        self.start_delay_s = 0.0
        self.start_error: TransportError | None = None
        self._error: TransportError | None = None

    async def start(self) -> None:
        if self.start_delay_s:
            await asyncio.sleep(self.start_delay_s)
        if self.start_error is not None:
            raise self.start_error
        self.started = True

    async def send(self, message: dict[str, Any]) -> None:
        if self._error is not None:
            raise self._error
        self.to_server.put_nowait(json.loads(json.dumps(message)))

    async def receive(self) -> Any:
        if self._error is not None:
            raise self._error
        item = await self.to_client.get()
        if item is _EOF:
            assert self._error is not None
            raise self._error
        return item

    async def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.end(TransportError("connection closed by the client", server=self.server))

    def diagnostics(self) -> str:
        return ""

    def end(self, error: TransportError) -> None:
        """The connection is over: receive() and send() raise `error` from now on."""
        if self._error is None:
            self._error = error
            self.to_client.put_nowait(_EOF)
            self.to_server.put_nowait(_EOF)


class FakeServer:
    """The other end: answers `initialize` like a server (version `version`), then whatever `on()` scripts."""

    def __init__(self, transport: MemoryTransport) -> None:
        self.transport = transport
        self.received: list[dict[str, Any]] = []
        self.sent: list[dict[str, Any]] = []
        self.version: str | None = None  # None: echo the client's version
        self.capabilities: dict[str, Any] = {"tools": {"listChanged": True}}
        self.instructions: str | None = "Use the fake tools."
        self.handlers: dict[str, Callable[[Any], Any]] = {"initialize": self._initialize, "ping": lambda _p: {}}
        self._next_id = 1000
        self._waiting: dict[Any, asyncio.Future[Any]] = {}
        self._task: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._arrived = asyncio.Event()
        self._departed = asyncio.Event()

    def on(self, method: str, handler: Callable[[Any], Any]) -> None:
        self.handlers[method] = handler

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._loop())

    async def stop(self) -> None:
        for task in [self._task, *self._tasks]:
            if task is not None:
                task.cancel()
        for task in [self._task, *self._tasks]:
            if task is not None:
                try:
                    await task
                except (asyncio.CancelledError, Exception):
                    pass

    def _initialize(self, params: Any) -> dict[str, Any]:
        result: dict[str, Any] = {
            "protocolVersion": self.version if self.version is not None else params["protocolVersion"],
            "capabilities": self.capabilities,
            "serverInfo": {"name": "fake", "version": "1.0"},
        }
        if self.instructions is not None:
            result["instructions"] = self.instructions
        return result

    async def send(self, message: dict[str, Any]) -> None:
        self.sent.append(copy.deepcopy(message))
        self._departed.set()
        self.transport.to_client.put_nowait(copy.deepcopy(message))

    async def notify(self, method: str, params: Any = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message)

    async def request(self, method: str, params: Any = None, *, timeout: float = 5.0) -> dict[str, Any]:
        """Send a server → client request; returns the whole response message."""
        request_id = self._next_id
        self._next_id += 1
        future = asyncio.get_running_loop().create_future()
        self._waiting[request_id] = future
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message)
        async with asyncio.timeout(timeout):
            return await future

    def die(self, exit_code: int = 1, stderr: str = "") -> None:
        """Simulate the process ending."""
        self.transport.end(ServerExitedError("server exited", server=self.transport.server, exit_code=exit_code,
                                             stderr_tail=stderr))

    def messages(self, method: str) -> list[dict[str, Any]]:
        return [m for m in self.received if m.get("method") == method]

    async def wait_for(self, method: str, *, count: int = 1, timeout: float = 5.0) -> list[dict[str, Any]]:
        """Wait until the client has sent `count` messages with `method`."""
        async with asyncio.timeout(timeout):
            while len(self.messages(method)) < count:
                self._arrived.clear()
                await self._arrived.wait()
        return self.messages(method)

    async def wait_replied(self, request_id: Any, *, timeout: float = 5.0) -> dict[str, Any]:
        """Wait until the server has sent its reply to the client's request `request_id`; returns the reply."""
        async with asyncio.timeout(timeout):
            while True:
                replies = [m for m in self.sent if "method" not in m and m.get("id") == request_id]
                if replies:
                    return replies[0]
                self._departed.clear()
                await self._departed.wait()

    async def barrier(self, *, timeout: float = 5.0) -> None:
        """Ping the client and wait for its answer: it has dispatched every message the server sent before."""
        reply = await self.request("ping", timeout=timeout)
        assert reply.get("result") == {}, reply

    async def wait_closed(self, *, timeout: float = 5.0) -> None:
        """Wait until the client closed the connection and the server read everything the client sent before."""
        assert self._task is not None, "the fake server was never started"
        async with asyncio.timeout(timeout):
            await asyncio.shield(self._task)

    async def _loop(self) -> None:
        while True:
            message = await self.transport.to_server.get()
            if message is _EOF:
                return
            self.received.append(message)
            self._arrived.set()
            if "method" not in message:
                future = self._waiting.pop(message.get("id"), None)
                if future is not None and not future.done():
                    future.set_result(message)
                continue
            if "id" in message:
                task = asyncio.get_running_loop().create_task(self._serve(message))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)

    async def _serve(self, message: dict[str, Any]) -> None:
        handler = self.handlers.get(message["method"])
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
        if handler is None:
            reply["error"] = {"code": -32601, "message": f"Method not found: {message['method']}"}
        else:
            try:
                result = handler(message.get("params"))
                if asyncio.iscoroutine(result):
                    result = await result
            except RpcFailure as exc:
                reply["error"] = {"code": exc.code, "message": exc.message}
                if exc.data is not None:
                    reply["error"]["data"] = exc.data
            else:
                if result is NO_REPLY:
                    return
                reply["result"] = result
        await self.send(reply)


def memory_pair(server: str | None = "mem") -> tuple[MemoryTransport, FakeServer]:
    """A transport for the client and a started fake server on its other end (call inside a running loop)."""
    transport = MemoryTransport(server=server)
    fake = FakeServer(transport)
    fake.start()
    return transport, fake


class RecordingTransport:
    """A pass-through `Transport` that records what was sent (`sent`) and received (`received`)."""

    def __init__(self, inner: Transport) -> None:
        self.inner = inner
        self.sent: list[dict[str, Any]] = []
        self.received: list[Any] = []

    async def start(self) -> None:
        await self.inner.start()

    async def send(self, message: dict[str, Any]) -> None:
        self.sent.append(copy.deepcopy(message))
        await self.inner.send(message)

    async def receive(self) -> Any:
        message = await self.inner.receive()
        self.received.append(message)
        return message

    async def close(self) -> None:
        await self.inner.close()

    def diagnostics(self) -> str:
        return self.inner.diagnostics()

    def sent_method(self, method: str) -> list[dict[str, Any]]:
        return [m for m in self.sent if m.get("method") == method]

    def responses_to(self, request_id: Any) -> list[dict[str, Any]]:
        return [m for m in self.received if isinstance(m, dict) and "method" not in m and m.get("id") == request_id]
