"""`ViewServer`: the web side of the MCP Apps host (`channel.ViewChannel`): a small HTTP/1.1 server on plain
asyncio that shows a session's views in a browser and relays their JSON-RPC messages. It knows nothing of MCP.

Listening sockets on 127.0.0.1 only: one for the session page, and one more per live view, so that every view has
an origin of its own. (Views of different servers must not share an origin: a view could reach a same-origin
sibling through `top.frames` and act as it, for instance make it call its own server's tools.) The page and the
views are also different *sites* (`127.0.0.1` / `localhost`), so Chromium keeps them in separate processes:

    http://127.0.0.1:P/<token>/                    the session page (pages.py): every live view, newest first
    http://127.0.0.1:P/<token>/events              GET, text/event-stream: envelopes for the page (see pages.py)
    http://127.0.0.1:P/<token>/rpc                 POST {"page", "view", "message"} → the inbox → 204;
                                                   POST {"page", "theme"} / {"page", "view", "mode"} → `events`
    http://localhost:Pv/<token>/v/<id>/sandbox     view <id>'s sandbox proxy (Pv: that view's own port)
    http://localhost:Pv/<token>/v/<id>/view        the view's HTML, served with the view's own CSP header

`<token>` is one `secrets.token_urlsafe(24)` per server. Checks, in order: the `Host` header must be exactly
`127.0.0.1:P` / `localhost:Pv` (DNS rebinding) else 403; the path must carry the token (and, on Pv, that view's
id) else 404 with no detail; on P an `Origin` header, when present, must be `http://127.0.0.1:P`, a POST must carry
it (CSRF), and a browser's `Sec-Fetch-Site` must be `same-origin` for `events` / `rpc` (`none` is also fine for the
page itself), else 403; on Pv a browser's `Sec-Fetch-Dest` must be `iframe`. Every response has `Cache-Control:
no-store`, `Referrer-Policy: no-referrer` (the token never leaks) and `X-Content-Type-Options: nosniff`. CSPs
(exact strings in `host_csp` / `proxy_csp` / `view_ancestors_csp`): the session page runs only its own hashed
script, connects only to itself, frames only `http://localhost:*` and cannot be framed; a proxy runs only its
hashed script, connects nowhere, frames only its own view's URL and may be framed only by the page; the view gets
`ViewPage.csp` verbatim plus a second header naming its only allowed ancestors (its proxy and the page).

One page at a time: a page opens `events?page=<random id>`; a newer page supersedes the older (which is told so and
clears itself), and only the current page's POSTs are accepted (409 otherwise), so two tabs never run one view
twice. On connect the page gets every live view (`added`, oldest first, then `live`), then each view's queued
messages. `send` queues per view (at most `MAX_QUEUED`, the oldest dropped past that) and the current page's stream
drains the queues, so nothing sent while no page is connected is lost. POSTed messages go to a per-view queue whose
worker awaits `inbox(view_id, message)` one at a time, in order, so a slow handler never holds a connection open.

Bounds: header block ≤ 16 KiB read within `HEADER_TIMEOUT_S`; body ≤ `MAX_BODY_BYTES` (413 past it); ≤ `MAX_VIEWS`
live views (`add_view` raises `ViewLimitError`); ≤ `MAX_INBOUND` unhandled messages per view (429). One request per
connection (`Connection: close`). `close()` tells the page, closes every socket and cancels every task it started.
All methods run on the event loop that called `start()`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import secrets
import socket
from functools import partial
from typing import Any
from urllib.parse import parse_qs

from mini_claude.mcp.apps.channel import DISPLAY_MODES, PageEvents, ViewInbox, ViewPage
from mini_claude.mcp.apps.http1 import REASONS, Reject, parse_head, respond
from mini_claude.mcp.apps.pages import (
    PROXY_SCRIPT_HASH,
    PROXY_STYLE_HASH,
    SESSION_SCRIPT_HASH,
    SESSION_STYLE_HASH,
    proxy_page,
    session_page,
)
from mini_claude.mcp.apps.relay import (
    MAX_BODY_BYTES,
    MAX_INBOUND,
    MAX_QUEUED,
    PageRelay,
    PageStream,
    ServedView,
    envelope,
)

__all__ = ["HEADER_TIMEOUT_S", "MAX_BODY_BYTES", "MAX_INBOUND", "MAX_QUEUED", "MAX_VIEWS", "ViewLimitError",
           "ViewServer"]

log = logging.getLogger(__name__)

HEADER_TIMEOUT_S = 10.0
MAX_HEADER_BYTES = 16 * 1024
MAX_VIEWS = 32
_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
_HEADER_VALUE = re.compile(r"[\x20-\x7e]*")


class ViewLimitError(RuntimeError):
    """`add_view` refused: the server already shows `MAX_VIEWS` live views (remove one first)."""


class ViewServer(PageRelay):
    """The loopback web side (see the module docstring). Implements `channel.ViewChannel`."""

    def __init__(self, inbox: ViewInbox, *, events: PageEvents | None = None, host_port: int = 0,
                 sandbox_port: int = 0) -> None:
        """`events` hears what the page says of itself (its colour scheme, a view's display mode the user
        switched); `host_port` pins the page's port; `sandbox_port` (when not 0) makes views take the first free
        port of `sandbox_port … sandbox_port + MAX_VIEWS - 1` instead of an ephemeral one. Nothing listens before
        `start`."""
        self._inbox = inbox
        self._events = events
        self._host_port = host_port
        self._sandbox_port = sandbox_port
        self.token = secrets.token_urlsafe(24)
        self._views: dict[str, ServedView] = {}
        self._page: PageStream | None = None
        self._server: asyncio.AbstractServer | None = None
        self._connections: dict[asyncio.Task[Any], asyncio.StreamWriter] = {}
        self._host_origin = ""
        self._closed = False

    # ---- ViewChannel --------------------------------------------------------------------------------------------

    async def start(self) -> None:
        if self._closed:
            raise RuntimeError("this ViewServer is closed")
        if self._server is not None:
            return
        self._server = await asyncio.start_server(partial(self._serve, view_id=None), "127.0.0.1", self._host_port,
                                                  limit=MAX_HEADER_BYTES)
        self._host_origin = f"http://127.0.0.1:{self._server.sockets[0].getsockname()[1]}"

    @property
    def page_url(self) -> str:
        self._require_started()
        return f"{self._host_origin}/{self.token}/"

    @property
    def host_origin(self) -> str:
        return self._host_origin

    def view_origin(self, view_id: str) -> str:
        """The origin view `view_id` and its proxy are served from (`http://localhost:Pv`); "" for no such view."""
        view = self._views.get(view_id)
        return f"http://localhost:{view.sock.getsockname()[1]}" if view is not None else ""

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
        sock = self._bind_view_socket()
        listener = asyncio.get_running_loop().create_task(asyncio.start_server(
            partial(self._serve, view_id=page.view_id), sock=sock, limit=MAX_HEADER_BYTES))
        sandbox = f"http://localhost:{sock.getsockname()[1]}/{self.token}/v/{page.view_id}/sandbox"
        view = ServedView(page, sock, listener, sandbox)
        self._views[page.view_id] = view
        self._to_page(envelope(view=page.view_id, added=view.added()))
        return f"{self.page_url}#view-{page.view_id}"

    def send(self, view_id: str, message: dict[str, Any]) -> None:
        view = self._views.get(view_id)
        if view is None:
            return
        if len(view.queued) == MAX_QUEUED and not view.overflowed:
            view.overflowed = True
            log.warning("view %s: %d messages wait for a page that is not reading; the oldest are dropped",
                        view_id, MAX_QUEUED)
        view.queued.append(envelope(view=view_id, message=message))
        if self._page is not None:
            self._page.wake.set()

    def set_mode(self, view_id: str, mode: str) -> None:
        view = self._views.get(view_id)
        if view is not None and mode in DISPLAY_MODES and view.mode != mode:
            view.mode = mode
            self._to_page(envelope(view=view_id, mode=mode))

    def remove_view(self, view_id: str) -> None:
        view = self._views.pop(view_id, None)
        if view is None:
            return
        _stop_view(view)
        self._to_page(envelope(view=view_id, removed=True))

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._server is not None:
            self._server.close()
        for view in self._views.values():
            _stop_view(view)
        if self._page is not None:  # the page's stream gets a moment to write `closed`
            stream = self._page.stream
            self._end_page(self._page, envelope(closed=True))
            if stream is not None:
                await asyncio.wait([stream], timeout=0.5)
        # Open connections are cut (so their handlers end on their own: a cancelled stream handler is logged as an
        # error by asyncio), then whatever still runs is cancelled.
        for writer in self._connections.values():
            writer.transport.abort()
        pending = [*self._connections, *(t for v in self._views.values() for t in (v.worker, v.listener) if t)]
        if pending:
            await asyncio.wait(pending, timeout=2.0)
        for task in [*self._connections, *pending]:
            task.cancel()
        if self._server is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2.0)
        self._views.clear()

    # ---- the exact policies (public for tests and logs) ---------------------------------------------------------

    def host_csp(self) -> str:
        """The session page's CSP."""
        return (f"default-src 'none'; script-src {SESSION_SCRIPT_HASH}; style-src {SESSION_STYLE_HASH}; "
                "connect-src 'self'; frame-src http://localhost:*; img-src 'none'; base-uri 'none'; "
                "form-action 'none'; frame-ancestors 'none'")

    def proxy_csp(self, view_id: str) -> str:
        """View `view_id`'s proxy's CSP (no looser than any view's in network terms)."""
        return (f"default-src 'none'; script-src {PROXY_SCRIPT_HASH}; style-src {PROXY_STYLE_HASH}; "
                f"frame-src {self._view_url(view_id)}; connect-src 'none'; object-src 'none'; base-uri 'none'; "
                f"form-action 'none'; frame-ancestors {self._host_origin}")

    def view_ancestors_csp(self, view_id: str) -> str:
        """The second CSP header of view `view_id`'s document: who may frame it."""
        return f"frame-ancestors {self.view_origin(view_id)} {self._host_origin}"

    # ---- internals: pages ---------------------------------------------------------------------------------------

    def _require_started(self) -> None:
        if self._server is None or self._closed:
            raise RuntimeError("ViewServer.start() has not run, or close() has")

    def _bind_view_socket(self) -> socket.socket:
        """A listening socket for a new view: ephemeral, or the first free one of the pinned range."""
        candidates = [0] if not self._sandbox_port else range(self._sandbox_port, self._sandbox_port + MAX_VIEWS)
        error: OSError | None = None
        for port in candidates:
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                sock.bind(("127.0.0.1", port))
                sock.listen(16)
                sock.setblocking(False)
                return sock
            except OSError as exc:
                sock.close()
                error = exc
        raise OSError(f"no free port for a view in {self._sandbox_port}..{self._sandbox_port + MAX_VIEWS - 1}: "
                      f"{error}")

    def _view_url(self, view_id: str) -> str:
        return f"{self.view_origin(view_id)}/{self.token}/v/{view_id}/view"

    def _to_page(self, envelope: str) -> None:
        if self._page is not None:
            self._page.control.append(envelope)
            self._page.wake.set()

    # ---- internals: HTTP ----------------------------------------------------------------------------------------

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *,
                     view_id: str | None) -> None:
        """One connection to the page's port (`view_id` None) or to a view's own port."""
        task = asyncio.current_task()
        if task is not None:
            self._connections[task] = writer
        try:
            try:
                await self._route(reader, writer, view_id)
            except Reject as reject:
                await respond(writer, reject.status, REASONS[reject.status].lower().encode(),
                               [("Content-Type", "text/plain; charset=utf-8")])
        except (TimeoutError, OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
            pass
        finally:
            if task is not None:
                self._connections.pop(task, None)
            writer.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(writer.wait_closed(), 1.0)

    async def _route(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, view_id: str | None) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), HEADER_TIMEOUT_S)
        except asyncio.LimitOverrunError:
            raise Reject(431) from None
        method, target, headers = parse_head(head)
        origin = self._host_origin if view_id is None else self.view_origin(view_id)
        if not origin or headers.get("host") != origin.removeprefix("http://"):
            raise Reject(403)
        path, _, query = target.partition("?")
        prefix = f"/{self.token}/"
        if not secrets.compare_digest(path[: len(prefix)].encode(), prefix.encode()):
            raise Reject(404)
        rest = path[len(prefix):]
        if view_id is not None:
            await self._route_view(writer, view_id, method, rest, headers)
            return
        sent_origin = headers.get("origin")
        if sent_origin is not None and sent_origin != self._host_origin:
            raise Reject(403)
        site = headers.get("sec-fetch-site")
        if site is not None and site != "same-origin" and not (rest == "" and site == "none"):
            raise Reject(403)
        if rest == "" and method == "GET":
            await respond(writer, 200, session_page(base_path=prefix),
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

    async def _route_view(self, writer: asyncio.StreamWriter, view_id: str, method: str, rest: str,
                          headers: dict[str, str]) -> None:
        parts = rest.split("/")
        view = self._views.get(view_id)
        if view is None or len(parts) != 3 or parts[:2] != ["v", view_id] or parts[2] not in ("sandbox", "view"):
            raise Reject(404)
        if method != "GET":
            raise Reject(405)
        if headers.get("sec-fetch-dest", "iframe") != "iframe":
            raise Reject(403)
        if parts[2] == "sandbox":
            body = proxy_page(host_origin=self._host_origin, allow=view.page.allow)
            policies = [("Content-Security-Policy", self.proxy_csp(view.page.view_id))]
        else:
            body = view.page.html.encode("utf-8", "surrogatepass")
            policies = [("Content-Security-Policy", view.page.csp),
                        ("Content-Security-Policy", self.view_ancestors_csp(view_id))]
        await respond(writer, 200, body, [("Content-Type", "text/html; charset=utf-8"), *policies])

def _stop_view(view: ServedView) -> None:
    """Stop serving a view: its listener (or the task still starting it), its socket, its inbox worker."""
    if view.worker is not None:
        view.worker.cancel()
    if view.listener.done() and not view.listener.cancelled() and view.listener.exception() is None:
        view.listener.result().close()
    else:
        view.listener.cancel()
    view.sock.close()
