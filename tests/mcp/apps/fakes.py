"""An in-memory web side for the MCP Apps session side's tests: `FakeWeb` hands out one `FakeChannel` (the
`ViewChannel` contract of mini_claude/mcp/apps/channel.py) that records what each view is sent and lets a test
post messages as the view would (`post`) and speak as the page would (`events`: its colour scheme, a mode the
user switched); `modes` records each display mode the session set. A view may answer `ui/resource-teardown` by itself (`answers_teardown`)."""

from __future__ import annotations

import asyncio
from typing import Any

from mini_claude.mcp.apps.channel import PageEvents, ViewInbox, ViewPage
from mini_claude.mcp.apps.views import View
from mini_claude.mcp.apps.web_side import view_document

PAGE = "http://127.0.0.1:1/tok/"


class FakeChannel:
    def __init__(self, inbox: ViewInbox, events: PageEvents, *, answers_teardown: bool = True) -> None:
        self.inbox = inbox
        self.events = events  # as the page: its colour scheme, a mode the user switched
        self.modes: list[tuple[str, str]] = []
        self.answers_teardown = answers_teardown
        self.pages: dict[str, ViewPage] = {}
        self.sent: dict[str, list[dict[str, Any]]] = {}
        self.removed: list[str] = []
        self.started = self.closed = False
        self._ids = 0
        self._answering: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        self.started = True

    @property
    def page_url(self) -> str:
        return PAGE

    def add_view(self, page: ViewPage) -> str:
        self.pages[page.view_id] = page
        return f"{PAGE}v/{page.view_id}/"

    def send(self, view_id: str, message: dict[str, Any]) -> None:
        self.sent.setdefault(view_id, []).append(message)
        if message.get("method") == "ui/resource-teardown" and self.answers_teardown:
            task = asyncio.ensure_future(self.inbox(view_id, {"jsonrpc": "2.0", "id": message["id"], "result": {}}))
            self._answering.add(task)
            task.add_done_callback(self._answering.discard)

    def remove_view(self, view_id: str) -> None:
        self.removed.append(view_id)

    def set_mode(self, view_id: str, mode: str) -> None:
        self.modes.append((view_id, mode))

    async def close(self) -> None:
        self.closed = True

    # ---- as the view -------------------------------------------------------------------------------------------
    async def post(self, view_id: str, method: str, params: dict[str, Any] | None = None, *,
                   request: bool = True) -> int | None:
        """Post a message as the view; returns the request's id (None for a notification)."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params or {}}
        request_id = None
        if request:
            self._ids += 1
            request_id = message["id"] = self._ids
        await self.inbox(view_id, message)
        return request_id

    def answer(self, view_id: str, request_id: int) -> dict[str, Any] | None:
        """The host's answer to the view's request `request_id`, once sent."""
        return next((m for m in self.sent.get(view_id, []) if m.get("id") == request_id and "method" not in m), None)

    def notifications(self, view_id: str) -> list[dict[str, Any]]:
        return [m for m in self.sent.get(view_id, []) if "method" in m and "id" not in m]


class FakeWeb:
    """`WebSide` in memory: the default CSP header, nothing opened (`open_browser` records the URL)."""

    def __init__(self, *, answers_teardown: bool = True) -> None:
        self.answers_teardown = answers_teardown
        self.channels: list[FakeChannel] = []
        self.opened: list[str] = []

    @property
    def channel_(self) -> FakeChannel:
        return self.channels[-1]

    def channel(self, inbox: ViewInbox, events: PageEvents) -> FakeChannel:
        self.channels.append(FakeChannel(inbox, events, answers_teardown=self.answers_teardown))
        return self.channels[-1]

    def page(self, view: View, uri: str, contents: list[dict[str, Any]], approved: tuple[str, ...],
             permissions: tuple[str, ...] = ()) -> ViewPage:
        html = view_document(uri, contents)
        return ViewPage(view_id=view.view_id, title=view.title, html=html, csp="default-src 'none'", allow="")

    def open_browser(self, url: str, mode: str, *, private: bool = False) -> bool:
        self.opened.append(url)
        return False


class PageWords:
    """`PageEvents` that records what the page said: each colour scheme (`themes`) and each mode the user switched
    (`modes`: view id, mode)."""

    def __init__(self) -> None:
        self.themes: list[str] = []
        self.modes: list[tuple[str, str]] = []

    def theme_changed(self, theme: str) -> None:
        self.themes.append(theme)

    def mode_changed(self, view_id: str, mode: str) -> None:
        self.modes.append((view_id, mode))
