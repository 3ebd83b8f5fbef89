"""The two handshakes of the protocol eras and the version every later request follows: `Handshakes` is the base
of `negotiation.Negotiator` (which chooses the era) and holds what a connection was told.

Modern era (2026-07-28): `server/discover`; every request's `params._meta` carries the protocol version, client
capabilities and client info; the transport's `MCP-Protocol-Version` header follows the version; -32022
(unsupported version) is retried once with a version from `error.data.supported` that we speak. Legacy era:
`initialize`, its answer checked against the versions we support, then `notifications/initialized`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from mini_claude.errors import JsonRpcError, ProtocolError
from mini_claude.mcp.era_memory import Era
from mini_claude.mcp.jsonrpc import JsonRpcSession
from mini_claude.mcp.protocol import (
    KNOWN_PROTOCOL_VERSIONS,
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_PROTOCOL_VERSION,
    MODERN_PROTOCOL_VERSIONS,
    SUPPORTED_PROTOCOL_VERSIONS,
    UNSUPPORTED_VERSION_CODES,
    ServerHello,
    listed_versions,
    supported_versions,
)
from mini_claude.mcp.transports.base import (
    MessageHeaders,
    SupportsMessageHeaders,
    SupportsProtocolVersion,
    Transport,
)

__all__ = ["Handshakes"]

# the negotiator's logger: records keep the name they had before this part was split out of negotiation.py
log = logging.getLogger("mini_claude.mcp.negotiation")


class Handshakes:
    """One connection's handshakes and its era and version once connected: `era`, `version`, `hello`
    (capabilities, serverInfo, instructions). `capabilities` is the client's own declaration (read at each use: the
    client fills it in before connecting); `before_send(params)` runs right before each modern request goes out;
    `message_headers` is the producer a header-capable transport gets.
    """

    def __init__(self, session: JsonRpcSession, transport: Transport, *, name: str, client_info: dict[str, Any],
                 capabilities: Mapping[str, Mapping[str, Any]], message_headers: MessageHeaders,
                 before_send: Callable[[dict[str, Any]], None]) -> None:
        self.name = name
        self.client_info = client_info
        self.era: Era | None = None  # "modern" or "legacy" once connected
        self.version: str | None = None
        self.hello = ServerHello()
        self._session = session
        self._transport = transport
        self._capabilities = capabilities
        self._message_headers = message_headers
        self._before_send = before_send
        self._legacy_seen = False  # this server showed it speaks the legacy era (see negotiation._exited_on_probe)

    def declared_capabilities(self) -> dict[str, Any]:
        """A copy of the client capabilities we declare (in `initialize`, or in each modern `_meta`)."""
        return {key: dict(value) for key, value in self._capabilities.items()}

    async def modern_request(self, method: str, params: dict[str, Any], *, timeout: float | None,
                             handshake: bool = False) -> Any:
        """Send with `_meta` at the current version; a -32022 is retried once at a version the server names.
        No version in common is a ProtocolError (worded for the handshake with `handshake`)."""
        for attempt in range(2):
            assert self.version is not None
            message_params = dict(params)
            given = params["_meta"] if isinstance(params.get("_meta"), dict) else {}
            message_params["_meta"] = self.request_meta(self.version, given)
            self._before_send(message_params)
            try:
                return await self._session.request(method, message_params, timeout=timeout)
            except JsonRpcError as exc:
                if exc.code not in UNSUPPORTED_VERSION_CODES:
                    raise
                supported = supported_versions(exc.data)
                mutual = [v for v in MODERN_PROTOCOL_VERSIONS if v in supported]
                if not mutual:
                    listed = ", ".join(supported) or "(none listed)"
                    ours = (f"supports {', '.join(KNOWN_PROTOCOL_VERSIONS)}" if handshake else
                            f"speaks {', '.join(MODERN_PROTOCOL_VERSIONS)} in the modern era")
                    raise ProtocolError(f"{'' if handshake else method + ': '}server supports protocol versions "
                                        f"{listed}; mini-claude {ours}", server=self.name) from None
                if attempt:
                    raise ProtocolError(
                        f"{method}: server refused protocol version {self.version} again after "
                        f"listing it as supported ({', '.join(supported)})", server=self.name) from None
                log.info("%s: %s: server does not take protocol %s; retrying with %s", self.name, method,
                         self.version, mutual[0])
                self._set_modern(mutual[0])
        raise AssertionError("unreachable")  # pragma: no cover

    def request_meta(self, version: str, given: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """A modern request's `_meta`: the caller's (`given`) plus protocol version, capabilities, client info."""
        meta = dict(given or {})
        meta[META_PROTOCOL_VERSION] = version
        meta[META_CLIENT_CAPABILITIES] = self.declared_capabilities()
        meta[META_CLIENT_INFO] = dict(self.client_info)
        return meta

    # ---- the two handshakes ------------------------------------------------------------------------------------

    async def _discover(self, version: str) -> None:
        """The pinned modern era: `server/discover` at `version` (one retry at a version the server names)."""
        self._set_modern(version)
        result = await self.modern_request("server/discover", {}, timeout=None, handshake=True)
        if not isinstance(result, dict):
            raise ProtocolError(f"server/discover result is not an object: {result!r:.200}", server=self.name)
        listed = listed_versions(result)
        if listed and self.version not in listed:
            mutual = [v for v in MODERN_PROTOCOL_VERSIONS if v in listed]
            if not mutual:
                raise ProtocolError(f"server supports protocol versions {', '.join(listed)}, not {version}",
                                    server=self.name)
            self._set_modern(mutual[0])
        assert self.version is not None
        self._adopt_discover(result, self.version)

    def _adopt_discover(self, result: dict[str, Any], version: str) -> None:
        """Connected in the modern era at `version`: keep what `server/discover` told us."""
        self._set_modern(version)  # again: a racing initialize may have unset the transport's modern state
        self.era, self.hello = "modern", ServerHello.from_wire(result, modern=True)
        log.debug("%s: connected (modern protocol %s, server %s %s)", self.name, self.version,
                  self.hello.info.get("name"), self.hello.info.get("version"))

    async def _initialize(self, offered: str) -> None:
        await self._adopt_initialize(await self._initialize_request(offered), offered)

    async def _initialize_request(self, offered: str, *, reset: bool = False) -> Any:
        """Send `initialize` (`reset`: undo the probe's modern transport state first, as it goes out beside it)."""
        if reset:
            self._reset_modern()
        params = {
            "protocolVersion": offered,
            "capabilities": self.declared_capabilities(),
            "clientInfo": self.client_info,
        }
        result = await self._session.request("initialize", params)
        self._legacy_seen = True  # it answered `initialize`: a legacy-era server
        return result

    async def _adopt_initialize(self, result: Any, offered: str) -> None:
        """Connected in the legacy era: check the `initialize` result, keep it, send `notifications/initialized`."""
        if not isinstance(result, dict):
            raise ProtocolError(f"initialize result is not an object: {result!r:.200}", server=self.name)
        version = result.get("protocolVersion")
        if not isinstance(version, str) or version not in SUPPORTED_PROTOCOL_VERSIONS:
            raise ProtocolError(
                f"server answered protocol version {version!r} to our {offered!r}; "
                f"mini-claude supports {', '.join(SUPPORTED_PROTOCOL_VERSIONS)}", server=self.name)
        self.era, self.version, self.hello = "legacy", version, ServerHello.from_wire(result, modern=False)
        await self._session.notify("notifications/initialized")
        log.debug("%s: connected (protocol %s, server %s %s)", self.name, version, self.hello.info.get("name"),
                  self.hello.info.get("version"))

    # ---- transport state ---------------------------------------------------------------------------------------

    def _set_modern(self, version: str) -> None:
        """Speak the modern era at `version`: the `_meta` we add and the transport's headers follow it."""
        self.version = version
        transport = self._transport
        if isinstance(transport, SupportsProtocolVersion):
            transport.set_protocol_version(version)
        if isinstance(transport, SupportsMessageHeaders):
            transport.message_headers = self._message_headers

    def _reset_modern(self) -> None:
        """Undo `_set_modern()` before falling back to `initialize` on the same transport."""
        self.version = None
        transport = self._transport
        if isinstance(transport, SupportsProtocolVersion):
            transport.set_protocol_version(None)
        if isinstance(transport, SupportsMessageHeaders) and transport.message_headers == self._message_headers:
            transport.message_headers = None
