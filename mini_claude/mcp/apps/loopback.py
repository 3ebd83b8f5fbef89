"""`ViewServer`: the web side of the MCP Apps host (`channel.ViewChannel`): a small HTTP/1.1 server on plain
asyncio that shows a session's views in a browser and relays their JSON-RPC messages. It knows nothing of MCP.

Two listening sockets on 127.0.0.1, seen by the browser as two sites, so Chromium puts them in separate processes
and the host page and the views never share an origin:

    http://127.0.0.1:P1/<token>/                 the session page (pages.py): every live view, newest first
    http://127.0.0.1:P1/<token>/events           GET, text/event-stream: envelopes for the page (see pages.py)
    http://127.0.0.1:P1/<token>/rpc              POST {"page", "view", "message"} → the inbox → 204
    http://localhost:P2/<token>/v/<id>/sandbox   a view's sandbox proxy
    http://localhost:P2/<token>/v/<id>/view      the view's HTML, served with the view's own CSP header

`<token>` is one `secrets.token_urlsafe(24)` per server. Checks, in order: the `Host` header must be exactly
`127.0.0.1:P1` / `localhost:P2` (DNS rebinding) else 403; the path must carry the token and name a live view else
404 with no detail; on P1 an `Origin` header, when present, must be `http://127.0.0.1:P1`, and a POST must carry it
(CSRF) else 403. Every response has `Cache-Control: no-store`, `Referrer-Policy: no-referrer` (the token never
leaks) and `X-Content-Type-Options: nosniff`. CSPs (exact strings in `host_csp` / `proxy_csp` and the view's own):
the session page runs only its own hashed script, connects only to itself, frames only P2 and cannot be framed
(`frame-ancestors 'none'`); a proxy runs only its hashed script, connects nowhere, frames only its own view URL and
may be framed only by P1; the view gets `ViewPage.csp` verbatim plus a second header limiting its ancestors.

One page at a time: a page opens `events?page=<random id>`; a newer page supersedes the older (which is told so and
clears itself), and only the current page's POSTs are accepted (409 otherwise), so two tabs never run one view
twice. On connect the page gets every live view (`added`, oldest first, then `live`), then each view's queued
messages. `send` queues per view (at most `MAX_QUEUED`, the oldest dropped past that) and the current page's stream
drains the queues, so nothing sent while no page is connected is lost. POSTed messages go to a per-view queue whose
worker awaits `inbox(view_id, message)` one at a time, in order, so a slow handler never holds a connection open.

Bounds: header block ≤ 16 KiB read within `HEADER_TIMEOUT_S`; body ≤ `MAX_BODY_BYTES` (413 past it); ≤ `MAX_VIEWS`
live views (`add_view` raises `ViewLimitError`); ≤ `MAX_INBOUND` unhandled messages per view (429). One request per
connection (`Connection: close`). `close()` tells the page, closes both sockets and cancels every task it started.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import secrets
from collections import deque
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs

from mini_claude.mcp.apps.channel import ViewInbox, ViewPage
from mini_claude.mcp.apps.http1 import REASONS, WRITE_TIMEOUT_S, Reject, head_bytes, parse_head, respond
from mini_claude.mcp.apps.pages import (
    PROXY_SCRIPT_HASH,
    PROXY_STYLE_HASH,
    SESSION_SCRIPT_HASH,
    SESSION_STYLE_HASH,
    proxy_page,
    session_page,
)

__all__ = ["HEADER_TIMEOUT_S", "MAX_BODY_BYTES", "MAX_INBOUND", "MAX_QUEUED", "MAX_VIEWS", "ViewLimitError",
           "ViewServer"]

log = logging.getLogger(__name__)

HEADER_TIMEOUT_S = 10.0
BODY_TIMEOUT_S = 10.0
KEEPALIVE_S = 15.0
MAX_HEADER_BYTES = 16 * 1024
MAX_BODY_BYTES = 1024 * 1024
MAX_VIEWS = 32
MAX_QUEUED = 1000
MAX_INBOUND = 256
_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
_PAGE_ID = re.compile(r"[0-9a-f]{32}")
_HEADER_VALUE = re.compile(r"[\x20-\x7e]*")


class ViewLimitError(RuntimeError):
    """`add_view` refused: the server already shows `MAX_VIEWS` live views (remove one first)."""


@dataclass
class _View:
    page: ViewPage
    queued: deque[str] = field(default_factory=lambda: deque(maxlen=MAX_QUEUED))  # SSE envelopes, serialized
    inbound: asyncio.Queue[dict[str, Any]] = field(default_factory=lambda: asyncio.Queue(MAX_INBOUND))
    worker: asyncio.Task[None] | None = None
    overflowed: bool = False  # `queued` has dropped a message (logged once)


@dataclass
class _Page:
    page_id: str
    control: deque[str] = field(default_factory=deque)  # added / removed envelopes for this page, in order
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    ended: str | None = None  # the last envelope to write before ending ("superseded" / "closed"), or "" = gone
    stream: asyncio.Task[Any] | None = None  # the connection task writing this page's stream


def _envelope(**fields: Any) -> str:
    return json.dumps(fields, separators=(",", ":"))


class ViewServer:
    """The loopback web side (see the module docstring). Implements `channel.ViewChannel`."""

    def __init__(self, inbox: ViewInbox, *, host_port: int = 0, sandbox_port: int = 0) -> None:
        self._inbox = inbox
        self._ports = (host_port, sandbox_port)
        self.token = secrets.token_urlsafe(24)
        self._views: dict[str, _View] = {}
        self._page: _Page | None = None
        self._servers: list[asyncio.AbstractServer] = []
        self._tasks: set[asyncio.Task[Any]] = set()
        self._host_origin = self._sandbox_origin = ""
        self._closed = False

    # ---- ViewChannel --------------------------------------------------------------------------------------------

    async def start(self) -> None:
        if self._closed:
            raise RuntimeError("this ViewServer is closed")
        if self._servers:
            return
        host = await asyncio.start_server(self._on_host, "127.0.0.1", self._ports[0], limit=MAX_HEADER_BYTES)
        try:
            sandbox = await asyncio.start_server(self._on_sandbox, "127.0.0.1", self._ports[1],
                                                 limit=MAX_HEADER_BYTES)
        except OSError:
            host.close()
            raise
        self._servers = [host, sandbox]
        self._host_origin = f"http://127.0.0.1:{host.sockets[0].getsockname()[1]}"
        self._sandbox_origin = f"http://localhost:{sandbox.sockets[0].getsockname()[1]}"

    @property
    def page_url(self) -> str:
        self._require_started()
        return f"{self._host_origin}/{self.token}/"

    @property
    def host_origin(self) -> str:
        return self._host_origin

    @property
    def sandbox_origin(self) -> str:
        return self._sandbox_origin

    def add_view(self, page: ViewPage) -> str:
        self._require_started()
        if not _ID.fullmatch(page.view_id):
            raise ValueError("a view id is 1..64 of A-Z a-z 0-9 _ -")
        if page.view_id in self._views:
            raise ValueError(f"view {page.view_id} is already shown")
        for name, value in (("csp", page.csp), ("allow", page.allow)):
            if not _HEADER_VALUE.fullmatch(value):
                raise ValueError(f"the view's {name} must be printable ASCII on one line")
        if len(self._views) >= MAX_VIEWS:
            raise ViewLimitError(f"at most {MAX_VIEWS} views are shown at once; remove one first")
        view = _View(page)
        self._views[page.view_id] = view
        self._to_page(_envelope(view=page.view_id, added=self._added(page)))
        return f"{self.page_url}#view-{page.view_id}"

    def send(self, view_id: str, message: dict[str, Any]) -> None:
        view = self._views.get(view_id)
        if view is None:
            return
        if len(view.queued) == MAX_QUEUED and not view.overflowed:
            view.overflowed = True
            log.warning("view %s: %d messages wait for a page that is not reading; the oldest are dropped",
                        view_id, MAX_QUEUED)
        view.queued.append(_envelope(view=view_id, message=message))
        if self._page is not None:
            self._page.wake.set()

    def remove_view(self, view_id: str) -> None:
        view = self._views.pop(view_id, None)
        if view is None:
            return
        if view.worker is not None:
            view.worker.cancel()
        self._to_page(_envelope(view=view_id, removed=True))

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for server in self._servers:
            server.close()
        if self._page is not None:  # the page's stream gets a moment to write `closed`; then all is cancelled
            stream = self._page.stream
            self._end_page(self._page, _envelope(closed=True))
            if stream is not None:
                await asyncio.wait([stream], timeout=0.5)
        for task in list(self._tasks):
            task.cancel()
        for view in self._views.values():
            if view.worker is not None:
                view.worker.cancel()
        pending = [task for task in self._tasks] + [v.worker for v in self._views.values() if v.worker is not None]
        if pending:
            await asyncio.wait(pending, timeout=2.0)
        for server in self._servers:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(server.wait_closed(), 2.0)
        self._views.clear()

    # ---- the exact policies (public for tests and logs) ---------------------------------------------------------

    def host_csp(self) -> str:
        return (f"default-src 'none'; script-src {SESSION_SCRIPT_HASH}; style-src {SESSION_STYLE_HASH}; "
                f"connect-src 'self'; frame-src {self._sandbox_origin}; img-src 'none'; base-uri 'none'; "
                "form-action 'none'; frame-ancestors 'none'")

    def proxy_csp(self, view_id: str) -> str:
        return (f"default-src 'none'; script-src {PROXY_SCRIPT_HASH}; style-src {PROXY_STYLE_HASH}; "
                f"frame-src {self._view_url(view_id)}; connect-src 'none'; object-src 'none'; base-uri 'none'; "
                f"form-action 'none'; frame-ancestors {self._host_origin}")

    def view_ancestors_csp(self) -> str:
        return f"frame-ancestors {self._sandbox_origin} {self._host_origin}"

    # ---- internals: pages ---------------------------------------------------------------------------------------

    def _require_started(self) -> None:
        if not self._servers:
            raise RuntimeError("ViewServer.start() has not run")

    def _view_url(self, view_id: str) -> str:
        return f"{self._sandbox_origin}/{self.token}/v/{view_id}/view"

    def _added(self, page: ViewPage) -> dict[str, Any]:
        return {"title": page.title, "sandbox": f"{self._sandbox_origin}/{self.token}/v/{page.view_id}/sandbox",
                "allow": page.allow, "prefersBorder": page.prefers_border}

    def _to_page(self, envelope: str) -> None:
        if self._page is not None:
            self._page.control.append(envelope)
            self._page.wake.set()

    def _end_page(self, page: _Page, last: str) -> None:
        page.ended = last
        page.wake.set()
        if self._page is page:
            self._page = None

    # ---- internals: HTTP ----------------------------------------------------------------------------------------

    async def _on_host(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await self._serve(reader, writer, sandbox=False)

    async def _on_sandbox(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await self._serve(reader, writer, sandbox=True)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *, sandbox: bool) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        try:
            try:
                await self._route(reader, writer, sandbox=sandbox)
            except Reject as reject:
                await respond(writer, reject.status, REASONS[reject.status].lower().encode(),
                               [("Content-Type", "text/plain; charset=utf-8")])
        except (TimeoutError, OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
            pass
        finally:
            if task is not None:
                self._tasks.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(writer.wait_closed(), 1.0)

    async def _route(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *, sandbox: bool) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), HEADER_TIMEOUT_S)
        except asyncio.LimitOverrunError:
            raise Reject(431) from None
        method, target, headers = parse_head(head)
        origin = self._sandbox_origin if sandbox else self._host_origin
        if headers.get("host") != origin.removeprefix("http://"):
            raise Reject(403)
        path, _, query = target.partition("?")
        prefix = f"/{self.token}/"
        if not secrets.compare_digest(path[: len(prefix)].encode(), prefix.encode()):
            raise Reject(404)
        rest = path[len(prefix):]
        if sandbox:
            await self._route_sandbox(writer, method, rest)
            return
        sent_origin = headers.get("origin")
        if sent_origin is not None and sent_origin != self._host_origin:
            raise Reject(403)
        if rest == "" and method == "GET":
            await respond(writer, 200, session_page(base_path=prefix, sandbox_origin=self._sandbox_origin),
                           [("Content-Type", "text/html; charset=utf-8"),
                            ("Content-Security-Policy", self.host_csp()), ("X-Frame-Options", "DENY")])
        elif rest == "events" and method == "GET":
            await self._stream(reader, writer, parse_qs(query).get("page", [""])[0])
        elif rest == "rpc" and method == "POST":
            if sent_origin is None:
                raise Reject(403)
            await self._receive(reader, writer, headers)
        elif rest in ("", "events", "rpc"):
            raise Reject(405)
        else:
            raise Reject(404)

    async def _route_sandbox(self, writer: asyncio.StreamWriter, method: str, rest: str) -> None:
        parts = rest.split("/")
        view = self._views.get(parts[1]) if len(parts) == 3 and parts[0] == "v" else None
        if view is None or parts[2] not in ("sandbox", "view"):
            raise Reject(404)
        if method != "GET":
            raise Reject(405)
        if parts[2] == "sandbox":
            body = proxy_page(host_origin=self._host_origin, allow=view.page.allow)
            policies = [("Content-Security-Policy", self.proxy_csp(view.page.view_id))]
        else:
            body = view.page.html.encode("utf-8", "surrogatepass")
            policies = [("Content-Security-Policy", view.page.csp),
                        ("Content-Security-Policy", self.view_ancestors_csp())]
        await respond(writer, 200, body, [("Content-Type", "text/html; charset=utf-8"), *policies])

    async def _receive(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                       headers: dict[str, str]) -> None:
        if "transfer-encoding" in headers:
            raise Reject(411)
        length_text = headers.get("content-length", "")
        if not length_text.isdigit():
            raise Reject(411)
        if int(length_text) > MAX_BODY_BYTES:
            raise Reject(413)
        body = await asyncio.wait_for(reader.readexactly(int(length_text)), BODY_TIMEOUT_S)
        try:
            data = json.loads(body)
        except (ValueError, RecursionError):
            raise Reject(400) from None
        if not (isinstance(data, dict) and isinstance(data.get("message"), dict)
                and isinstance(data.get("view"), str) and isinstance(data.get("page"), str)):
            raise Reject(400)
        if self._page is None or data["page"] != self._page.page_id:
            raise Reject(409)
        view = self._views.get(data["view"])
        if view is None:
            raise Reject(404)
        try:
            view.inbound.put_nowait(data["message"])
        except asyncio.QueueFull:
            raise Reject(429) from None
        if view.worker is None or view.worker.done():
            view.worker = asyncio.create_task(self._deliver(data["view"], view))
        await respond(writer, 204)

    async def _deliver(self, view_id: str, view: _View) -> None:
        """Hand a view's POSTed messages to the inbox, one at a time, in the order they came."""
        while True:
            message = await view.inbound.get()
            try:
                await self._inbox(view_id, message)
            except Exception:
                log.exception("view %s: the session side failed on a message from the view", view_id)

    async def _stream(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, page_id: str) -> None:
        if not _PAGE_ID.fullmatch(page_id):
            raise Reject(400)
        if self._closed:
            raise Reject(404)
        if self._page is not None:
            self._end_page(self._page, _envelope(superseded=True))
        page = _Page(page_id, stream=asyncio.current_task())
        self._page = page
        writer.write(head_bytes(200, [("Content-Type", "text/event-stream; charset=utf-8")]))
        page.control.extend(_envelope(view=view_id, added=self._added(view.page))
                            for view_id, view in self._views.items())
        page.control.append(_envelope(live=list(self._views)))
        gone = asyncio.create_task(_wait_eof(reader, page))
        try:
            while True:
                page.wake.clear()
                batch = self._batch(page)
                if batch:
                    writer.write("".join(f"data: {item}\n\n" for item in batch).encode("utf-8"))
                    await asyncio.wait_for(writer.drain(), WRITE_TIMEOUT_S)
                    continue
                if page.ended is not None:
                    break
                try:
                    await asyncio.wait_for(page.wake.wait(), KEEPALIVE_S)
                except TimeoutError:
                    writer.write(b": keepalive\n\n")
                    await asyncio.wait_for(writer.drain(), WRITE_TIMEOUT_S)
        finally:
            gone.cancel()
            if self._page is page:
                self._page = None

    def _batch(self, page: _Page) -> list[str]:
        """What the page's stream writes next: its control envelopes, then (while it is current) queued messages;
        a page that was superseded or closed gets its last envelope instead."""
        if page.ended is not None:
            last, page.ended = page.ended, ""
            page.control.clear()
            return [last] if last else []
        batch = list(page.control)
        page.control.clear()
        for view in self._views.values():
            batch.extend(view.queued)
            view.queued.clear()
        return batch


async def _wait_eof(reader: asyncio.StreamReader, page: _Page) -> None:
    """Marks the page gone when the browser closes the stream (a reload, a closed tab)."""
    with contextlib.suppress(OSError):
        while await reader.read(1024):
            pass
    if page.ended is None:
        page.ended = ""
    page.wake.set()
