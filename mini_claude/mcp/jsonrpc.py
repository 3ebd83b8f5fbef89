"""JSON-RPC 2.0 session over any `Transport`: our requests (ids, pending futures, deadlines), the reader and its
dispatch, errors. Serving the peer's requests and notifications is the base class's (`jsonrpc_serving`).

It knows nothing of MCP or pipes. Invariants:

* A pending request is registered *before* its message is sent and removed in `finally`, so a reply can never
  arrive for an id we do not know yet, and an abandoned wait never leaks an entry.
* Incoming messages with a `method` are requests (with `id`) or notifications (without); only messages without a
  `method` are responses. A server request whose id equals one of ours is therefore never taken for a response.
* When the transport ends, every pending request fails at once with the transport's error (for a process: exit
  code and stderr tail). Nothing waits forever: each request has a deadline timer; `touch()` pushes it back. The
  deadline covers the send too: a peer that stopped reading (a full pipe) cannot block a request past it.
* Unknown ids, duplicate replies, non-object JSON and malformed messages are logged and survive. An error reply
  with a null id (the peer could not read a request's id) is logged too, unless it can only be the answer to one
  request: the only one in flight, sent with `claim_null_id_error=True` (the MCP client's era probe, which a
  legacy server may answer that way); then it fails that request.
* A request whose local wait is cancelled or times out triggers `on_abandoned(id, method, reason)` (the MCP client
  sends `notifications/cancelled` from it); its late reply is then an unknown id and ignored.
* A `RequestFailed` value from the transport (an HTTP response stream lost before its reply) fails that one
  request with its typed `StreamLostError`; the session goes on.
* A `RefusedMessage` from the transport (a message nested deeper than the readers accept, see json_depth) fails
  the request it answers with a ProtocolError, or answers the peer's request with an error; the session goes on.
* With `--mcp-trace` (mini_claude.mcp.trace) every message sent and received is handed to the trace, as is.
* A peer's `notifications/cancelled` still reaches the notification handlers after it cancelled the handler
  serving that request (see jsonrpc_serving).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

from mini_claude.errors import JsonRpcError, McpError, McpTimeoutError, ProtocolError, TransportError
from mini_claude.mcp.jsonrpc_serving import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    JsonRpcServing,
    NotificationHandler,
    RequestHandler,
)
from mini_claude.mcp.transports.base import RequestFailed, Transport
from mini_claude.mcp.transports.json_depth import RefusedMessage

__all__ = [
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "JsonRpcSession",
    "NotificationHandler",
    "RequestHandler",
]

log = logging.getLogger(__name__)

AbandonedHook = Callable[[int, str, str], None]


class _Pending:
    """One in-flight request: its future, its method, its deadline timer, and its task while it is sending."""

    __slots__ = ("claims_null_id", "deadline", "future", "method", "send_cut", "sender", "timeout", "timer")

    def __init__(self, future: asyncio.Future[Any], method: str, timeout: float | None,
                 claims_null_id: bool = False) -> None:
        self.future = future
        self.method = method
        self.timeout = timeout
        self.claims_null_id = claims_null_id  # a null-id error while this is the only request in flight is ours
        self.deadline = 0.0
        self.timer: asyncio.TimerHandle | None = None
        self.sender: asyncio.Task[Any] | None = None  # set while transport.send() runs
        self.send_cut = False  # the deadline passed during send(): we cancelled the sender


class JsonRpcSession(JsonRpcServing):
    """A JSON-RPC 2.0 peer on top of a started `Transport`.

    Example:

        session = JsonRpcSession(transport, name="demo")
        session.start()
        result = await session.request("tools/list", {}, timeout=30)
        await session.notify("notifications/initialized")
        await session.close()
    """

    def __init__(self, transport: Transport, *, name: str | None = None) -> None:
        super().__init__(transport, name=name)
        self._next_id = 1
        self._pending: dict[int, _Pending] = {}
        self._idle = asyncio.Event()  # set while no request is pending
        self._idle.set()
        self._reader: asyncio.Task[None] | None = None
        self._closed_error: McpError | None = None
        self._closed_notified = False
        self.on_abandoned: AbandonedHook | None = None
        self.on_closed: Callable[[McpError], None] | None = None

    # ---- setup -------------------------------------------------------------------------------------------------

    def start(self) -> None:
        """Start reading from the (already started) transport."""
        if self._reader is None:
            self._reader = asyncio.get_running_loop().create_task(self._read_loop(), name=f"jsonrpc-{self.name}")

    @property
    def closed(self) -> bool:
        return self._closed_error is not None

    @property
    def closed_error(self) -> McpError | None:
        return self._closed_error

    # ---- outgoing ----------------------------------------------------------------------------------------------

    async def request(self, method: str, params: Any = None, *, timeout: float | None = None,
                      on_sent: Callable[[], None] | None = None, claim_null_id_error: bool = False) -> Any:
        """Send a request and wait for its result. Raises JsonRpcError, McpTimeoutError or TransportError.

        `on_sent()` is called once the transport has taken the message (the wait for the answer begins);
        `claim_null_id_error` takes an error reply with a null id as this request's answer while it is the only
        request in flight."""
        if self._closed_error is not None:
            # a stored exception re-raised as is would grow its traceback (and pin frames) on every raise
            raise self._closed_error.with_traceback(None)
        request_id = self._next_id
        self._next_id += 1
        loop = asyncio.get_running_loop()
        pending = _Pending(loop.create_future(), method, timeout, claim_null_id_error)
        self._pending[request_id] = pending
        self._idle.clear()
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        try:
            if timeout is not None:
                pending.deadline = loop.time() + timeout
                pending.timer = loop.call_at(pending.deadline, self._on_deadline, request_id)
            sender = pending.sender = asyncio.current_task()
            try:
                await self.transport.send(self._traced(message))
            except asyncio.CancelledError:
                # our deadline cut a send that was stuck (peer not reading); anyone else's cancel wins
                if pending.send_cut and sender is not None and sender.uncancel() == 0:
                    raise McpTimeoutError(method, timeout or 0.0, server=self.name) from None
                raise
            finally:
                pending.sender = None
            if on_sent is not None:
                on_sent()
            return await pending.future
        except asyncio.CancelledError:
            future = pending.future
            # no notifications/cancelled for a request that was already answered
            if request_id in self._pending and (
                    future.cancelled() or not future.done() or isinstance(future.exception(), McpTimeoutError)):
                self._abandon(request_id, method, "cancelled by the client")
            raise
        except McpTimeoutError:
            self._abandon(request_id, method, f"timed out after {timeout:g}s")
            raise
        finally:
            entry = self._pending.pop(request_id, None)
            if entry is not None and entry.timer is not None:
                entry.timer.cancel()
            if not self._pending:
                self._idle.set()

    async def wait_idle(self, timeout: float) -> bool:
        """Wait (at most `timeout` s) until no request is pending; True if none is."""
        try:
            await asyncio.wait_for(self._idle.wait(), timeout)
        except TimeoutError:
            return False
        return True

    def next_request_id(self) -> int:
        """The id the next `request()` will use (lets a caller tie a progress token to it beforehand)."""
        return self._next_id

    def touch(self, request_id: int) -> bool:
        """Push a pending request's deadline back by its full timeout (e.g. on progress). False if not pending."""
        pending = self._pending.get(request_id)
        if pending is None:
            return False
        if pending.timeout is not None:
            pending.deadline = asyncio.get_running_loop().time() + pending.timeout
        return True

    async def notify(self, method: str, params: Any = None) -> None:
        """Send a notification. Raises TransportError when the connection is gone."""
        if self._closed_error is not None:
            raise self._closed_error.with_traceback(None)
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self.transport.send(self._traced(message))

    async def close(self) -> None:
        """Stop reading, close the transport, fail whatever is still pending. Idempotent."""
        if self._closed_error is None:
            self._fail_all(TransportError("connection closed by the client", server=self.name))
        reader, self._reader = self._reader, None
        if reader is not None and reader is not asyncio.current_task():
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await reader
        await self._cancel_handlers()
        await self.transport.close()

    # ---- internals ---------------------------------------------------------------------------------------------

    def _on_deadline(self, request_id: int) -> None:
        pending = self._pending.get(request_id)
        if pending is None or pending.future.done():
            return
        loop = asyncio.get_running_loop()
        if loop.time() < pending.deadline:  # touched since: sleep until the new deadline
            pending.timer = loop.call_at(pending.deadline, self._on_deadline, request_id)
            return
        assert pending.timeout is not None
        pending.future.set_exception(McpTimeoutError(pending.method, pending.timeout, server=self.name))
        if pending.sender is not None:  # still inside transport.send(): the peer is not reading; cut it
            pending.send_cut = True
            pending.future.exception()  # request() raises its own McpTimeoutError; mark this one retrieved
            pending.sender.cancel()

    def _abandon(self, request_id: int, method: str, reason: str) -> None:
        self._pending.pop(request_id, None)
        hook = self.on_abandoned
        if hook is not None and self._closed_error is None:
            try:
                hook(request_id, method, reason)
            except Exception:  # a hook bug must not turn a timeout into a different error
                log.exception("%s: on_abandoned hook failed", self.name)

    def _fail_all(self, error: McpError) -> None:
        if self._closed_error is None:
            self._closed_error = error
        for pending in list(self._pending.values()):
            if pending.timer is not None:
                pending.timer.cancel()
            if not pending.future.done():
                pending.future.set_exception(error)
                # a caller that already went away must not make asyncio log "exception never retrieved"
                pending.future.exception()
        self._pending.clear()
        if self._closed_notified:
            return
        self._closed_notified = True
        if self.on_closed is not None:
            try:
                self.on_closed(error)
            except Exception:
                log.exception("%s: on_closed hook failed", self.name)

    async def _read_loop(self) -> None:
        try:
            while True:
                message = await self.transport.receive()
                if self._trace is not None and not isinstance(message, (RequestFailed, RefusedMessage)):
                    self._trace.record(self.name, "recv", message)
                try:
                    if isinstance(message, dict):
                        self._dispatch(message)
                    elif isinstance(message, RequestFailed):
                        self._fail_one(message)
                    elif isinstance(message, RefusedMessage):
                        self._on_refused(message)
                    elif isinstance(message, list):
                        log.warning("%s: received a JSON-RPC batch of %d (deprecated); handling each", self.name,
                                    len(message))
                        for item in message:
                            if isinstance(item, dict):
                                self._dispatch(item)
                            else:
                                log.warning("%s: ignoring non-object batch item: %.200r", self.name, item)
                    else:
                        log.warning("%s: ignoring non-object JSON message: %.200r", self.name, message)
                except Exception:  # one message that trips a bug must not end the session (try is free in 3.11)
                    log.exception("%s: failed to dispatch a message: %.200r", self.name, message)
        except McpError as exc:
            self._fail_all(exc)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a reader bug must still release every waiter
            log.exception("%s: reader failed", self.name)
            self._fail_all(TransportError(f"reader failed: {exc!r}", server=self.name))

    def _dispatch(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        if method is None:
            self._on_response(message)
        elif not isinstance(method, str):
            log.warning("%s: ignoring message with non-string method: %.200r", self.name, message)
        elif "id" in message:
            self._start_serving(message["id"], method, message.get("params"))
        else:
            if method == "notifications/cancelled":
                self._on_peer_cancelled(message.get("params"))
            self._on_notification(method, message.get("params"))

    def _on_response(self, message: dict[str, Any]) -> None:
        request_id = message.get("id")
        # exactly int: `true` must not match id 1 (bool is an int subclass and True == 1)
        pending = self._pending.get(request_id) if type(request_id) is int else None
        if pending is None and request_id is None and isinstance(message.get("error"), dict):
            # the peer could not even read one of our messages (parse error / invalid request)
            pending = self._null_id_claimant()
            if pending is None:
                log.warning("%s: error response without id: %.200r", self.name, message["error"])
                return
            log.debug("%s: error response without id taken as the answer to %s: %.200r", self.name,
                      pending.method, message["error"])
        if pending is None:
            # late reply to an abandoned request, a duplicate, or an id we never sent
            log.debug("%s: response for unknown id %.50r ignored", self.name, request_id)
            return
        if pending.future.done():
            return
        if "error" in message:
            err = message["error"]
            if isinstance(err, dict):
                code = err.get("code")
                pending.future.set_exception(JsonRpcError(
                    code if isinstance(code, int) else INTERNAL_ERROR,
                    str(err.get("message", "unknown error")), err.get("data"), server=self.name))
            else:
                pending.future.set_exception(JsonRpcError(INTERNAL_ERROR, f"malformed error: {err!r:.200}",
                                                          server=self.name))
        elif "result" in message:
            pending.future.set_result(message["result"])
        else:
            pending.future.set_exception(JsonRpcError(
                INVALID_REQUEST, "response has neither result nor error", server=self.name))

    def _fail_one(self, failed: RequestFailed) -> None:
        """The transport lost the way to one request's reply: fail that request (only) with its typed error."""
        request_id = failed.request_id
        pending = self._pending.get(request_id) if type(request_id) is int else None
        if pending is None or pending.future.done():
            return
        error = failed.error
        if error.server is None:
            error.server = self.name
            error.args = (f"MCP server {self.name!r}: {error.message}",)
        pending.future.set_exception(error)

    def _on_refused(self, refused: RefusedMessage) -> None:
        """A message the transport would not decode in full (nested too deep): a reply fails its request with a
        ProtocolError, a peer's request gets an error reply, anything else is logged and dropped."""
        request_id = refused.request_id
        if refused.method is None:
            pending = self._pending.get(request_id) if type(request_id) is int else None
            if pending is None or pending.future.done():
                log.warning("%s: dropped a reply (id %.50r): %s", self.name, request_id, refused.reason)
                return
            pending.future.set_exception(ProtocolError(
                f"{pending.method}: the reply was refused: {refused.reason}", server=self.name))
            return
        self._refuse_request(refused)

    def _null_id_claimant(self) -> _Pending | None:
        """The request a null-id error must be answering: the only one in flight, if it asked for that."""
        if len(self._pending) != 1:
            return None
        (pending,) = self._pending.values()
        return pending if pending.claims_null_id and not pending.future.done() else None
