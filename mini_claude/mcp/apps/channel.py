"""The contract between the two halves of the MCP Apps host: the web side (`loopback.py`, which serves pages and
relays JSON-RPC messages between a browser frame and Python, knowing nothing of MCP) and the session side
(`bridge.py` / `service.py`, which answers a view's requests and knows nothing of HTTP). Also the extension's fixed
names.

A view is identified by an opaque `view_id` (a short random string the session side mints). Messages are JSON-RPC
2.0 objects as plain dicts, exactly what the view posts (`window.parent.postMessage`) or receives.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

__all__ = ["DISPLAY_MODES", "EXTENSION_ID", "MIME_TYPE", "PROTOCOL_VERSION", "THEMES", "PageEvents", "ViewChannel",
           "ViewInbox", "ViewPage"]

EXTENSION_ID = "io.modelcontextprotocol/ui"
MIME_TYPE = "text/html;profile=mcp-app"
PROTOCOL_VERSION = "2026-01-26"  # the Apps protocol version the SDK's views send in `ui/initialize`
THEMES = ("light", "dark")  # the `hostContext.theme` values
DISPLAY_MODES = ("inline", "fullscreen")  # the display modes this host has (the spec's "pip" is not one)


@dataclass(frozen=True)
class ViewPage:
    """What the web side needs to put one view on screen."""

    view_id: str
    title: str  # shown above the frame: "server · tool"
    html: str  # the `ui://` resource's HTML document
    csp: str  # the exact Content-Security-Policy header the view's document is served with
    allow: str  # the inner iframe's `allow` attribute (Permission Policy), "" for none
    prefers_border: bool | None = None


# view → session: one JSON-RPC message the view posted; awaited in order per view.
ViewInbox = Callable[[str, dict[str, Any]], Awaitable[None]]


class PageEvents(Protocol):
    """page → session: what the page itself says (never a view)."""

    def theme_changed(self, theme: str) -> None:
        """The page's colour scheme (one of THEMES): when it connects and whenever the browser's changes."""

    def mode_changed(self, view_id: str, mode: str) -> None:
        """The user switched a view's display mode (one of DISPLAY_MODES) with the page's own button."""


@runtime_checkable
class ViewChannel(Protocol):
    """The web side, as the session side uses it. `loopback.ViewServer` is the real one; tests may use a fake."""

    async def start(self) -> None:
        """Bind the loopback ports (idempotent)."""

    @property
    def page_url(self) -> str:
        """The session's page, where every view of the session appears (newest first). Valid after `start`."""

    def add_view(self, page: ViewPage) -> str:
        """Put a view on the page (live pages add its frame at once); return a URL that focuses this view."""

    def send(self, view_id: str, message: dict[str, Any]) -> None:
        """Deliver a JSON-RPC message to the view (queued while no page is connected). Unknown view: ignored."""

    def remove_view(self, view_id: str) -> None:
        """Take the view's frame off the page and forget it."""

    def set_mode(self, view_id: str, mode: str) -> None:
        """Show the view inline or over the whole page (one of DISPLAY_MODES; at most one view is full screen)."""

    async def close(self) -> None:
        """Stop serving; every connection ends."""
