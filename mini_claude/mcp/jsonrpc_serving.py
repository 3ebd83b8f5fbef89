"""The serving half of a JSON-RPC 2.0 session: the peer's requests and notifications, and our answers to them.

`JsonRpcServing` is the base of `jsonrpc.JsonRpcSession` (which adds our own requests and the reader). It owns
the handler tables, one task per peer request (`ping` is always answered), the reply each handler's result or
error becomes, the peer's `notifications/cancelled` for a request we still serve (that handler is cancelled and
no response is sent), a refused request's error reply, and the JSON-RPC error codes. Invariants:

* A handler that raises `JsonRpcError` answers with that error; any other exception is logged and answered with
  INTERNAL_ERROR; a result that is not JSON becomes an INTERNAL_ERROR reply saying so.
* Ids 1 and "1" are kept apart (`_id_key`); a peer request whose id cannot be matched is still served.
* Notification handlers may be plain functions or coroutines; a failing one is logged and the session goes on.
* On close every handler task still running is cancelled and given `HANDLER_CANCEL_WAIT_S` to unwind.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from mini_claude.errors import JsonRpcError, McpError
from mini_claude.mcp import trace
from mini_claude.mcp.transports.base import Transport
from mini_claude.mcp.transports.json_depth import RefusedMessage

__all__ = [
    "HANDLER_CANCEL_WAIT_S",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "JsonRpcServing",
    "NotificationHandler",
    "RequestHandler",
]

# the session's one logger: records keep the name they had before this half was split out of jsonrpc.py
log = logging.getLogger("mini_claude.mcp.jsonrpc")

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

HANDLER_CANCEL_WAIT_S = 1.0  # on close: how long cancelled server-request handlers get to unwind

RequestHandler = Callable[[Any], Awaitable[Any]]
NotificationHandler = Callable[[str, Any], Any]


class JsonRpcServing:
    """Serves a peer's requests and notifications over `transport` (see the module docstring)."""

    def __init__(self, transport: Transport, *, name: str | None = None) -> None:
        self.transport = transport
        self.name = name
        self._request_handlers: dict[str, RequestHandler] = {"ping": _pong}
        self._notification_handlers: dict[str, NotificationHandler] = {}
        self._fallback_notification: NotificationHandler | None = None
        self._handler_tasks: set[asyncio.Task[None]] = set()
        self._serving: dict[tuple[bool, Any], asyncio.Task[None]] = {}  # peer request id -> its handler task
        self._trace = trace.active()  # --mcp-trace: every message both ways (mini_claude.mcp.trace)

    # ---- setup -------------------------------------------------------------------------------------------------

    def set_request_handler(self, method: str, handler: RequestHandler) -> None:
        """Serve requests from the peer. The handler returns the result or raises `JsonRpcError`."""
        self._request_handlers[method] = handler

    def set_notification_handler(self, method: str, handler: NotificationHandler) -> None:
        self._notification_handlers[method] = handler

    def set_fallback_notification_handler(self, handler: NotificationHandler) -> None:
        """Receives every notification that has no handler of its own."""
        self._fallback_notification = handler

    # ---- the peer's messages -----------------------------------------------------------------------------------

    def _start_serving(self, request_id: Any, method: str, params: Any) -> None:
        """A peer request: serve it in a task of its own, findable by its id (for the peer's cancellation)."""
        task = asyncio.get_running_loop().create_task(self._serve(request_id, method, params))
        self._handler_tasks.add(task)
        task.add_done_callback(self._handler_tasks.discard)
        key = _id_key(request_id)
        if key is not None:
            self._serving[key] = task
            task.add_done_callback(functools.partial(self._served, key))

    def _served(self, key: tuple[bool, Any], done: asyncio.Task[None]) -> None:
        """A handler task ended: forget it, unless its id is already being served by a newer request."""
        if self._serving.get(key) is done:
            del self._serving[key]

    def _on_peer_cancelled(self, params: Any) -> None:
        key = _id_key(params.get("requestId")) if isinstance(params, dict) else None
        task = self._serving.pop(key, None) if key is not None else None
        if task is not None and not task.done():
            log.debug("%s: peer cancelled its request %.50r; stopping its handler", self.name, params["requestId"])
            task.cancel()

    def _refuse_request(self, refused: RefusedMessage) -> None:
        """A peer request or notification the transport would not decode in full: a request gets an error reply,
        a notification is logged and dropped."""
        request_id = refused.request_id
        if _id_key(request_id) is None:
            log.warning("%s: dropped a %.100s notification: %s", self.name, refused.method, refused.reason)
            return
        log.warning("%s: refused a %.100s request: %s", self.name, refused.method, refused.reason)
        reply = {"jsonrpc": "2.0", "id": request_id, "error": {"code": INVALID_REQUEST, "message": refused.reason}}
        task = asyncio.get_running_loop().create_task(self._send_quietly(reply))
        self._handler_tasks.add(task)
        task.add_done_callback(self._handler_tasks.discard)

    async def _send_quietly(self, message: dict[str, Any]) -> None:
        with contextlib.suppress(McpError):  # the connection is gone; nobody to answer
            await self.transport.send(self._traced(message))

    def _traced(self, message: dict[str, Any]) -> dict[str, Any]:
        if self._trace is not None:
            self._trace.record(self.name, "send", message)
        return message

    def _on_notification(self, method: str, params: Any) -> None:
        handler = self._notification_handlers.get(method, self._fallback_notification)
        if handler is None:
            log.debug("%s: unhandled notification %s", self.name, method)
            return
        try:
            outcome = handler(method, params)
            if asyncio.iscoroutine(outcome):
                task = asyncio.get_running_loop().create_task(outcome)
                self._handler_tasks.add(task)
                task.add_done_callback(self._handler_tasks.discard)
        except Exception:
            log.exception("%s: notification handler for %s failed", self.name, method)

    async def _serve(self, request_id: Any, method: str, params: Any) -> None:
        handler = self._request_handlers.get(method)
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id}
        if handler is None:
            reply["error"] = {"code": METHOD_NOT_FOUND, "message": f"Method not found: {method}"}
        else:
            try:
                reply["result"] = await handler(params)
            except JsonRpcError as exc:
                reply["error"] = {"code": exc.code, "message": exc.rpc_message}
                if exc.data is not None:
                    reply["error"]["data"] = exc.data
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.exception("%s: handler for %s failed", self.name, method)
                reply["error"] = {"code": INTERNAL_ERROR, "message": f"{type(exc).__name__}: {exc}"}
        try:
            await self.transport.send(self._traced(reply))
        except McpError:
            pass  # the connection is gone; nobody to answer
        except (TypeError, ValueError) as exc:  # the handler's result is not JSON (or has NaN): say so
            log.error("%s: result of handler for %s is not JSON-serializable: %s", self.name, method, exc)
            reply.pop("result", None)
            reply["error"] = {"code": INTERNAL_ERROR, "message": f"result is not JSON-serializable: {exc}"}
            with contextlib.suppress(McpError):
                await self.transport.send(self._traced(reply))

    async def _cancel_handlers(self) -> None:
        """On close: cancel every handler task but the caller's own, and let them unwind (bounded)."""
        current = asyncio.current_task()
        handlers = [task for task in self._handler_tasks if task is not current]
        for task in handlers:
            task.cancel()
        if handlers:  # let them unwind now rather than be destroyed pending when the loop ends
            await asyncio.wait(handlers, timeout=HANDLER_CANCEL_WAIT_S)


async def _pong(_params: Any) -> dict[str, Any]:
    return {}


def _id_key(request_id: Any) -> tuple[bool, Any] | None:
    """A dict key for a JSON-RPC id that keeps 1 and "1" apart; None for ids that cannot be matched."""
    if isinstance(request_id, str):
        return (True, request_id)
    if type(request_id) is int:
        return (False, request_id)
    return None
