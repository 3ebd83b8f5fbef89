"""`McpClient`: one MCP server's lifecycle on top of a `JsonRpcSession`.

It owns the era choice and the handshake (legacy: `initialize` with version negotiation, capabilities,
`notifications/initialized`; modern 2026-07-28: `server/discover` and per-request `_meta`), listing with
pagination, tool calls with per-call timeouts, progress and cancellation, and the server → client side (requests
such as `roots/list` — or, in the modern era, the same requests embedded as `inputRequests` in a result — and
notifications such as `notifications/tools/list_changed`).

Design notes:

* Era choice (`protocol_version=None`/"auto"): probe with `server/discover` at the newest modern version. Only
  a result listing a modern version we speak makes the era modern (and an unsupported-version error naming one,
  which is retried at it); anything else falls back to `initialize` at once: any other JSON-RPC error (a null-id
  one too, while the probe is alone in flight), HTTP 400/404/405, a result without a modern version. A probe left
  unanswered for `PROBE_GRACE_S` after it was sent is raced by `initialize` (a legacy server that ignores unknown
  methods costs about a second, not a timeout; not for a server remembered as modern, so a slow-starting one is
  not sent an `initialize` on every start); the first answer decides. A stdio server that exits on the probe
  fails with a hint to pin its protocol version. The answer goes to `era_memory`; a server remembered as legacy
  is not probed again (an unsupported-version or method-not-found refusal of its `initialize` re-probes). A pinned
  version uses exactly that era.
* Modern era: every request's `params._meta` carries the protocol version, client capabilities and client info;
  the transport's `MCP-Protocol-Version` header follows it. `-32022` (unsupported version) is retried once with a
  version from `error.data.supported` that we speak. A result without `resultType` is complete; an incomplete
  one (`inputRequests`/`requestState`) is answered with our request handlers and the original request re-sent
  (fresh id, `inputResponses`, the echoed `requestState`), at most `MAX_INPUT_ROUNDS` times.
* Lists with a positive `ttlMs` are served from a cache until it expires or a `list_changed` notification comes.
* Tools whose `x-mcp-header` annotations are invalid are dropped from `list_tools()` (a warning each); the
  valid annotations of the listed tools feed the SEP-2243 `Mcp-Param-*` headers (`transport.message_headers`).

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
from mini_claude.errors import (
    HttpStatusError,
    JsonRpcError,
    McpError,
    McpTimeoutError,
    ProtocolError,
    ServerExitedError,
    StreamLostError,
    TransportError,
)
from mini_claude.mcp import headers as mcp_headers
from mini_claude.mcp.eras import Era, EraMemory
from mini_claude.mcp.jsonrpc import METHOD_NOT_FOUND, JsonRpcSession
from mini_claude.mcp.transports.base import Transport

__all__ = [
    "DEFAULT_TOOL_TIMEOUT_MS",
    "KNOWN_PROTOCOL_VERSIONS",
    "LATEST_MODERN_VERSION",
    "LATEST_PROTOCOL_VERSION",
    "MAX_INPUT_ROUNDS",
    "MAX_LIST_PAGES",
    "MODERN_PROTOCOL_VERSIONS",
    "SUPPORTED_PROTOCOL_VERSIONS",
    "UNSUPPORTED_VERSION_CODES",
    "CallToolResult",
    "McpClient",
    "McpTool",
    "NotificationCallback",
    "ProgressCallback",
    "RequestHandler",
    "tool_timeout_s",
]

log = logging.getLogger(__name__)

# the legacy era: versions negotiated by `initialize` (newest first); LATEST_PROTOCOL_VERSION is what we offer
SUPPORTED_PROTOCOL_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
LATEST_PROTOCOL_VERSION = SUPPORTED_PROTOCOL_VERSIONS[0]
# the modern (stateless, per-request `_meta`) era, newest first
MODERN_PROTOCOL_VERSIONS = ("2026-07-28",)
LATEST_MODERN_VERSION = MODERN_PROTOCOL_VERSIONS[0]
KNOWN_PROTOCOL_VERSIONS = MODERN_PROTOCOL_VERSIONS + SUPPORTED_PROTOCOL_VERSIONS

# UnsupportedProtocolVersionError: -32022 on the wire today (the harness, the SDKs), -32004 in one spec draft
UNSUPPORTED_VERSION_CODES = frozenset({-32022, -32004})
_META_PREFIX = "io.modelcontextprotocol/"
META_PROTOCOL_VERSION = _META_PREFIX + "protocolVersion"
META_CLIENT_CAPABILITIES = _META_PREFIX + "clientCapabilities"
META_CLIENT_INFO = _META_PREFIX + "clientInfo"
META_SERVER_INFO = _META_PREFIX + "serverInfo"
_INCOMPLETE_RESULT_TYPES = frozenset({"incomplete", "input_required"})  # the spec's name, and the suite's
MAX_INPUT_ROUNDS = 10  # multi-round-trip: input rounds one request may take before we call it a server bug
PROBE_TIMEOUT_S = 10.0  # auto era: how long `server/discover` may take (its send included) before we assume legacy
PROBE_GRACE_S = 1.0  # auto era: how long a sent `server/discover` may go unanswered before `initialize` goes too
_FALLBACK_HTTP_STATUSES = frozenset({400, 404, 405})
_LIST_CHANGED = {
    "notifications/tools/list_changed": ("tools/list",),
    "notifications/prompts/list_changed": ("prompts/list",),
    "notifications/resources/list_changed": ("resources/list", "resources/templates/list"),
}

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
        protocol_version: str | None = None,
        era_memory: EraMemory | None = None,
        era_key: str | None = None,
    ) -> None:
        self.name = name
        self.transport = transport
        self.client_info = dict(client_info) if client_info else {"name": "mini-claude", "version": __version__}
        self.request_timeout_s = request_timeout_s
        pinned = None if protocol_version in (None, "", "auto") else protocol_version
        if pinned is not None and pinned not in KNOWN_PROTOCOL_VERSIONS:
            raise ProtocolError(f"protocol version {pinned!r} is not one mini-claude speaks (use auto or one of "
                                f"{', '.join(KNOWN_PROTOCOL_VERSIONS)})", server=name)
        self.requested_protocol_version = pinned  # None: choose the era automatically
        self.era_memory = era_memory
        self.era_key = era_key or name
        self.protocol_version: str | None = None
        self.era: Era | None = None  # "modern" or "legacy" once connected
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
        self._handlers: dict[str, RequestHandler] = {}
        self._probe_timeout_s = PROBE_TIMEOUT_S
        self._probe_grace_s = PROBE_GRACE_S
        self._quiet_requests: set[int] = set()  # probe ids: abandoned without notifications/cancelled
        self._tool_headers: dict[str, tuple[mcp_headers.HeaderParam, ...]] = {}
        self._list_cache: dict[str, tuple[float, list[dict[str, Any]]]] = {}  # method -> (expiry, items)
        self._list_generation: dict[str, int] = {}  # bumped by list_changed: a listing in flight is not cached

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
        self._probe_timeout_s = min(PROBE_TIMEOUT_S, timeout_s / 2)
        self._probe_grace_s = min(PROBE_GRACE_S, timeout_s / 4)
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
        pinned = self.requested_protocol_version
        if pinned is not None:
            if pinned in MODERN_PROTOCOL_VERSIONS:
                await self._discover(pinned)
            else:
                await self._initialize(pinned)
            return
        remembered = self.era_memory.recall(self.era_key) if self.era_memory is not None else None
        if remembered is not None and remembered.era == "legacy":
            try:
                await self._initialize(LATEST_PROTOCOL_VERSION)
            except JsonRpcError as exc:
                if not _may_have_turned_modern(exc):
                    raise
                log.info("%s: remembered as legacy but initialize was refused (%s); probing again", self.name,
                         exc.rpc_message)
                await self._auto_era(LATEST_MODERN_VERSION)
            self._remember()
            return
        if remembered is not None and remembered.version in MODERN_PROTOCOL_VERSIONS:
            # modern last time: confirm it, but send no racing initialize (a slow-starting modern server, e.g. a
            # Python one that takes over a second to import, would get one on every start)
            await self._auto_era(remembered.version, race=False)
        else:
            await self._auto_era(LATEST_MODERN_VERSION)
        self._remember()

    async def _auto_era(self, version: str, *, race: bool = True) -> None:
        """Probe the modern era with `server/discover`; anything but a modern answer falls back to `initialize`.

        With `race`, a probe still unanswered `_probe_grace_s` after it was sent (a legacy server that ignores
        unknown methods, or a slow one) is raced by an `initialize`, without cancelling it: the first answer
        decides. A server that handles messages in order answers the probe first, so a slow modern server is
        still found modern; the late answer to the other request is then dropped (a modern win sends no
        `notifications/initialized`). Without `race`, only the probe's own answer (or timeout) decides.
        """
        sent = asyncio.Event()
        discover = asyncio.ensure_future(self._probe_discover(version, sent.set))
        racing: asyncio.Future[Any] | None = None
        try:
            if race:
                await self._probe_grace(discover, sent)
            if not discover.done() and race:
                log.debug("%s: no answer to server/discover after %gs; sending initialize too", self.name,
                          self._probe_grace_s)
                racing = asyncio.ensure_future(self._initialize_request(LATEST_PROTOCOL_VERSION, reset=True))
            why = await self._probe_verdict(discover, racing)
            if why is None:
                return  # modern
            log.debug("%s: not a modern server (%s); using initialize", self.name, why)
            try:
                if racing is None:
                    result = await self._initialize_request(LATEST_PROTOCOL_VERSION, reset=True)
                else:
                    result = await racing
                    if self.protocol_version is not None:  # a probe retry went out after it: undo that
                        self._reset_modern()
                        version = result.get("protocolVersion") if isinstance(result, dict) else None
                        set_version = getattr(self.transport, "set_protocol_version", None)
                        if callable(set_version) and isinstance(version, str):
                            set_version(version)
            except JsonRpcError:
                if why.supported and not any(v in KNOWN_PROTOCOL_VERSIONS for v in why.supported):
                    raise ProtocolError(f"server supports protocol versions {', '.join(why.supported)}; "
                                        f"mini-claude supports {', '.join(KNOWN_PROTOCOL_VERSIONS)}",
                                        server=self.name) from None
                raise
            await self._adopt_initialize(result, LATEST_PROTOCOL_VERSION)
        finally:
            left = [task for task in (discover, racing) if task is not None and not task.done()]
            for task in left:
                task.cancel()
            if left:
                await asyncio.wait(left)

    async def _probe_grace(self, discover: asyncio.Future[Any], sent: asyncio.Event) -> None:
        """Wait until the probe is answered, or has been sent and then left unanswered for the grace period."""
        was_sent = asyncio.ensure_future(sent.wait())
        try:
            await asyncio.wait({discover, was_sent}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            was_sent.cancel()
        if not discover.done():
            await asyncio.wait({discover}, timeout=self._probe_grace_s)

    async def _probe_verdict(self, discover: asyncio.Future[Any], racing: asyncio.Future[Any] | None
                             ) -> _LegacyServer | None:
        """None once the modern era is adopted; the reason when the legacy era must be used (the racing
        `initialize`, when there is one, is then what the caller awaits). The probe's answer wins when both are
        in (it was sent first)."""
        while True:
            if discover.done():
                try:
                    result, version = discover.result()
                except _LegacyServer as why:
                    return why
                if racing is not None:
                    racing.cancel()  # its late answer is dropped; an initialize is never cancelled on the wire
                self._adopt_discover(result, version)
                return None
            if racing is not None and racing.done() and not racing.cancelled() and racing.exception() is None:
                return _LegacyServer("initialize was answered first")
            # a failed racing initialize decides nothing: the probe's answer still may
            await asyncio.wait({discover} if racing is None or racing.done() else {discover, racing},
                               return_when=asyncio.FIRST_COMPLETED)

    async def _probe_discover(self, version: str, on_sent: Callable[[], None]) -> tuple[dict[str, Any], str]:
        """The era probe: `server/discover` at `version`. Returns a result listing a modern version we speak and
        the version to use; raises `_LegacyServer` for any other answer: every
        JSON-RPC error but an unsupported-version one naming a modern version we speak (retried once at it), a
        null-id error while the probe is alone in flight, HTTP 400/404/405, a result without a modern version,
        or no answer within `_probe_timeout_s`."""
        for attempt in range(2):
            self._set_modern(version)
            request_id = self._session.next_request_id()  # no await before the request takes it
            self._quiet_requests.add(request_id)
            try:
                result = await self._session.request(
                    "server/discover", {"_meta": self._request_meta(version)}, timeout=self._probe_timeout_s,
                    on_sent=on_sent, claim_null_id_error=True)
            except JsonRpcError as exc:
                supported = _supported_versions(exc.data) if exc.code in UNSUPPORTED_VERSION_CODES else []
                mutual = [v for v in MODERN_PROTOCOL_VERSIONS if v in supported]
                if mutual and not attempt:
                    log.info("%s: server/discover: server does not take protocol %s; retrying with %s", self.name,
                             version, mutual[0])
                    version = mutual[0]
                    continue
                raise _LegacyServer(f"server/discover: error {exc.code}: {exc.rpc_message}", supported) from None
            except McpTimeoutError:
                raise _LegacyServer(f"server/discover got no answer in {self._probe_timeout_s:g}s") from None
            except ServerExitedError as exc:
                raise _exited_on_probe(exc) from None
            except StreamLostError as exc:  # the server ended the probe's response stream without an answer
                raise _LegacyServer(f"server/discover: {exc.message}") from None
            except HttpStatusError as exc:
                if exc.status in _FALLBACK_HTTP_STATUSES:
                    raise _LegacyServer(f"server/discover: HTTP {exc.status}") from None
                raise
            finally:
                self._quiet_requests.discard(request_id)  # an abandoned probe was handled before this runs
            listed = _listed_versions(result)
            mutual = [v for v in MODERN_PROTOCOL_VERSIONS if v in listed]
            if not mutual:
                # a generic `{}` (a legacy server answering any method), a non-object, or only legacy versions
                raise _LegacyServer("server/discover lists no modern version mini-claude speaks")
            assert isinstance(result, dict)
            return result, version if version in listed else mutual[0]
        raise AssertionError("unreachable")  # pragma: no cover

    async def _discover(self, version: str) -> None:
        """The pinned modern era: `server/discover` at `version` (one retry at a version the server names)."""
        self._set_modern(version)
        try:
            result = await self._modern_request("server/discover", {}, timeout=None)
        except _NoCommonVersion as exc:
            raise ProtocolError(
                f"server supports protocol versions {', '.join(exc.supported) or '(none listed)'}; mini-claude "
                f"supports {', '.join(KNOWN_PROTOCOL_VERSIONS)}", server=self.name) from None
        if not isinstance(result, dict):
            raise ProtocolError(f"server/discover result is not an object: {result!r:.200}", server=self.name)
        listed = _listed_versions(result)
        if listed and self.protocol_version not in listed:
            mutual = [v for v in MODERN_PROTOCOL_VERSIONS if v in listed]
            if not mutual:
                raise ProtocolError(f"server supports protocol versions {', '.join(listed)}, not {version}",
                                    server=self.name)
            self._set_modern(mutual[0])
        assert self.protocol_version is not None
        self._adopt_discover(result, self.protocol_version)

    def _adopt_discover(self, result: dict[str, Any], version: str) -> None:
        """Connected in the modern era at `version`: keep what `server/discover` told us."""
        self._set_modern(version)  # again: a racing initialize may have unset the transport's modern state
        capabilities = result.get("capabilities")
        meta = result.get("_meta") if isinstance(result.get("_meta"), dict) else {}
        server_info = result.get("serverInfo", meta.get(META_SERVER_INFO))
        instructions = result.get("instructions")
        self.era = "modern"
        self.server_capabilities = capabilities if isinstance(capabilities, dict) else {}
        self.server_info = server_info if isinstance(server_info, dict) else {}
        self.instructions = instructions if isinstance(instructions, str) and instructions.strip() else None
        log.debug("%s: connected (modern protocol %s, server %s %s)", self.name, self.protocol_version,
                  self.server_info.get("name"), self.server_info.get("version"))

    async def _initialize(self, offered: str) -> None:
        await self._adopt_initialize(await self._initialize_request(offered), offered)

    async def _initialize_request(self, offered: str, *, reset: bool = False) -> Any:
        """Send `initialize` (`reset`: undo the probe's modern transport state first, as it goes out beside it)."""
        if reset:
            self._reset_modern()
        params = {
            "protocolVersion": offered,
            "capabilities": self.declared_capabilities,
            "clientInfo": self.client_info,
        }
        return await self._session.request("initialize", params)

    async def _adopt_initialize(self, result: Any, offered: str) -> None:
        """Connected in the legacy era: check the `initialize` result, keep it, send `notifications/initialized`."""
        if not isinstance(result, dict):
            raise ProtocolError(f"initialize result is not an object: {result!r:.200}", server=self.name)
        version = result.get("protocolVersion")
        if version not in SUPPORTED_PROTOCOL_VERSIONS:
            raise ProtocolError(
                f"server answered protocol version {version!r} to our {offered!r}; "
                f"mini-claude supports {', '.join(SUPPORTED_PROTOCOL_VERSIONS)}", server=self.name)
        capabilities = result.get("capabilities")
        server_info = result.get("serverInfo")
        instructions = result.get("instructions")
        self.era = "legacy"
        self.protocol_version = version
        self.server_capabilities = capabilities if isinstance(capabilities, dict) else {}
        self.server_info = server_info if isinstance(server_info, dict) else {}
        self.instructions = instructions if isinstance(instructions, str) and instructions.strip() else None
        await self._session.notify("notifications/initialized")
        log.debug("%s: connected (protocol %s, server %s %s)", self.name, version, self.server_info.get("name"),
                  self.server_info.get("version"))

    def _set_modern(self, version: str) -> None:
        """Speak the modern era at `version`: the `_meta` we add and the transport's headers follow it."""
        self.protocol_version = version
        set_version = getattr(self.transport, "set_protocol_version", None)
        if callable(set_version):
            set_version(version)
        if hasattr(self.transport, "message_headers"):
            self.transport.message_headers = self._message_headers  # type: ignore[attr-defined]

    def _reset_modern(self) -> None:
        """Undo `_set_modern()` before falling back to `initialize` on the same transport."""
        self.protocol_version = None
        set_version = getattr(self.transport, "set_protocol_version", None)
        if callable(set_version):
            set_version(None)
        if getattr(self.transport, "message_headers", None) == self._message_headers:
            self.transport.message_headers = None  # type: ignore[attr-defined]

    def _message_headers(self, message: dict[str, Any]) -> Mapping[str, str]:
        return mcp_headers.message_headers(message, self._tool_headers)

    def _remember(self) -> None:
        if self.era_memory is not None and self.era is not None and self.protocol_version is not None:
            self.era_memory.remember(self.era_key, self.era, self.protocol_version)

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
        tool_headers: dict[str, tuple[mcp_headers.HeaderParam, ...]] = {}
        for raw in await self._list_all("tools/list", "tools"):
            tool = McpTool.from_wire(raw)
            if tool is None:
                log.warning("%s: ignoring a tool without a name: %.200r", self.name, raw)
                continue
            if tool.name in seen:
                log.warning("%s: ignoring a second tool named %r", self.name, tool.name)
                continue
            try:
                params = mcp_headers.tool_header_params(tool.input_schema)
            except mcp_headers.InvalidToolHeadersError as exc:  # SEP-2243: such a tool must not be offered
                log.warning("%s: ignoring tool %r: %s", self.name, tool.name, exc)
                continue
            seen.add(tool.name)
            tools.append(tool)
            if params:
                tool_headers[tool.name] = params
        self._tool_headers = tool_headers
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
            # _bind_progress() points it at the request id right before each send (retries get new ids)
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
            return await self._call(method, params, timeout=timeout)
        except _NoCommonVersion as exc:
            raise ProtocolError(
                f"{method}: server supports protocol versions {', '.join(exc.supported) or '(none listed)'}; "
                f"mini-claude speaks {', '.join(MODERN_PROTOCOL_VERSIONS)} in the modern era", server=self.name
            ) from None
        except McpError as exc:
            raise self._named(exc) from None

    async def _call(self, method: str, params: Any, *, timeout: float | None) -> Any:
        """One request in the current era; in the modern era incomplete results are answered and re-sent."""
        if self.era != "modern":
            self._bind_progress(params)
            return await self._session.request(method, params, timeout=timeout)
        original = dict(params) if isinstance(params, dict) else {}
        current = original
        for _ in range(MAX_INPUT_ROUNDS + 1):
            result = await self._modern_request(method, current, timeout=timeout)
            if not isinstance(result, dict) or result.get("resultType") not in _INCOMPLETE_RESULT_TYPES:
                return result  # no resultType means "complete"
            responses = await self._answer_input_requests(method, result.get("inputRequests"))
            # each retry is a new request: the original params plus this round's answers, nothing older
            current = {k: v for k, v in original.items() if k not in ("inputResponses", "requestState")}
            if responses is not None:
                current["inputResponses"] = responses
            if "requestState" in result:
                current["requestState"] = result["requestState"]
        raise ProtocolError(f"{method}: server still asks for input after {MAX_INPUT_ROUNDS} rounds",
                            server=self.name)

    async def _modern_request(self, method: str, params: dict[str, Any], *, timeout: float | None) -> Any:
        """Send with `_meta` at the current version; a -32022 is retried once at a version the server names
        (raises `_NoCommonVersion` when there is none we speak)."""
        for attempt in range(2):
            assert self.protocol_version is not None
            message_params = dict(params)
            given = params["_meta"] if isinstance(params.get("_meta"), dict) else {}
            message_params["_meta"] = self._request_meta(self.protocol_version, given)
            self._bind_progress(message_params)
            try:
                return await self._session.request(method, message_params, timeout=timeout)
            except JsonRpcError as exc:
                if exc.code not in UNSUPPORTED_VERSION_CODES:
                    raise
                supported = _supported_versions(exc.data)
                mutual = [v for v in MODERN_PROTOCOL_VERSIONS if v in supported]
                if not mutual:
                    raise _NoCommonVersion(supported) from None
                if attempt:
                    raise ProtocolError(
                        f"{method}: server refused protocol version {self.protocol_version} again after "
                        f"listing it as supported ({', '.join(supported)})", server=self.name) from None
                log.info("%s: %s: server does not take protocol %s; retrying with %s", self.name, method,
                         self.protocol_version, mutual[0])
                self._set_modern(mutual[0])
        raise AssertionError("unreachable")  # pragma: no cover

    def _request_meta(self, version: str, given: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """A modern request's `_meta`: the caller's (`given`) plus protocol version, capabilities, client info."""
        meta = dict(given or {})
        meta[META_PROTOCOL_VERSION] = version
        meta[META_CLIENT_CAPABILITIES] = self.declared_capabilities
        meta[META_CLIENT_INFO] = dict(self.client_info)
        return meta

    async def _answer_input_requests(self, method: str, requests: Any) -> dict[str, Any] | None:
        """Results of an incomplete result's `inputRequests`, from our server → client request handlers."""
        if requests is None:
            return None
        if not isinstance(requests, dict):
            raise ProtocolError(f"{method}: inputRequests is not an object: {requests!r:.200}", server=self.name)
        responses: dict[str, Any] = {}
        for key, request in requests.items():
            wanted = request.get("method") if isinstance(request, dict) else None
            if not isinstance(wanted, str):
                raise ProtocolError(f"{method}: input request {key!r} has no method", server=self.name)
            handler = self._handlers.get(wanted)
            if handler is None:
                raise ProtocolError(f"{method}: server asks for {wanted} input, which this client does not "
                                    "provide", server=self.name)
            responses[key] = await handler(request.get("params"))
        return responses

    def _bind_progress(self, params: Any) -> None:
        """Point a progress token at the id the next request gets (a retry gets a new id). No await follows."""
        meta = params.get("_meta") if isinstance(params, dict) else None
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        entry = self._progress.get(token) if isinstance(token, str | int) else None
        if entry is not None:
            entry.request_id = self._session.next_request_id()

    async def _notify(self, method: str, params: Any = None) -> None:
        try:
            await self._session.notify(method, params)
        except McpError as exc:
            raise self._named(exc) from None

    def invalidate_lists(self, method: str | None = None) -> None:
        """Forget cached listings (`ttlMs`): one list method's, or all of them."""
        for name in [method] if method is not None else list(self._list_cache):
            self._list_cache.pop(name, None)
            self._list_generation[name] = self._list_generation.get(name, 0) + 1

    async def _list_all(self, method: str, key: str) -> list[dict[str, Any]]:
        """All items of a paginated list method, or the cached ones while the server's `ttlMs` lasts."""
        loop = asyncio.get_running_loop()
        cached = self._list_cache.get(method)
        if cached is not None:
            if loop.time() < cached[0]:
                return list(cached[1])
            del self._list_cache[method]
        generation = self._list_generation.get(method, 0)
        ttls: list[float] = []
        items = await self._list_pages(method, key, ttls)
        ttl_s = min(ttls) / 1000.0 if ttls else 0.0  # the listing lives as long as its shortest-lived page
        if ttl_s > 0 and self._list_generation.get(method, 0) == generation:
            self._list_cache[method] = (loop.time() + ttl_s, list(items))
        return items

    async def _list_pages(self, method: str, key: str, ttls: list[float]) -> list[dict[str, Any]]:
        """Follow `nextCursor`; each page's `ttlMs` (0 when absent) goes to `ttls`. A cursor loop or endless
        pages stop it (logged)."""
        items: list[dict[str, Any]] = []
        seen: set[str] = set()
        cursor: str | None = None
        for _ in range(MAX_LIST_PAGES):
            result = await self._request(method, {"cursor": cursor} if cursor is not None else {},
                                         timeout=self.request_timeout_s)
            page = result.get(key) if isinstance(result, dict) else None
            if not isinstance(page, list):
                raise ProtocolError(f"{method}: result has no {key!r} list: {result!r:.200}", server=self.name)
            ttl = result.get("ttlMs")
            ttls.append(float(ttl) if _is_number(ttl) and math.isfinite(ttl) and ttl > 0 else 0.0)
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
        abandon = getattr(self.transport, "abandon", None)  # HTTP: stop reading that request's response stream
        if abandon is not None:
            abandon(request_id)
        if method == "initialize":  # the spec: a client MUST NOT cancel its initialize request
            return
        if request_id in self._quiet_requests:  # the era probe: a legacy server never knew it
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
        for listed in _LIST_CHANGED.get(method, ()):
            self.invalidate_lists(listed)
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


class _LegacyServer(Exception):
    """The era probe's verdict "not a modern server" (internal: it makes the client fall back to initialize).
    `supported`: the versions an unsupported-version error listed (to explain a failing fallback)."""

    def __init__(self, why: str, supported: list[str] | None = None) -> None:
        super().__init__(why)
        self.supported = supported or []


class _NoCommonVersion(Exception):
    """An unsupported-version error listing no modern version we speak (internal; `supported` as listed)."""

    def __init__(self, supported: list[str]) -> None:
        super().__init__(", ".join(supported))
        self.supported = supported


def _supported_versions(data: Any) -> list[str]:
    supported = data.get("supported") if isinstance(data, dict) else None
    return [v for v in supported if isinstance(v, str)] if isinstance(supported, list) else []


def _listed_versions(result: Any) -> list[str]:
    """The `supportedVersions` of a `server/discover` result ([] when it has none, or is no object)."""
    supported = result.get("supportedVersions") if isinstance(result, dict) else None
    return [v for v in supported if isinstance(v, str)] if isinstance(supported, list) else []


def _may_have_turned_modern(exc: JsonRpcError) -> bool:
    """An `initialize` refusal that a server now modern-only would send: unsupported version, or no such method."""
    return exc.code in UNSUPPORTED_VERSION_CODES or exc.code == METHOD_NOT_FOUND


def _exited_on_probe(exc: ServerExitedError) -> ServerExitedError:
    """The process ended on the era probe: some legacy servers exit on any method they do not know. Say how to
    skip the probe (its exit code and stderr tail kept)."""
    error = ServerExitedError("server exited on the protocol-era probe (server/discover)", server=exc.server,
                              exit_code=exc.exit_code, stderr_tail=exc.stderr_tail)
    error.message += (f"; if it is a legacy server that exits on unknown methods, pin "
                      f"\"protocolVersion\": \"{LATEST_PROTOCOL_VERSION}\" in its config")
    error.args = (f"MCP server {error.server!r}: {error.message}" if error.server else error.message,)
    return error
