"""`McpClient`: one MCP server's lifecycle on top of a `JsonRpcSession`.

It owns the handshake (version negotiation, capabilities, `notifications/initialized`), listing with pagination,
tool calls with per-call timeouts, progress and cancellation, and the server → client side (requests such as
`roots/list` and notifications such as `notifications/tools/list_changed`).

Design notes:

* Capabilities are declared only for what a handler really serves: `roots` only with a `roots/list` handler,
  `sampling` only with a `sampling/createMessage` handler, `elicitation` only with an `elicitation/create`
  handler — all set before `connect()`. A server that sees a capability will use it.
* A progress token is tied to the JSON-RPC id its call will get (`session.next_request_id()` read with no await
  before the request is issued), so each `notifications/progress` pushes that request's deadline back.
* A request that times out or whose caller is cancelled gets `notifications/cancelled` (never `initialize`: the
  spec forbids cancelling it); its late reply is an unknown id to the session and is dropped.
* Pagination is bounded: a cursor seen twice or more than `MAX_LIST_PAGES` pages ends the listing with what was
  gathered (logged), so a buggy server cannot keep us listing forever.
* Every error names the server (`McpError.server`), including errors raised by a transport built without a name.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import math
import os
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from mini_claude import __version__
from mini_claude.errors import McpError, McpTimeoutError, ProtocolError, TransportError
from mini_claude.mcp.jsonrpc import JsonRpcSession
from mini_claude.mcp.transports.base import Transport

__all__ = [
    "DEFAULT_TOOL_TIMEOUT_MS",
    "LATEST_PROTOCOL_VERSION",
    "MAX_LIST_PAGES",
    "SUPPORTED_PROTOCOL_VERSIONS",
    "CallToolResult",
    "McpClient",
    "McpTool",
    "NotificationCallback",
    "ProgressCallback",
    "RequestHandler",
    "tool_timeout_s",
]

log = logging.getLogger(__name__)

SUPPORTED_PROTOCOL_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
LATEST_PROTOCOL_VERSION = SUPPORTED_PROTOCOL_VERSIONS[0]

DEFAULT_TOOL_TIMEOUT_MS = 600_000  # MCP_TOOL_TIMEOUT's default (Claude Code's unit: milliseconds)
MAX_LIST_PAGES = 1000  # a listing that needs more pages than this is a server bug (endless nextCursor)
CANCEL_SEND_WAIT_S = 0.5  # on close: how long queued notifications/cancelled get to reach the server

# method -> the capability a handler for it lets us declare (only what we really handle)
_HANDLER_CAPABILITIES: dict[str, tuple[str, dict[str, Any]]] = {
    "roots/list": ("roots", {"listChanged": True}),
    "sampling/createMessage": ("sampling", {}),
    # an empty object means form mode (the spec's backward-compatible default); pass `capability=` for url mode
    "elicitation/create": ("elicitation", {}),
}

RequestHandler = Callable[[Any], Awaitable[Any]]
NotificationCallback = Callable[[str, Any], Any]
ProgressCallback = Callable[[float, float | None, str | None], None]


def tool_timeout_s(env: Mapping[str, str] | None = None) -> float:
    """The default tools/call timeout: MCP_TOOL_TIMEOUT (milliseconds) in `env` (default: the process
    environment), else `DEFAULT_TOOL_TIMEOUT_MS`."""
    raw = (os.environ if env is None else env).get("MCP_TOOL_TIMEOUT", "").strip()
    if raw:
        try:
            value = float(raw)
        except ValueError:
            log.warning("MCP_TOOL_TIMEOUT=%r is not a number of milliseconds; using %d", raw,
                        DEFAULT_TOOL_TIMEOUT_MS)
        else:
            if value > 0 and math.isfinite(value):
                return value / 1000.0
            log.warning("MCP_TOOL_TIMEOUT=%r must be a positive number of milliseconds; using %d", raw,
                        DEFAULT_TOOL_TIMEOUT_MS)
    return DEFAULT_TOOL_TIMEOUT_MS / 1000.0


@dataclass(frozen=True)
class McpTool:
    """One tool as the server listed it. `raw` is the wire object, for anything not lifted into a field."""

    name: str
    title: str | None
    description: str | None
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    annotations: dict[str, Any]
    raw: dict[str, Any] = field(repr=False)

    @property
    def read_only_hint(self) -> bool:
        """True only when the server says so explicitly (hints are untrusted; absent means "may write")."""
        return self.annotations.get("readOnlyHint") is True

    @classmethod
    def from_wire(cls, raw: dict[str, Any]) -> McpTool | None:
        """Build from a `tools/list` entry; None (logged by the caller) when it has no usable name."""
        name = raw.get("name")
        if not isinstance(name, str) or not name:
            return None
        annotations = raw.get("annotations")
        annotations = dict(annotations) if isinstance(annotations, dict) else {}
        title = raw.get("title")
        if not isinstance(title, str):
            title = annotations.get("title") if isinstance(annotations.get("title"), str) else None
        description = raw.get("description")
        schema = raw.get("inputSchema")
        output_schema = raw.get("outputSchema")
        return cls(
            name=name,
            title=title,
            description=description if isinstance(description, str) else None,
            # the spec requires an object schema; a server that sends none still gets a callable tool
            input_schema=dict(schema) if isinstance(schema, dict) else {"type": "object"},
            output_schema=dict(output_schema) if isinstance(output_schema, dict) else None,
            annotations=annotations,
            raw=raw,
        )


@dataclass(frozen=True)
class CallToolResult:
    """A `tools/call` result: content blocks (dicts, as sent), structured content, and the isError flag."""

    content: list[dict[str, Any]]
    structured_content: Any | None
    is_error: bool
    raw: dict[str, Any] = field(repr=False)


@dataclass
class _Progress:
    """A progress token in use: the caller's callback and the request id whose deadline progress pushes."""

    callback: ProgressCallback
    request_id: int


class McpClient:
    """One MCP server: connect (handshake), list and call tools, resources, prompts, ping, close.

    Example:

        transport = StdioTransport(StdioParams("python", ["-m", "mini_claude.mcp.demo_server"]), server="demo")
        client = McpClient(transport, name="demo")
        await client.connect(timeout_s=30)
        tools = await client.list_tools()
        result = await client.call_tool("add", {"a": 40, "b": 2})
        await client.close()

    `session_closed_callback`, when set, is called once with the error when the connection ends by itself (the
    server exited, the transport broke) — not when `close()` ends it.
    """

    def __init__(
        self,
        transport: Transport,
        *,
        name: str,
        client_info: dict[str, Any] | None = None,
        request_timeout_s: float = 60.0,
    ) -> None:
        self.name = name
        self.transport = transport
        self.client_info = dict(client_info) if client_info else {"name": "mini-claude", "version": __version__}
        self.request_timeout_s = request_timeout_s
        self.protocol_version: str | None = None
        self.server_info: dict[str, Any] = {}
        self.server_capabilities: dict[str, Any] = {}
        self.instructions: str | None = None
        self.session_closed_callback: Callable[[McpError], None] | None = None
        self._session = JsonRpcSession(transport, name=name)
        self._session.on_abandoned = self._on_abandoned
        self._session.on_closed = self._on_session_closed
        self._session.set_fallback_notification_handler(self._on_notification)
        self._capabilities: dict[str, dict[str, Any]] = {}
        self._notification_callbacks: dict[str, list[NotificationCallback]] = {}
        self._progress: dict[str | int, _Progress] = {}
        self._tokens = itertools.count(1)
        self._background: set[asyncio.Task[Any]] = set()
        self._connecting = False
        self._connected = False
        self._closing = False

    # ---- setup -------------------------------------------------------------------------------------------------

    def set_request_handler(self, method: str, handler: RequestHandler, *,
                            capability: dict[str, Any] | None = None) -> None:
        """Serve a server → client request (`roots/list`, `sampling/createMessage`, `elicitation/create`, ...).

        The handler gets the params and returns the result, or raises `JsonRpcError`. Set before `connect()`,
        a handler for a capability method makes us declare that capability (`capability` overrides the declared
        object, e.g. `{"form": {}, "url": {}}` for elicitation).
        """
        self._session.set_request_handler(method, handler)
        declared = _HANDLER_CAPABILITIES.get(method)
        if declared is None:
            return
        if self._connecting or self._connected:
            log.warning("%s: handler for %s set after connect(); the %r capability was not declared", self.name,
                        method, declared[0])
            return
        self._capabilities[declared[0]] = dict(capability if capability is not None else declared[1])

    def on_notification(self, method: str, callback: NotificationCallback) -> None:
        """Call `callback(method, params)` for each notification `method` (several callbacks may be added)."""
        self._notification_callbacks.setdefault(method, []).append(callback)

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
        return {key: dict(value) for key, value in self._capabilities.items()}

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
                    await self._handshake()
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

    async def _handshake(self) -> None:
        await self.transport.start()
        self._session.start()
        params = {
            "protocolVersion": LATEST_PROTOCOL_VERSION,
            "capabilities": self.declared_capabilities,
            "clientInfo": self.client_info,
        }
        result = await self._session.request("initialize", params)
        if not isinstance(result, dict):
            raise ProtocolError(f"initialize result is not an object: {result!r:.200}", server=self.name)
        version = result.get("protocolVersion")
        if version not in SUPPORTED_PROTOCOL_VERSIONS:
            raise ProtocolError(
                f"server answered protocol version {version!r} to our {LATEST_PROTOCOL_VERSION!r}; "
                f"mini-claude supports {', '.join(SUPPORTED_PROTOCOL_VERSIONS)}", server=self.name)
        capabilities = result.get("capabilities")
        server_info = result.get("serverInfo")
        instructions = result.get("instructions")
        self.protocol_version = version
        self.server_capabilities = capabilities if isinstance(capabilities, dict) else {}
        self.server_info = server_info if isinstance(server_info, dict) else {}
        self.instructions = instructions if isinstance(instructions, str) and instructions.strip() else None
        await self._session.notify("notifications/initialized")
        log.debug("%s: connected (protocol %s, server %s %s)", self.name, version, self.server_info.get("name"),
                  self.server_info.get("version"))

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
        """Every tool, following `nextCursor`. Entries without a name, or repeating one, are dropped (logged)."""
        tools: list[McpTool] = []
        seen: set[str] = set()
        for raw in await self._list_all("tools/list", "tools"):
            tool = McpTool.from_wire(raw)
            if tool is None:
                log.warning("%s: ignoring a tool without a name: %.200r", self.name, raw)
            elif tool.name in seen:
                log.warning("%s: ignoring a second tool named %r", self.name, tool.name)
            else:
                seen.add(tool.name)
                tools.append(tool)
        return tools

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None,
        *,
        timeout_s: float | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> CallToolResult:
        """Call a tool. The wait is bounded by `timeout_s` (default: `tool_timeout_s()`), pushed back by progress.

        `on_progress(progress, total, message)` is called for each progress notification of this call. On
        timeout or cancellation of the caller the server gets `notifications/cancelled`. A tool failure is a
        result with `is_error`; a refused request raises JsonRpcError; a dead server its TransportError.
        """
        timeout = timeout_s if timeout_s is not None else tool_timeout_s()
        params: dict[str, Any] = {"name": name, "arguments": arguments if arguments is not None else {}}
        token: str | None = None
        if on_progress is not None:
            token = f"mini-claude-{next(self._tokens)}"
            params["_meta"] = {"progressToken": token}
            # no await between reading the id and request() taking it: the token maps to this very call
            self._progress[token] = _Progress(on_progress, self._session.next_request_id())
        try:
            result = await self._request("tools/call", params, timeout=timeout)
        finally:
            if token is not None:
                self._progress.pop(token, None)
        return self._tool_result(name, result)

    def _tool_result(self, tool: str, result: Any) -> CallToolResult:
        if not isinstance(result, dict):
            raise ProtocolError(f"tools/call {tool}: result is not an object: {result!r:.200}", server=self.name)
        content = result.get("content")
        if content is None:
            content = []
        if not isinstance(content, list):
            raise ProtocolError(f"tools/call {tool}: result content is not a list: {content!r:.200}",
                                server=self.name)
        blocks = [block for block in content if isinstance(block, dict)]
        if len(blocks) != len(content):
            log.warning("%s: tools/call %s: dropped %d content item(s) that are not objects", self.name, tool,
                        len(content) - len(blocks))
        return CallToolResult(
            content=blocks,
            structured_content=result.get("structuredContent"),
            is_error=result.get("isError") is True,
            raw=result,
        )

    # ---- resources and prompts -----------------------------------------------------------------------------------

    async def list_resources(self) -> list[dict[str, Any]]:
        """Every resource (`uri`, `name`, ...), following `nextCursor`."""
        return await self._list_all("resources/list", "resources")

    async def list_resource_templates(self) -> list[dict[str, Any]]:
        """Every resource template (`uriTemplate`, `name`, ...), following `nextCursor`."""
        return await self._list_all("resources/templates/list", "resourceTemplates")

    async def read_resource(self, uri: str) -> list[dict[str, Any]]:
        """The contents of a resource: a list of `{uri, mimeType, text | blob}` objects."""
        result = await self._request("resources/read", {"uri": uri}, timeout=self.request_timeout_s)
        contents = result.get("contents") if isinstance(result, dict) else None
        if not isinstance(contents, list):
            raise ProtocolError(f"resources/read {uri}: result has no contents list", server=self.name)
        return [item for item in contents if isinstance(item, dict)]

    async def list_prompts(self) -> list[dict[str, Any]]:
        """Every prompt (`name`, `description`, `arguments`), following `nextCursor`."""
        return await self._list_all("prompts/list", "prompts")

    async def get_prompt(self, name: str, arguments: dict[str, str] | None = None) -> dict[str, Any]:
        """A prompt rendered with `arguments`: the result object (`description`, `messages`)."""
        params: dict[str, Any] = {"name": name}
        if arguments:
            params["arguments"] = arguments
        result = await self._request("prompts/get", params, timeout=self.request_timeout_s)
        if not isinstance(result, dict) or not isinstance(result.get("messages"), list):
            raise ProtocolError(f"prompts/get {name}: result has no messages list", server=self.name)
        return result

    async def notify_roots_changed(self) -> None:
        """Tell the server our roots changed (it will ask `roots/list` again)."""
        if "roots" not in self._capabilities:
            raise ProtocolError("roots were not declared (no roots/list handler before connect)", server=self.name)
        await self._notify("notifications/roots/list_changed")

    # ---- internals ---------------------------------------------------------------------------------------------

    async def _request(self, method: str, params: Any, *, timeout: float | None) -> Any:
        if not self._connected:
            if self._session.closed_error is not None:
                raise self._named(self._session.closed_error.with_traceback(None))
            raise TransportError(f"{method}: not connected (connect() first)", server=self.name)
        try:
            return await self._session.request(method, params, timeout=timeout)
        except McpError as exc:
            raise self._named(exc) from None

    async def _notify(self, method: str, params: Any = None) -> None:
        try:
            await self._session.notify(method, params)
        except McpError as exc:
            raise self._named(exc) from None

    async def _list_all(self, method: str, key: str) -> list[dict[str, Any]]:
        """All items of a paginated list method. A cursor loop or endless pages stop it (logged)."""
        items: list[dict[str, Any]] = []
        seen: set[str] = set()
        cursor: str | None = None
        for _ in range(MAX_LIST_PAGES):
            result = await self._request(method, {"cursor": cursor} if cursor is not None else {},
                                         timeout=self.request_timeout_s)
            page = result.get(key) if isinstance(result, dict) else None
            if not isinstance(page, list):
                raise ProtocolError(f"{method}: result has no {key!r} list: {result!r:.200}", server=self.name)
            items.extend(item for item in page if isinstance(item, dict))
            cursor = result.get("nextCursor")
            if cursor is None or cursor == "":
                return items
            if not isinstance(cursor, str):
                log.warning("%s: %s: nextCursor is not a string (%.50r); stopping", self.name, method, cursor)
                return items
            if cursor in seen:
                log.warning("%s: %s: nextCursor %.50r came back (a cursor loop); stopping with %d items",
                            self.name, method, cursor, len(items))
                return items
            seen.add(cursor)
        log.warning("%s: %s: still more after %d pages; stopping with %d items", self.name, method,
                    MAX_LIST_PAGES, len(items))
        return items

    def _named(self, exc: McpError) -> McpError:
        """Make sure an error names this server (a transport may have been built without a name)."""
        if exc.server is None:
            exc.server = self.name
            exc.args = (f"MCP server {self.name!r}: {exc.message}",)
        return exc

    def _spawn(self, coro: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def _on_abandoned(self, request_id: int, method: str, reason: str) -> None:
        for token, entry in list(self._progress.items()):
            if entry.request_id == request_id:
                del self._progress[token]
        if method == "initialize":  # the spec: a client MUST NOT cancel its initialize request
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
        if method == "notifications/progress":
            self._on_progress(params)
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

    def _on_progress(self, params: Any) -> None:
        if not isinstance(params, dict):
            return
        token = params.get("progressToken")
        entry = self._progress.get(token) if isinstance(token, str | int) else None
        if entry is None:
            log.debug("%s: progress for unknown token %.50r", self.name, token)
            return
        progress = params.get("progress")
        if not _is_number(progress):
            log.debug("%s: progress notification without a numeric progress: %.200r", self.name, params)
            return
        total = params.get("total")
        message = params.get("message")
        self._session.touch(entry.request_id)  # work is happening: push the deadline back
        try:
            entry.callback(float(progress), float(total) if _is_number(total) else None,
                           message if isinstance(message, str) else None)
        except Exception:
            log.exception("%s: progress callback failed", self.name)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
