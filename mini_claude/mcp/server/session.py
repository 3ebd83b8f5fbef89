"""`ServerSession`: one client connection to an `McpServerCore` — the JSON-RPC dispatch of the server side.

`deliver(message)` takes one client message (a dict): a request runs in a task of its own (so calls run
concurrently and a long tool never holds up a `ping` or a `notifications/cancelled`), a notification is handled at
once, a reply completes one of our server → client requests (outbound.py). Replies and notifications go back
through the `PeerLink` the session was opened with.

Methods served: `initialize` (the client's version when we speak it, else our newest legacy one), `ping`,
`tools/list`, `tools/call`, `logging/setLevel`; notifications `notifications/initialized` and
`notifications/cancelled` (the named call's task is cancelled and its `ctx.cancelled` set; no reply follows). Any
other method is -32601, `server/discover` included: the client then uses the legacy `initialize` handshake, whose
server → client requests this session serves directly.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Protocol

from mini_claude.errors import McpError
from mini_claude.mcp.protocol import LATEST_PROTOCOL_VERSION, LOG_LEVELS, SUPPORTED_PROTOCOL_VERSIONS
from mini_claude.mcp.server.context import ToolCallContext
from mini_claude.mcp.server.outbound import Outbound
from mini_claude.mcp.server.tools import (
    ServerTool,
    call_handler,
    check_arguments,
    error_result,
    to_call_result,
)
from mini_claude.mcp.transports.inprocess import PeerLink

__all__ = ["CLOSE_WAIT_S", "RpcError", "ServerDefinition", "ServerSession"]

log = logging.getLogger(__name__)

CLOSE_WAIT_S = 2.0  # on close: how long cancelled tool handlers get to unwind

METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INVALID_REQUEST = -32600
INTERNAL_ERROR = -32603


class RpcError(Exception):
    """A request's JSON-RPC error reply."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class ServerDefinition(Protocol):
    """What a session needs of its server (`McpServerCore`): who it is and its tools, read at each request."""

    name: str
    version: str
    instructions: str | None

    @property
    def tools(self) -> list[ServerTool]: ...

    def tool(self, name: str) -> ServerTool | None: ...

    def forget(self, session: ServerSession) -> None:
        """The session closed."""


class ServerSession:
    """The server side of one connection (see the module docstring)."""

    def __init__(self, core: ServerDefinition, link: PeerLink) -> None:
        self.core = core
        self.link = link
        self.protocol_version: str | None = None
        self.client_info: dict[str, Any] = {}
        self.client_capabilities: dict[str, Any] = {}
        self.initialized = False  # the client sent notifications/initialized
        self.log_level: str | None = None  # logging/setLevel; None: send every level
        self.closed = False
        self._outbound = Outbound(self._push, server=core.name)
        self._running: dict[Any, tuple[asyncio.Task[None], ToolCallContext | None]] = {}

    # ---- PeerSession -------------------------------------------------------------------------------------------

    async def deliver(self, message: dict[str, Any]) -> None:
        """One message from the client (never raises: a bad request gets an error reply)."""
        if self.closed:
            return
        method = message.get("method")
        if method is None:
            if "id" in message and self._outbound.resolve(message):
                return
            log.debug("%s: dropped a message that is no request of the client nor a reply to ours",
                      self.core.name)
            return
        if not isinstance(method, str):
            self._reply_error(message.get("id"), INVALID_REQUEST, "method is not a string")
            return
        params = message.get("params")
        if "id" not in message:
            self._on_notification(method, params)
            return
        request_id = message["id"]
        if request_id in self._running:
            self._reply_error(request_id, INVALID_REQUEST, f"request id {request_id!r} is already in use")
            return
        task = asyncio.get_running_loop().create_task(self._serve(request_id, method, params),
                                                      name=f"mcp-server-{self.core.name}-{method}")
        self._running[request_id] = (task, None)
        task.add_done_callback(lambda _t: self._running.pop(request_id, None))

    async def close(self) -> None:
        """The client hung up: running calls are cancelled (bounded wait), waiting server requests fail."""
        if self.closed:
            return
        self.closed = True
        self.core.forget(self)
        self._outbound.fail_all(Outbound.closed_error(self.core.name))
        tasks = [task for task, ctx in self._running.values()]
        for task, ctx in self._running.values():
            if ctx is not None:
                ctx.cancelled.set()
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=CLOSE_WAIT_S)

    # ---- what the core and the contexts send ------------------------------------------------------------------

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self._push(message)

    def end(self, reason: str) -> None:
        """The server ends this connection (the core shut down)."""
        self._outbound.fail_all(Outbound.closed_error(self.core.name))
        self.link.end(reason)

    def _push(self, message: dict[str, Any]) -> None:
        if not self.closed:
            self.link.push(message)

    def _log_allowed(self, level: str) -> bool:
        return self.log_level is None or LOG_LEVELS.index(level) >= LOG_LEVELS.index(self.log_level)

    # ---- requests ------------------------------------------------------------------------------------------------

    async def _serve(self, request_id: Any, method: str, params: Any) -> None:
        try:
            result = await self._answer(request_id, method, params if params is not None else {})
        except RpcError as exc:
            self._reply_error(request_id, exc.code, exc.message)
            return
        except Exception as exc:  # a bug of ours: the client hears of it, the server lives on
            log.exception("%s: %s failed", self.core.name, method)
            self._reply_error(request_id, INTERNAL_ERROR, f"{type(exc).__name__}: {exc}")
            return
        entry = self._running.get(request_id)
        if entry is not None and entry[1] is not None and entry[1].cancelled.is_set():
            return  # cancelled, and the handler swallowed it: the client expects no reply
        self._push({"jsonrpc": "2.0", "id": request_id, "result": result})

    async def _answer(self, request_id: Any, method: str, params: Any) -> Any:
        if not isinstance(params, dict):
            raise RpcError(INVALID_PARAMS, "params must be an object")
        if method == "initialize":
            return self._initialize(params)
        if method == "ping":
            return {}
        if method == "tools/list":
            return {"tools": [tool.wire() for tool in self.core.tools]}
        if method == "tools/call":
            return await self._call_tool(request_id, params)
        if method == "logging/setLevel":
            level = params.get("level")
            if level not in LOG_LEVELS:
                raise RpcError(INVALID_PARAMS, f"unknown log level {level!r}")
            self.log_level = str(level)
            return {}
        raise RpcError(METHOD_NOT_FOUND, f"Method not found: {method}")

    def _initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        offered = params.get("protocolVersion")
        self.protocol_version = offered if offered in SUPPORTED_PROTOCOL_VERSIONS else LATEST_PROTOCOL_VERSION
        capabilities = params.get("capabilities")
        self.client_capabilities = dict(capabilities) if isinstance(capabilities, dict) else {}
        info = params.get("clientInfo")
        self.client_info = dict(info) if isinstance(info, dict) else {}
        result: dict[str, Any] = {
            "protocolVersion": self.protocol_version,
            "capabilities": {"tools": {"listChanged": True}, "logging": {}},
            "serverInfo": {"name": self.core.name, "version": self.core.version},
        }
        if self.core.instructions:
            result["instructions"] = self.core.instructions
        return result

    async def _call_tool(self, request_id: Any, params: dict[str, Any]) -> dict[str, Any]:
        name = params.get("name")
        if not isinstance(name, str):
            raise RpcError(INVALID_PARAMS, "tools/call needs a tool name")
        tool = self.core.tool(name)
        if tool is None:
            return error_result(f"no tool named {name!r} on server {self.core.name!r}")
        arguments = params.get("arguments")
        arguments = {} if arguments is None else arguments
        problem = check_arguments(tool.input_schema, arguments)
        if problem is not None:
            return error_result(f"invalid arguments for {name}: {problem}")
        meta = params.get("_meta")
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        ctx = ToolCallContext(
            server=self.core.name, tool=name, request_id=request_id,
            progress_token=token if isinstance(token, str | int) and not isinstance(token, bool) else None,
            client_capabilities=self.client_capabilities, notify=self.notify,
            request=lambda m, p, t: self._outbound.request(m, p, timeout_s=t), log_allowed=self._log_allowed)
        entry = self._running.get(request_id)
        if entry is not None:
            self._running[request_id] = (entry[0], ctx)
        try:
            value = await call_handler(tool, arguments, ctx)
        except McpError as exc:
            return error_result(exc.message)
        except Exception as exc:
            return error_result(str(exc) or type(exc).__name__)
        except SystemExit as exc:  # argparse on the model's arguments, a stray sys.exit(): the call's end, not the host's
            return error_result(f"the tool exited (SystemExit: {exc.code!r}) instead of returning a result")
        return to_call_result(value)

    # ---- notifications -----------------------------------------------------------------------------------------

    def _on_notification(self, method: str, params: Any) -> None:
        if method == "notifications/initialized":
            self.initialized = True
        elif method == "notifications/cancelled" and isinstance(params, dict):
            entry = self._running.get(params.get("requestId"))
            if entry is not None:
                task, ctx = entry
                if ctx is not None:
                    ctx.cancelled.set()
                task.cancel()
        # anything else (roots/list_changed, progress of our requests, ...) needs nothing from a tools server

    def _reply_error(self, request_id: Any, code: int, message: str) -> None:
        self._push({"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}})
