"""Server → client requests of one connection (`elicitation/create`, `sampling/createMessage`, `roots/list`, ...):
ids, pending futures and timeouts.

Each request's future is registered before the request is pushed and removed in `finally`; `fail_all()` (the
connection closed) fails every one at once, so a tool waiting for the client never waits for a connection that is
gone. A caller that is cancelled while waiting (its tool call was cancelled) tells the client with
`notifications/cancelled`, which stops the client's handler (a question to the user, a model request).
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from typing import Any

from mini_claude.errors import JsonRpcError, McpError, McpTimeoutError, ProtocolError, TransportError

__all__ = ["Outbound"]


class Outbound:
    """The pending server → client requests of one connection; `push` sends one message to the client."""

    def __init__(self, push: Callable[[dict[str, Any]], None], *, server: str) -> None:
        self._push = push
        self._server = server
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._closed: McpError | None = None

    async def request(self, method: str, params: dict[str, Any] | None, *, timeout_s: float) -> Any:
        """Send `method` to the client and return its result; JsonRpcError when the client refuses,
        McpTimeoutError after `timeout_s`, TransportError when the connection ends first."""
        if self._closed is not None:
            raise self._closed.with_traceback(None)
        request_id = next(self._ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        answered = False
        try:
            self._push(message)
            async with asyncio.timeout(timeout_s):
                reply = await future
            answered = True
        except TimeoutError:
            raise McpTimeoutError(method, timeout_s, server=self._server) from None
        finally:
            self._pending.pop(request_id, None)
            if not answered and self._closed is None:
                self._push({"jsonrpc": "2.0", "method": "notifications/cancelled",
                            "params": {"requestId": request_id, "reason": "the server stopped waiting"}})
        error = reply.get("error")
        if error is not None:
            if not isinstance(error, dict):
                raise ProtocolError(f"{method}: the client's error is not an object", server=self._server)
            code = error.get("code")
            raise JsonRpcError(code if isinstance(code, int) else -32603, str(error.get("message", "")),
                               error.get("data"), server=self._server)
        return reply.get("result")

    def resolve(self, message: dict[str, Any]) -> bool:
        """A client's reply: completes its request (False when no request of ours has that id)."""
        request_id = message.get("id")
        future = self._pending.get(request_id) if type(request_id) is int else None  # not `true`
        if future is None or future.done():
            return False
        future.set_result(message)
        return True

    def fail_all(self, error: McpError) -> None:
        """The connection is over: every pending request (and every later one) fails with `error`."""
        if self._closed is None:
            self._closed = error
        for future in self._pending.values():
            if not future.done():
                future.set_exception(error)
        self._pending.clear()

    @staticmethod
    def closed_error(server: str) -> TransportError:
        return TransportError("the client closed the connection", server=server)
