"""`McpClient`: one MCP server's lifecycle on top of a `JsonRpcSession`: connect and close, tools, resources and
prompts, tool calls with timeouts, progress and cancellation, and the server → client side (requests such as
`roots/list`, in the modern era also embedded as `inputRequests` in a result; notifications such as
`notifications/tools/list_changed`). Its collaborators: `negotiation.Negotiator` (the protocol era and version),
`lists.ListCache` (pagination, `ttlMs` caching), `progress.ProgressTokens` (progress tokens and the deadlines
they push back), `input_rounds` (the modern era's incomplete results, answered and re-sent); the protocol's data
lives in `protocol`.

Design notes:

* Capabilities are declared only for what a handler really serves (`roots` with a `roots/list` handler,
  `sampling`, `elicitation` likewise), all set before `connect()`: a server that sees a capability will use it.
* A request that times out or whose caller is cancelled gets `notifications/cancelled` (never `initialize`: the
  spec forbids it; never the era probe, which a legacy server never knew); its late reply is dropped.
* Every error names the server (`McpError.server`), including errors raised by a transport built without a name.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from mini_claude import __version__
from mini_claude.errors import McpError, McpTimeoutError, ProtocolError, TransportError
from mini_claude.mcp import headers as mcp_headers
from mini_claude.mcp.input_rounds import request_with_input_rounds
from mini_claude.mcp.jsonrpc import JsonRpcSession
from mini_claude.mcp.lists import ListCache
from mini_claude.mcp.negotiation import Era, EraMemory, Negotiator
from mini_claude.mcp.progress import ProgressCallback, ProgressTokens
from mini_claude.mcp.protocol import HANDLER_CAPABILITIES, CallToolResult, McpTool, read_tools, tool_timeout_s
from mini_claude.mcp.transports.base import SupportsAbandon, Transport

__all__ = [
    "CANCEL_SEND_WAIT_S",
    "McpClient",
    "NotificationCallback",
    "ProgressCallback",
    "RequestHandler",
]

log = logging.getLogger(__name__)

CANCEL_SEND_WAIT_S = 0.5  # on close: how long queued notifications/cancelled get to reach the server

RequestHandler = Callable[[Any], Awaitable[Any]]
NotificationCallback = Callable[[str, Any], Any]


class McpClient:
    """One MCP server: connect (handshake), list and call tools, resources, prompts, ping, close.

    Example:

        transport = StdioTransport(StdioParams("python", ["-m", "mini_claude.mcp.demo_server"]), server="demo")
        client = McpClient(transport, name="demo")
        await client.connect(timeout_s=30)
        tools = await client.list_tools()
        result = await client.call_tool("add", {"a": 40, "b": 2})
        await client.close()

    `protocol_version` None or "auto" chooses the era (see `negotiation`), and `era_memory` remembers it under
    `era_key` (default: the name); a version pins it. `session_closed_callback`, when set, is called once with the
    error when the connection ends by itself (the server exited, the transport broke) — not when `close()` ends it.
    """

    def __init__(self, transport: Transport, *, name: str, client_info: dict[str, Any] | None = None,
                 request_timeout_s: float = 60.0, protocol_version: str | None = None,
                 era_memory: EraMemory | None = None, era_key: str | None = None) -> None:
        self.name = name
        self.transport = transport
        self.client_info = dict(client_info) if client_info else {"name": "mini-claude", "version": __version__}
        self.request_timeout_s = request_timeout_s
        self.requested_protocol_version = None if protocol_version in (None, "", "auto") else protocol_version
        # what the handshake told us, set once connected (`protocol_version` follows the negotiator: a modern
        # server may ask for another version later)
        self.era: Era | None = None
        self.server_info: dict[str, Any] = {}
        self.server_capabilities: dict[str, Any] = {}
        self.instructions: str | None = None
        self.session_closed_callback: Callable[[McpError], None] | None = None
        self._session = JsonRpcSession(transport, name=name)
        self._session.on_abandoned = self._on_abandoned
        self._session.on_closed = self._on_session_closed
        self._session.set_fallback_notification_handler(self._on_notification)
        self._capabilities: dict[str, dict[str, Any]] = {}
        self._progress = ProgressTokens(self._session, name)
        self._negotiator = Negotiator(
            self._session, transport, name=name, client_info=self.client_info, capabilities=self._capabilities,
            message_headers=self._message_headers, before_send=self._progress.bind,
            pinned=self.requested_protocol_version, era_memory=era_memory, era_key=era_key)
        self._lists = ListCache(name, self._list_page)
        self._notification_callbacks: dict[str, list[NotificationCallback]] = {}
        self._background: set[asyncio.Task[Any]] = set()
        self._connecting = False
        self._connected = False
        self._closing = False
        self._handlers: dict[str, RequestHandler] = {}
        self._tool_headers: dict[str, tuple[mcp_headers.HeaderParam, ...]] = {}

    # ---- setup -------------------------------------------------------------------------------------------------

    def set_request_handler(self, method: str, handler: RequestHandler, *,
                            capability: dict[str, Any] | None = None) -> None:
        """Serve a server → client request (`roots/list`, `sampling/createMessage`, `elicitation/create`, ...).

        The handler gets the params and returns the result, or raises `JsonRpcError`. Set before `connect()`,
        a handler for a capability method makes us declare that capability (`capability` overrides the declared
        object, e.g. `{"form": {}, "url": {}}` for elicitation).
        """
        self._session.set_request_handler(method, handler)
        self._handlers[method] = handler
        declared = HANDLER_CAPABILITIES.get(method)
        if declared is None:
            return
        if self._connecting or self._connected:
            log.warning("%s: handler for %s set after connect(); the %r capability was not declared", self.name,
                        method, declared[0])
            return
        self._capabilities[declared[0]] = dict(capability if capability is not None else declared[1])

    def declare_extension(self, name: str, settings: dict[str, Any]) -> None:
        """Declare a protocol extension (SEP-1724: `capabilities.extensions[name] = settings`, e.g. MCP Apps'
        `io.modelcontextprotocol/ui`) in `initialize` and in each modern request's `_meta`. Before `connect()`."""
        if self._connecting or self._connected:
            log.warning("%s: extension %s declared after connect(); not sent", self.name, name)
            return
        extensions = self._capabilities.setdefault("extensions", {})
        extensions[name] = dict(settings)

    def on_notification(self, method: str, callback: NotificationCallback) -> None:
        """Call `callback(method, params)` for each notification `method` (several callbacks may be added)."""
        self._notification_callbacks.setdefault(method, []).append(callback)

    # ---- state -------------------------------------------------------------------------------------------------

    @property
    def protocol_version(self) -> str | None:
        """The protocol version in use (None before connecting)."""
        return self._negotiator.version

    @property
    def closed_error(self) -> McpError | None:
        """Why the connection ended, once it has."""
        return self._session.closed_error

    @property
    def is_connected(self) -> bool:
        """True between a successful `connect()` and the end of the connection."""
        return self._connected and not self._session.closed

    @property
    def declared_capabilities(self) -> dict[str, Any]:
        """The client capabilities `initialize` sends (or sent)."""
        return self._negotiator.declared_capabilities()

    # ---- lifecycle ---------------------------------------------------------------------------------------------

    async def connect(self, *, timeout_s: float) -> None:
        """Start the transport and do the MCP handshake, all within `timeout_s`.

        Raises McpTimeoutError("initialize") on timeout, the transport's ServerExitedError at once if the process
        dies, ProtocolError for a bad or unsupported handshake answer, JsonRpcError if the server refuses.
        On failure everything started is closed again.
        """
        if self._connecting or self._connected:
            raise ProtocolError("connect() called twice", server=self.name)
        self._connecting = True
        try:
            try:
                async with asyncio.timeout(timeout_s):
                    await self.transport.start()
                    self._session.start()
                    await self._negotiator.negotiate(timeout_s)
                    hello = self._negotiator.hello
                    self.era = self._negotiator.era
                    self.server_info, self.server_capabilities = hello.info, hello.capabilities
                    self.instructions = hello.instructions
            except TimeoutError:
                raise McpTimeoutError("initialize", timeout_s, server=self.name) from None
            except McpError as exc:
                raise self._named(exc) from None
        except BaseException:
            await self._abort()
            raise
        finally:
            self._connecting = False
        self._connected = True

    async def _abort(self) -> None:
        """Close after a failed connect (shielded: a cancelled connect must still reap its process)."""
        task = asyncio.ensure_future(self.close())
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            await asyncio.wait([task])
            raise
        except Exception:
            log.debug("%s: close after a failed connect failed", self.name, exc_info=True)

    async def close_when_idle(self, grace_s: float) -> None:
        """Close once no request is in flight (at most `grace_s` s from now): requests already sent get their own
        answers first (a server that forgot our session refuses each, so each is known not to have run)."""
        await self._session.wait_idle(grace_s)
        await self.close()

    async def close(self) -> None:
        """End the connection and release the transport (reaps a process). Idempotent; bounded in time."""
        first = not self._closing
        self._closing = True
        if first and self._background:
            # give queued notifications/cancelled a moment to reach the server before the pipe closes
            await asyncio.wait(list(self._background), timeout=CANCEL_SEND_WAIT_S)
        await self._session.close()
        for task in list(self._background):
            task.cancel()
        self._progress.clear()

    async def request(self, method: str, params: Any = None, *, timeout_s: float | None = None) -> Any:
        """Send any request (e.g. an extension's `skills/list`) and return its result; raises like the typed calls.
        The wait is bounded by `timeout_s` (default: `request_timeout_s`)."""
        return await self._request(method, params, timeout=timeout_s if timeout_s is not None else
                                   self.request_timeout_s)

    async def ping(self) -> None:
        """Round-trip a `ping` (raises like any request)."""
        await self._request("ping", None, timeout=self.request_timeout_s)

    # ---- tools -------------------------------------------------------------------------------------------------

    async def list_tools(self) -> list[McpTool]:
        """Every tool, following `nextCursor`. Entries without a name, repeating one, or with invalid
        `x-mcp-header` annotations are dropped (logged); the valid annotations feed `Mcp-Param-*` headers."""
        tools, self._tool_headers = read_tools(await self._lists.list_all("tools/list", "tools"), server=self.name)
        return tools

    async def call_tool(self, name: str, arguments: dict[str, Any] | None, *, timeout_s: float | None = None,
                        on_progress: ProgressCallback | None = None) -> CallToolResult:
        """Call a tool. The wait is bounded by `timeout_s` (default: `tool_timeout_s()`), pushed back by progress.

        `on_progress(progress, total, message)` is called for each progress notification of this call. On
        timeout or cancellation of the caller the server gets `notifications/cancelled`. A tool failure is a
        result with `is_error`; a refused request raises JsonRpcError; a dead server its TransportError.
        """
        timeout = timeout_s if timeout_s is not None else tool_timeout_s()
        params: dict[str, Any] = {"name": name, "arguments": arguments if arguments is not None else {}}
        token: str | None = None
        if on_progress is not None:
            # ProgressTokens.bind() points it at the request id right before each send (retries get new ids)
            token = self._progress.issue(on_progress)
            params["_meta"] = {"progressToken": token}
        try:
            result = await self._request("tools/call", params, timeout=timeout)
        finally:
            if token is not None:
                self._progress.release(token)
        return CallToolResult.from_wire(result, tool=name, server=self.name)

    # ---- resources and prompts -----------------------------------------------------------------------------------

    async def list_resources(self) -> list[dict[str, Any]]:
        """Every resource (`uri`, `name`, ...), following `nextCursor`."""
        return await self._lists.list_all("resources/list", "resources")

    async def list_resource_templates(self) -> list[dict[str, Any]]:
        """Every resource template (`uriTemplate`, `name`, ...), following `nextCursor`."""
        return await self._lists.list_all("resources/templates/list", "resourceTemplates")

    async def read_resource(self, uri: str) -> list[dict[str, Any]]:
        """The contents of a resource: a list of `{uri, mimeType, text | blob}` objects."""
        result = await self._request("resources/read", {"uri": uri}, timeout=self.request_timeout_s)
        contents = result.get("contents") if isinstance(result, dict) else None
        if not isinstance(contents, list):
            raise ProtocolError(f"resources/read {uri}: result has no contents list", server=self.name)
        return [item for item in contents if isinstance(item, dict)]

    async def list_prompts(self) -> list[dict[str, Any]]:
        """Every prompt (`name`, `description`, `arguments`), following `nextCursor`."""
        return await self._lists.list_all("prompts/list", "prompts")

    async def get_prompt(self, name: str, arguments: dict[str, str] | None = None) -> dict[str, Any]:
        """A prompt rendered with `arguments`: the result object (`description`, `messages`)."""
        params: dict[str, Any] = {"name": name}
        if arguments:
            params["arguments"] = arguments
        result = await self._request("prompts/get", params, timeout=self.request_timeout_s)
        if not isinstance(result, dict) or not isinstance(result.get("messages"), list):
            raise ProtocolError(f"prompts/get {name}: result has no messages list", server=self.name)
        return result

    def invalidate_lists(self, method: str | None = None) -> None:
        """Forget cached listings (`ttlMs`): one list method's, or all of them."""
        self._lists.invalidate(method)

    async def notify_roots_changed(self) -> None:
        """Tell the server our roots changed (it will ask `roots/list` again)."""
        if "roots" not in self._capabilities:
            raise ProtocolError("roots were not declared (no roots/list handler before connect)", server=self.name)
        try:
            await self._session.notify("notifications/roots/list_changed")
        except McpError as exc:
            raise self._named(exc) from None

    # ---- the request path ----------------------------------------------------------------------------------------

    async def _request(self, method: str, params: Any, *, timeout: float | None) -> Any:
        if not self._connected:
            if self._session.closed_error is not None:
                raise self._named(self._session.closed_error.with_traceback(None))
            raise TransportError(f"{method}: not connected (connect() first)", server=self.name)
        try:
            return await self._call(method, params, timeout=timeout)
        except McpError as exc:
            raise self._named(exc) from None

    async def _list_page(self, method: str, params: dict[str, Any]) -> Any:
        """One page of a listing (`ListCache` follows the cursors)."""
        return await self._request(method, params, timeout=self.request_timeout_s)

    async def _call(self, method: str, params: Any, *, timeout: float | None) -> Any:
        """One request in the current era; in the modern era incomplete results are answered and re-sent."""
        if self.era != "modern":
            self._progress.bind(params)
            return await self._session.request(method, params, timeout=timeout)
        return await request_with_input_rounds(self._negotiator, method, params, timeout=timeout,
                                               handlers=self._handlers, server=self.name)

    def _message_headers(self, message: dict[str, Any]) -> Mapping[str, str]:
        return mcp_headers.message_headers(message, self._tool_headers)

    def _named(self, exc: McpError) -> McpError:
        """Make sure an error names this server (a transport may have been built without a name)."""
        if exc.server is None:
            exc.server = self.name
            exc.args = (f"MCP server {self.name!r}: {exc.message}",)
        return exc

    # ---- events from the session ---------------------------------------------------------------------------------

    def _spawn(self, coro: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def _on_abandoned(self, request_id: int, method: str, reason: str) -> None:
        self._progress.forget_request(request_id)
        if isinstance(self.transport, SupportsAbandon):  # HTTP: stop reading that request's response stream
            self.transport.abandon(request_id)
        if method == "initialize":  # the spec: a client MUST NOT cancel its initialize request
            return
        if request_id in self._negotiator.quiet_requests:  # the era probe: a legacy server never knew it
            return
        log.debug("%s: cancelling request %d (%s): %s", self.name, request_id, method, reason)
        self._spawn(self._send_cancelled(request_id, reason))

    async def _send_cancelled(self, request_id: int, reason: str) -> None:
        try:
            await self._session.notify("notifications/cancelled", {"requestId": request_id, "reason": reason})
        except McpError as exc:  # the connection is gone: nothing left to cancel
            log.debug("%s: could not send notifications/cancelled: %s", self.name, exc)

    def _on_session_closed(self, error: McpError) -> None:
        self._progress.clear()
        if self._closing or not self._connected:
            return  # our own close(), or a failed connect() that raises the error itself
        log.info("%s: connection lost: %s", self.name, error)
        callback = self.session_closed_callback
        if callback is not None:
            try:
                callback(self._named(error))
            except Exception:
                log.exception("%s: session_closed_callback failed", self.name)

    def _on_notification(self, method: str, params: Any) -> None:
        self._lists.invalidate_for(method)
        if method == "notifications/progress":
            self._progress.on_progress(params)
        elif method == "notifications/message" and isinstance(params, dict):
            log.debug("%s: server log [%s] %s: %.500s", self.name, params.get("level"), params.get("logger"),
                      params.get("data"))
        callbacks = self._notification_callbacks.get(method)
        if not callbacks:
            if method not in ("notifications/progress", "notifications/message"):
                log.debug("%s: unhandled notification %s", self.name, method)
            return
        for callback in list(callbacks):
            try:
                outcome = callback(method, params)
                if asyncio.iscoroutine(outcome):
                    self._spawn(outcome)
            except Exception:
                log.exception("%s: callback for %s failed", self.name, method)
