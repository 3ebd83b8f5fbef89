"""The page's side of the loopback web server (loopback.py's `ViewServer` has it as a base): the `events` stream
the session page reads (`PageStream`: each view `added`, the `live` list, the views' queued messages, the last
envelope of a superseded or closed page) and the `rpc` POSTs it makes — a view's message, into that view's inbound
queue, handed to the inbox one at a time in order by a worker; the page's own word (`{"page", "theme"}`,
`{"page", "view", "mode"}`) to `PageEvents`. The bodies are bounded (`MAX_BODY_BYTES`, `BODY_TIMEOUT_S`, 411 for
no length or a chunked body); only the current page's POSTs count (409). What each status means is in loopback.py.
`ServedView` is the server's record of a view; `ViewServer.__init__` sets every attribute `PageRelay` declares.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import socket
from collections import deque
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from mini_claude.mcp.apps.channel import DISPLAY_MODES, THEMES, PageEvents, ViewInbox, ViewPage
from mini_claude.mcp.apps.http1 import Reject, event_stream, respond

__all__ = ["BODY_TIMEOUT_S", "MAX_BODY_BYTES", "MAX_INBOUND", "MAX_QUEUED", "PageRelay", "PageStream", "ServedView",
           "envelope"]

log = logging.getLogger(__name__)

BODY_TIMEOUT_S = 10.0
MAX_BODY_BYTES = 1024 * 1024
MAX_QUEUED = 1000
MAX_INBOUND = 256
_PAGE_ID = re.compile(r"[0-9a-f]{32}")


@dataclass
class ServedView:
    """One view the server shows: its page, its own port, and the messages waiting each way."""

    page: ViewPage
    sock: socket.socket  # this view's own listening socket (its origin's port)
    listener: asyncio.Task[asyncio.AbstractServer]
    sandbox: str  # its sandbox proxy's URL (on its own port)
    queued: deque[str] = field(default_factory=lambda: deque(maxlen=MAX_QUEUED))  # SSE envelopes, serialized
    inbound: asyncio.Queue[dict[str, Any]] = field(default_factory=lambda: asyncio.Queue(MAX_INBOUND))
    worker: asyncio.Task[None] | None = None
    overflowed: bool = False  # `queued` has dropped a message (logged once)
    mode: str = "inline"  # its display mode (DISPLAY_MODES), told to a page that connects later too

    def added(self) -> dict[str, Any]:
        """What the page needs to put the view on screen (the `added` envelope)."""
        page = self.page
        return {"title": page.title, "sandbox": self.sandbox, "allow": page.allow,
                "prefersBorder": page.prefers_border, "mode": self.mode}


@dataclass
class PageStream:
    """The page connected to `events` (at most one is current)."""

    page_id: str
    control: deque[str] = field(default_factory=deque)  # added / removed envelopes for this page, in order
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    ended: str | None = None  # the last envelope to write before ending ("superseded" / "closed"); "" once written
    stream: asyncio.Task[Any] | None = None  # the connection task writing this page's stream


def envelope(**fields: Any) -> str:
    """One SSE envelope for the page, as its JSON text."""
    return json.dumps(fields, separators=(",", ":"))


class PageRelay:
    """`events` and `rpc` for `ViewServer` (see the module docstring)."""

    _inbox: ViewInbox
    _events: PageEvents | None
    _views: dict[str, ServedView]
    _page: PageStream | None
    _closed: bool

    def _end_page(self, page: PageStream, last: str) -> None:
        """`last` is the page's final envelope; its stream ends after writing it."""
        page.ended = last
        page.wake.set()
        if self._page is page:
            self._page = None

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
        if not isinstance(data, dict) or not isinstance(data.get("page"), str):
            raise Reject(400)
        if "message" not in data:  # the page's own word: its colour scheme, or a view's mode the user switched
            self._page_said(data)
            await respond(writer, 204)
            return
        if not (isinstance(data.get("message"), dict) and isinstance(data.get("view"), str)):
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

    def _page_said(self, data: dict[str, Any]) -> None:
        """`{"page", "theme"}` or `{"page", "view", "mode"}` from the current page (Reject otherwise)."""
        if self._page is None or data["page"] != self._page.page_id:
            raise Reject(409)
        if set(data) == {"page", "theme"} and data["theme"] in THEMES:
            if self._events is not None:
                self._events.theme_changed(data["theme"])
        elif set(data) == {"page", "view", "mode"} and data["mode"] in DISPLAY_MODES:
            view = self._views.get(data["view"]) if isinstance(data["view"], str) else None
            if view is None:
                raise Reject(404)
            if view.mode != data["mode"]:
                view.mode = data["mode"]
                if self._events is not None:
                    self._events.mode_changed(data["view"], data["mode"])
        else:
            raise Reject(400)

    async def _deliver(self, view_id: str, view: ServedView) -> None:
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
            self._end_page(self._page, envelope(superseded=True))
        page = PageStream(page_id, stream=asyncio.current_task())
        self._page = page
        page.control.extend(envelope(view=view_id, added=view.added())
                            for view_id, view in self._views.items())
        page.control.append(envelope(live=list(self._views)))
        try:
            await event_stream(reader, writer, page.wake, partial(self._batch, page))
        finally:
            if self._page is page:
                self._page = None

    def _batch(self, page: PageStream) -> list[str] | None:
        """What the page's stream writes next: its control envelopes, then (while it is current) queued messages;
        a page that was superseded or closed gets its last envelope instead, then None (the end)."""
        if page.ended is not None:
            last, page.ended = page.ended, ""
            return [last] if last else None
        batch = list(page.control)
        page.control.clear()
        for view in self._views.values():
            batch.extend(view.queued)
            view.queued.clear()
        return batch
