"""The protocol era of one connection: `Negotiator` chooses it (modern 2026-07-28 `server/discover`, or legacy
`initialize`) and keeps the version every later request follows; `EraMemory` remembers per server what worked.

Auto era (nothing pinned): probe with `server/discover` at the newest modern version. Only a result listing a
modern version we speak makes the era modern (an unsupported-version error naming one is retried at it); anything
else falls back to `initialize` at once: any other JSON-RPC error (a null-id one too, while the probe is alone in
flight), HTTP 400/404/405, a result without a modern version. A probe unanswered `PROBE_GRACE_S` after it was
sent is raced by `initialize` (a legacy server that ignores unknown methods costs a second, not a timeout; not for
a server remembered as modern, so a slow-starting one is not sent `initialize` on every start); the first answer
decides. A server remembered as legacy is not probed again (an unsupported-version or method-not-found refusal of
its `initialize` re-probes). A pinned version uses exactly that era.

A stdio server that exits during the era choice gets a hint to pin a legacy version (which skips the probe) only
when this connection showed it speaks that era: it answered the probe the legacy way (a JSON-RPC error such as
-32601, a result listing no modern version) or answered an `initialize` of ours. Any other exit — a crash on
startup, before or without reading the probe, above all — is the transport's own error (exit code, stderr tail):
an exit alone cannot tell "exits on unknown methods" from "crashed". Nor is a server remembered as legacy told to
pin: it is probed only after refusing `initialize` at the very version the hint would pin.

The two handshakes themselves, the per-request `_meta` and the -32022 retry are the base class's (`handshakes`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from typing import Any

from mini_claude.errors import (
    HttpStatusError,
    JsonRpcError,
    McpTimeoutError,
    ProtocolError,
    ServerExitedError,
    StreamLostError,
)
from mini_claude.mcp.era_memory import ERAS_FILE_NAME, Era, EraMemory, EraRecord, hashed_key
from mini_claude.mcp.handshakes import Handshakes
from mini_claude.mcp.jsonrpc import METHOD_NOT_FOUND, JsonRpcSession
from mini_claude.mcp.protocol import (
    KNOWN_PROTOCOL_VERSIONS,
    LATEST_MODERN_VERSION,
    LATEST_PROTOCOL_VERSION,
    MODERN_PROTOCOL_VERSIONS,
    UNSUPPORTED_VERSION_CODES,
    listed_versions,
    supported_versions,
)
from mini_claude.mcp.transports.base import (
    MessageHeaders,
    SupportsProtocolVersion,
    Transport,
)

__all__ = ["ERAS_FILE_NAME", "PROBE_GRACE_S", "PROBE_TIMEOUT_S", "Era", "EraMemory", "EraRecord", "Negotiator",
           "hashed_key"]

log = logging.getLogger(__name__)

PROBE_TIMEOUT_S = 10.0  # auto era: how long `server/discover` may take (its send included) before we assume legacy
PROBE_GRACE_S = 1.0  # auto era: how long a sent `server/discover` may go unanswered before `initialize` goes too
_FALLBACK_HTTP_STATUSES = frozenset({400, 404, 405})

# ---- choosing the era --------------------------------------------------------------------------------------------

class Negotiator(Handshakes):
    """The era and version of one connection, chosen by `negotiate()` and followed by every request after it.

    The client builds one over its session and transport, calls `negotiate()` from `connect()` (after starting
    both) and sends each modern-era request through `modern_request()`. What the server told us is kept by the
    base class (`era`, `version`, `hello`), as are the meanings of `capabilities`, `before_send` and
    `message_headers`.
    """

    def __init__(self, session: JsonRpcSession, transport: Transport, *, name: str, client_info: dict[str, Any],
                 capabilities: Mapping[str, Mapping[str, Any]], message_headers: MessageHeaders,
                 before_send: Callable[[dict[str, Any]], None], pinned: str | None = None,
                 era_memory: EraMemory | None = None, era_key: str | None = None) -> None:
        if pinned is not None and pinned not in KNOWN_PROTOCOL_VERSIONS:
            raise ProtocolError(f"protocol version {pinned!r} is not one mini-claude speaks (use auto or one of "
                                f"{', '.join(KNOWN_PROTOCOL_VERSIONS)})", server=name)
        super().__init__(session, transport, name=name, client_info=client_info, capabilities=capabilities,
                         message_headers=message_headers, before_send=before_send)
        self.pinned = pinned  # None: choose the era automatically
        self.era_memory = era_memory
        self.era_key = era_key or name
        self.quiet_requests: set[int] = set()  # probe ids: abandoned without notifications/cancelled
        self.probe_timeout_s = PROBE_TIMEOUT_S
        self.probe_grace_s = PROBE_GRACE_S

    async def negotiate(self, timeout_s: float) -> None:
        """Choose the era and shake hands; the whole connect is bounded by `timeout_s` (the probe by a share)."""
        self.probe_timeout_s = min(PROBE_TIMEOUT_S, timeout_s / 2)
        self.probe_grace_s = min(PROBE_GRACE_S, timeout_s / 4)
        if self.pinned is not None:
            if self.pinned in MODERN_PROTOCOL_VERSIONS:
                await self._discover(self.pinned)
            else:
                await self._initialize(self.pinned)
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

    # ---- the auto era ------------------------------------------------------------------------------------------

    async def _auto_era(self, version: str, *, race: bool = True) -> None:
        """Probe with `server/discover`; anything but a modern answer falls back to `initialize`. With `race`, an
        `initialize` joins a probe left unanswered `probe_grace_s` after it was sent, the probe not cancelled: a
        server handling messages in order answers the probe first, so a slow modern server is still found modern
        (the late answer to the other request is dropped; a modern win sends no `notifications/initialized`)."""
        sent = asyncio.Event()
        discover = asyncio.ensure_future(self._probe_discover(version, sent.set))
        # a cancellation (the startup timeout) can land in the very iteration a probe or racing initialize ends
        # with an error: that task is then done, not cancelled, and its error must still count as seen
        discover.add_done_callback(_retrieve)
        racing: asyncio.Future[Any] | None = None
        try:
            if race:
                await self._probe_grace(discover, sent)
            if not discover.done() and race:
                log.debug("%s: no answer to server/discover after %gs; sending initialize too", self.name,
                          self.probe_grace_s)
                racing = asyncio.ensure_future(self._initialize_request(LATEST_PROTOCOL_VERSION, reset=True))
                racing.add_done_callback(_retrieve)
            why = await self._probe_verdict(discover, racing)
            if why is None:
                return  # modern
            log.debug("%s: not a modern server (%s); using initialize", self.name, why)
            self._legacy_seen = self._legacy_seen or why.answered
            try:
                if racing is None:
                    result = await self._initialize_request(LATEST_PROTOCOL_VERSION, reset=True)
                else:
                    result = await racing
                    if self.version is not None:  # a probe retry went out after it: undo that
                        self._reset_modern()
                        answered = result.get("protocolVersion") if isinstance(result, dict) else None
                        if isinstance(self._transport, SupportsProtocolVersion) and isinstance(answered, str):
                            self._transport.set_protocol_version(answered)
            except JsonRpcError:
                if why.supported and not any(v in KNOWN_PROTOCOL_VERSIONS for v in why.supported):
                    raise ProtocolError(f"server supports protocol versions {', '.join(why.supported)}; "
                                        f"mini-claude supports {', '.join(KNOWN_PROTOCOL_VERSIONS)}",
                                        server=self.name) from None
                raise
            await self._adopt_initialize(result, LATEST_PROTOCOL_VERSION)
        except ServerExitedError as exc:
            if self._legacy_seen:
                raise _exited_on_probe(exc) from None
            raise  # no sign of a legacy server (e.g. it crashed on startup): its exit code and stderr say why
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
            await asyncio.wait({discover}, timeout=self.probe_grace_s)

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
                return _LegacyServer("initialize was answered first", answered=True)
            # a failed racing initialize decides nothing: the probe's answer still may
            await asyncio.wait({discover} if racing is None or racing.done() else {discover, racing},
                               return_when=asyncio.FIRST_COMPLETED)

    async def _probe_discover(self, version: str, on_sent: Callable[[], None]) -> tuple[dict[str, Any], str]:
        """The era probe at `version`: a result listing a modern version we speak, and the version to use; any
        other answer (see the module docstring), or none within `probe_timeout_s`, raises `_LegacyServer`. A
        server exiting raises its ServerExitedError (`_auto_era` decides what to say)."""
        for attempt in range(2):
            self._set_modern(version)
            request_id = self._session.next_request_id()  # no await before the request takes it
            self.quiet_requests.add(request_id)
            try:
                result = await self._session.request(
                    "server/discover", {"_meta": self.request_meta(version)}, timeout=self.probe_timeout_s,
                    on_sent=on_sent, claim_null_id_error=True)
            except JsonRpcError as exc:
                supported = supported_versions(exc.data) if exc.code in UNSUPPORTED_VERSION_CODES else []
                mutual = [v for v in MODERN_PROTOCOL_VERSIONS if v in supported]
                if mutual and not attempt:
                    log.info("%s: server/discover: server does not take protocol %s; retrying with %s", self.name,
                             version, mutual[0])
                    version = mutual[0]
                    continue
                raise _LegacyServer(f"server/discover: error {exc.code}: {exc.rpc_message}", supported,
                                    answered=True) from None
            except McpTimeoutError:
                raise _LegacyServer(f"server/discover got no answer in {self.probe_timeout_s:g}s") from None
            except StreamLostError as exc:  # the server ended the probe's response stream without an answer
                raise _LegacyServer(f"server/discover: {exc.message}") from None
            except HttpStatusError as exc:
                if exc.status in _FALLBACK_HTTP_STATUSES:
                    raise _LegacyServer(f"server/discover: HTTP {exc.status}", answered=True) from None
                raise
            finally:
                self.quiet_requests.discard(request_id)  # an abandoned probe was handled before this runs
            listed = listed_versions(result)
            mutual = [v for v in MODERN_PROTOCOL_VERSIONS if v in listed]
            if not mutual:
                # a generic `{}` (a legacy server answering any method), a non-object, or only legacy versions
                raise _LegacyServer("server/discover lists no modern version mini-claude speaks", answered=True)
            assert isinstance(result, dict)
            return result, version if version in listed else mutual[0]
        raise AssertionError("unreachable")  # pragma: no cover

    def _remember(self) -> None:
        if self.era_memory is not None and self.era is not None and self.version is not None:
            self.era_memory.remember(self.era_key, self.era, self.version)


class _LegacyServer(Exception):
    """The era probe's verdict "not a modern server" (internal: it makes the negotiator fall back to initialize).
    `supported`: the versions an unsupported-version error listed (to explain a failing fallback); `answered`:
    the server itself answered (the legacy way), rather than leaving the probe unanswered."""

    def __init__(self, why: str, supported: list[str] | None = None, *, answered: bool = False) -> None:
        super().__init__(why)
        self.supported = supported or []
        self.answered = answered


def _retrieve(task: asyncio.Future[Any]) -> None:
    """Mark a finished helper task's error as seen (whoever needed it has read it, or no longer waits for it)."""
    if not task.cancelled():
        task.exception()


def _may_have_turned_modern(exc: JsonRpcError) -> bool:
    """An `initialize` refusal that a server now modern-only would send: unsupported version, or no such method."""
    return exc.code in UNSUPPORTED_VERSION_CODES or exc.code == METHOD_NOT_FOUND


def _exited_on_probe(exc: ServerExitedError) -> ServerExitedError:
    """A server that showed it speaks the legacy era ended during the era probe: some legacy servers exit on any
    method they do not know. Say how to skip the probe (its exit code and stderr tail kept)."""
    error = ServerExitedError("server exited during the protocol-era probe (server/discover)", server=exc.server,
                              exit_code=exc.exit_code, stderr_tail=exc.stderr_tail)
    error.message += (f"; if it is a legacy server that exits on unknown methods, pin "
                      f"\"protocolVersion\": \"{LATEST_PROTOCOL_VERSION}\" in its config")
    error.args = (f"MCP server {error.server!r}: {error.message}" if error.server else error.message,)
    return error
