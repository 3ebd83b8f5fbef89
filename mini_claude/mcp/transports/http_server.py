"""`HttpMcpServer`: an MCP server session peer (`McpServerCore`) served over Streamable HTTP (spec 2025-11-25) —
the server side of the HTTP transport, on asyncio streams (no web framework).

One endpoint, `/mcp`:

* `POST` one JSON-RPC message. `initialize` (without a session id) opens a session and its reply carries the
  `Mcp-Session-Id` header; every later message must carry that id (none: 400, unknown or ended: 404). A
  notification or a reply (the client's answer to an elicitation) is accepted with 202. A request is answered
  with JSON when its reply is the first thing the server has for it within `JSON_WAIT_S`; otherwise (the tool
  asks the user something, reports progress, or simply takes long) with an SSE stream that carries those
  messages and ends with the reply. Batches are refused (the 2025-11-25 revision has none).
* `GET` opens the session's standalone SSE stream (one at a time: 409 for a second) for server messages that
  belong to no request.
* `DELETE` ends the session (200); its id then answers 404.

Security (the spec's transport security warning): the server binds loopback unless told otherwise; a request
whose `Host` is not this server (loopback names, or the explicit bind host; any name when bound to every
interface) is refused with 421, and one whose `Origin` is present and not a loopback origin (or the bind host) with
403 — DNS rebinding defeated both ways.
The request head is bounded (`MAX_HEAD_BYTES`), the body by `max_message_bytes()` (413) and must carry a
Content-Length (411); every read has a timeout; an SSE stream writes a comment every `KEEPALIVE_S`, so a client
that went away is noticed; a request waits at most `CALL_TIMEOUT_S` for its reply. `MCP-Protocol-Version`, when
sent after `initialize`, must be a version we speak (400 otherwise); absent, 2025-03-26 is assumed, as the spec
says. Each connection carries one request (`Connection: close`).
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
from collections.abc import Collection
from typing import Any
from urllib.parse import urlsplit

from mini_claude.mcp.transports.http_server_sessions import HttpSession, OutStream, SessionTable, route
from mini_claude.mcp.transports.http_server_wire import (
    CALL_TIMEOUT_S,
    KEEPALIVE_S,
    event,
    pump,
    reply,
    reply_json,
    rpc_error,
    start_sse,
    write,
)
from mini_claude.mcp.transports.inprocess import MessagePeer
from mini_claude.mcp.transports.limits import max_message_bytes
from mini_claude.net.http_head import HeadError, parse_request_head

__all__ = ["CALL_TIMEOUT_S", "JSON_WAIT_S", "KEEPALIVE_S", "MAX_HEAD_BYTES", "HttpMcpServer", "is_loopback"]

PATH = "/mcp"
MAX_HEAD_BYTES = 32 * 1024
HEAD_TIMEOUT_S = 10.0
BODY_TIMEOUT_S = 30.0
JSON_WAIT_S = 2.0  # a reply ready this soon goes back as JSON; else the response becomes an SSE stream

_LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})


def is_loopback(host: str) -> bool:
    """Whether `host` (a name or an address, IPv6 with or without brackets) is this machine's loopback."""
    host = host.strip("[]").lower()
    if host in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _is_wildcard(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.strip("[]")).is_unspecified
    except ValueError:
        return False


class _Request:
    def __init__(self, method: str, path: str, headers: dict[str, str], reader: asyncio.StreamReader,
                 writer: asyncio.StreamWriter) -> None:
        self.method, self.path, self.headers, self.reader, self.writer = method, path, headers, reader, writer


class HttpMcpServer:
    """Serves `peer` on `http://host:port/mcp` (see the module docstring). `start()` returns the bound URL.

        server = HttpMcpServer(core, versions=SUPPORTED_PROTOCOL_VERSIONS, port=0)
        url = await server.start()      # "http://127.0.0.1:41234/mcp"
        ...
        await server.close()
    """

    def __init__(self, peer: MessagePeer, *, versions: Collection[str], host: str = "127.0.0.1", port: int = 0,
                 max_body: int | None = None) -> None:
        self.versions = tuple(versions)  # the protocol versions the peer speaks (the MCP-Protocol-Version check)
        self.host = host
        self.port = port
        self.max_body = max_body if max_body is not None else max_message_bytes()
        self.sessions = SessionTable(peer)
        self._server: asyncio.AbstractServer | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}{PATH}"

    async def start(self) -> str:
        self._server = await asyncio.start_server(self._handle, host=self.host, port=self.port,
                                                  limit=MAX_HEAD_BYTES)
        self.port = int(self._server.sockets[0].getsockname()[1])
        return self.url

    async def close(self) -> None:
        """Stop listening, end every connection and session (their running calls are cancelled)."""
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=5.0)
        await self.sessions.close_all()
        if self._server is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2.0)
            self._server = None

    # ---- one connection ------------------------------------------------------------------------------------------

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        try:
            request = await self._read_head(reader, writer)
            if request is not None:
                await self._dispatch(request)
        except (TimeoutError, OSError, asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            if task is not None:
                self._tasks.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(writer.wait_closed(), 2.0)

    async def _read_head(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> _Request | None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), HEAD_TIMEOUT_S)
        except asyncio.LimitOverrunError:  # over the stream's limit (MAX_HEAD_BYTES)
            await reply(writer, 431, "the request head is too large")
            return None
        try:
            request = parse_request_head(head, single=("host", "origin", "content-length", "mcp-session-id"))
        except HeadError as exc:
            await reply(writer, 400, str(exc))
            return None
        return _Request(request.method, urlsplit(request.target).path, request.headers, reader, writer)

    def _host_allowed(self, host: str) -> bool:
        try:
            name = urlsplit(f"//{host}").hostname or ""
        except ValueError:
            return False
        if is_loopback(name):
            return True
        if _is_wildcard(self.host):  # bound to every interface on purpose: any name of this machine (the Origin
            return bool(name)       # check still keeps web pages out, and no session starts without it)
        return not is_loopback(self.host) and name == self.host.strip("[]").lower()

    def _origin_allowed(self, origin: str) -> bool:
        try:
            parts = urlsplit(origin)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                return False
        except ValueError:
            return False
        return is_loopback(parts.hostname) or (not is_loopback(self.host) and parts.hostname == self.host.lower())

    async def _dispatch(self, req: _Request) -> None:
        writer = req.writer
        if not self._host_allowed(req.headers.get("host", "")):
            await reply(writer, 421, "this server answers only to its own host name (DNS rebinding protection)")
            return
        origin = req.headers.get("origin")
        if origin is not None and not self._origin_allowed(origin):
            await reply(writer, 403, "requests from this origin are not allowed")
            return
        if req.path != PATH:
            await reply(writer, 404, f"the MCP endpoint is {PATH}")
            return
        if req.method == "POST":
            await self._post(req)
        elif req.method == "GET":
            await self._get(req)
        elif req.method == "DELETE":
            await self._delete(req)
        else:
            await reply(writer, 405, "use POST, GET or DELETE", {"Allow": "GET, POST, DELETE"})

    # ---- methods -------------------------------------------------------------------------------------------------

    def _session_of(self, req: _Request) -> tuple[HttpSession | None, int, str]:
        session_id = req.headers.get("mcp-session-id")
        if session_id is None:
            return None, 400, "no Mcp-Session-Id header: send initialize first"
        session = self.sessions.get(session_id)
        if session is None:
            return None, 404, "no such session (it ended, or never was): initialize a new one"
        version = req.headers.get("mcp-protocol-version")
        if version is not None and version not in self.versions:
            return None, 400, (f"unsupported MCP-Protocol-Version {version[:40]!r} (supported: "
                               f"{', '.join(self.versions)})")
        return session, 200, ""

    async def _post(self, req: _Request) -> None:
        writer = req.writer
        accept = req.headers.get("accept", "")
        if "application/json" not in accept or "text/event-stream" not in accept:
            await reply(writer, 406, "Accept must list both application/json and text/event-stream")
            return
        if "application/json" not in req.headers.get("content-type", ""):
            await reply(writer, 415, "the body must be application/json")
            return
        if "transfer-encoding" in req.headers or "content-length" not in req.headers:
            await reply(writer, 411, "send the body with a Content-Length")
            return
        try:
            length = int(req.headers["content-length"])
        except ValueError:
            length = -1
        if length < 0:
            await reply(writer, 400, "a malformed Content-Length")
            return
        if length > self.max_body:
            await reply(writer, 413, f"a message may be at most {self.max_body} bytes")
            return
        if req.headers.get("expect", "").lower() == "100-continue":
            await write(writer, b"HTTP/1.1 100 Continue\r\n\r\n")
        body = await asyncio.wait_for(req.reader.readexactly(length), BODY_TIMEOUT_S)
        try:
            message = json.loads(body)
        except (ValueError, RecursionError):
            await rpc_error(writer, 400, None, -32700, "Parse error: the body is not JSON (or nested too deeply)")
            return
        if not isinstance(message, dict):
            await rpc_error(writer, 400, None, -32600,
                             "Invalid Request: one JSON-RPC message per POST (batches are not supported)")
            return
        method = message.get("method")
        is_request = isinstance(method, str) and "id" in message
        if is_request and (isinstance(message["id"], bool) or not isinstance(message["id"], str | int)):
            await rpc_error(writer, 400, None, -32600, "Invalid Request: an id must be a string or an integer")
            return
        if method == "initialize" and is_request:
            await self._initialize(req, message)
            return
        session, status, why = self._session_of(req)
        if session is None:
            await rpc_error(writer, status, message.get("id") if is_request else None, -32600, why)
            return
        session.touch()
        if not is_request:
            assert session.peer is not None
            await session.peer.deliver(message)
            await reply(writer, 202, "")
            return
        await self._answer(req, session, message)

    async def _initialize(self, req: _Request, message: dict[str, Any]) -> None:
        if "mcp-session-id" in req.headers:
            await rpc_error(req.writer, 400, message.get("id"), -32600, "this session is already initialized")
            return
        session = await self.sessions.open()
        if session is None:
            await rpc_error(req.writer, 503, message.get("id"), -32600,
                             "too many open sessions: end one (HTTP DELETE) and try again")
            return
        await self._answer(req, session, message)

    async def _answer(self, req: _Request, session: HttpSession, message: dict[str, Any]) -> None:
        """Hand a request to the peer and write its reply: JSON when it comes at once, else an SSE stream."""
        stream = OutStream(message["id"])
        session.posts.add(stream)
        token = route.set(stream)
        try:
            assert session.peer is not None
            await session.peer.deliver(message)
        finally:
            route.reset(token)
        extra = {"Mcp-Session-Id": session.id}
        try:
            try:
                first = await asyncio.wait_for(stream.queue.get(), JSON_WAIT_S)
            except TimeoutError:
                first = None
            if first is not None and stream.is_final(first):
                await reply_json(req.writer, 200, first, extra)
                return
            await start_sse(req.writer, extra)
            if first is not None:
                await event(req.writer, first)
            await pump(req.reader, req.writer, stream)
        finally:
            stream.close()
            session.posts.discard(stream)
            session.touch()

    async def _get(self, req: _Request) -> None:
        if "text/event-stream" not in req.headers.get("accept", ""):
            await reply(req.writer, 406, "Accept must list text/event-stream")
            return
        session, status, why = self._session_of(req)
        if session is None:
            await reply(req.writer, status, why)
            return
        if session.standalone is not None and not session.standalone.closed:
            await reply(req.writer, 409, "this session's GET stream is already open")
            return
        stream = OutStream()
        session.standalone = stream
        try:
            await start_sse(req.writer, {"Mcp-Session-Id": session.id})
            await pump(req.reader, req.writer, stream, limit_s=None)
        finally:
            stream.close()
            if session.standalone is stream:
                session.standalone = None
            session.touch()

    async def _delete(self, req: _Request) -> None:
        session, status, why = self._session_of(req)
        if session is None:
            await reply(req.writer, status, why)
            return
        await self.sessions.remove(session)
        await reply(req.writer, 200, "")
