"""The seam between the Apps service and the web side: `WebSide` is what the service needs from it (a channel, a
page for a fetched `ui://` resource, a browser), and `LoopbackWeb` is the real one over `loopback.ViewServer`,
`csp.build_view_csp` / `csp.allow_attribute` and `launcher.open_in_browser`. Tests pass their own `WebSide`.

The page is built from the `resources/read` contents: the item whose `uri` is the view's (else the first), of the
Apps MIME type, its HTML in `text` or base64 `blob` (≤ 8 MB); its `_meta.ui` gives the declared CSP domains and
permissions, cut to what the user approved for that server (default: none, the spec's default policy).
"""

from __future__ import annotations

import base64
import binascii
import importlib
import logging
from typing import Any, Protocol

from mini_claude.errors import AppsError
from mini_claude.mcp.apps.channel import MIME_TYPE, ViewChannel, ViewInbox, ViewPage
from mini_claude.mcp.apps.views import View

__all__ = ["MAX_HTML_CHARS", "LoopbackWeb", "WebSide", "view_document"]

log = logging.getLogger(__name__)

MAX_HTML_CHARS = 8 * 1024 * 1024


class WebSide(Protocol):
    def channel(self, inbox: ViewInbox) -> ViewChannel: ...

    def page(self, view: View, uri: str, contents: list[dict[str, Any]], approved: tuple[str, ...]) -> ViewPage:
        """The view's page; sets `view.granted_csp` and `view.permissions` to what it was granted."""
        ...

    def open_browser(self, url: str, mode: str) -> bool: ...


def view_document(uri: str, contents: list[dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    """The view's HTML and its resource `_meta.ui` (may be {}); AppsError when there is no usable document."""
    items = [item for item in contents if isinstance(item, dict)]
    item = next((i for i in items if i.get("uri") == uri), items[0] if items else None)
    if item is None:
        raise AppsError(f"resources/read {uri} returned no contents")
    mime = item.get("mimeType")
    if isinstance(mime, str) and mime.split(";")[0].strip().lower() != "text/html":
        raise AppsError(f"{uri} is {mime!r}, not {MIME_TYPE!r}")
    text = item.get("text")
    if not isinstance(text, str):
        blob = item.get("blob")
        if not isinstance(blob, str):
            raise AppsError(f"{uri} has neither text nor blob")
        if len(blob) > MAX_HTML_CHARS * 4 // 3 + 4:
            raise AppsError(f"{uri} is over {MAX_HTML_CHARS // (1024 * 1024)} MB")
        try:
            text = base64.b64decode(blob, validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError) as exc:
            raise AppsError(f"{uri}: blob is not base64 UTF-8 HTML ({exc})") from None
    if len(text) > MAX_HTML_CHARS:
        raise AppsError(f"{uri} is over {MAX_HTML_CHARS // (1024 * 1024)} MB")
    meta = item.get("_meta")
    ui = meta.get("ui") if isinstance(meta, dict) else None
    return text, dict(ui) if isinstance(ui, dict) else {}


class LoopbackWeb:
    """The real web side (mini_claude.mcp.apps.loopback / csp / launcher, loaded when first needed)."""

    def channel(self, inbox: ViewInbox) -> ViewChannel:
        server: ViewChannel = _web_module("loopback").ViewServer(inbox)
        return server

    def page(self, view: View, uri: str, contents: list[dict[str, Any]], approved: tuple[str, ...]) -> ViewPage:
        html, ui = view_document(uri, contents)
        csp = _web_module("csp")
        declared = ui.get("csp") if isinstance(ui.get("csp"), dict) else {}
        applied = csp.build_view_csp(declared, list(approved))
        granted = applied.granted if isinstance(applied.granted, dict) else {}
        view.granted_csp = {str(k): [str(d) for d in v] for k, v in granted.items() if isinstance(v, (list, tuple))}
        given = ui.get("permissions")
        permissions: dict[str, Any] = dict(given) if isinstance(given, dict) else {}
        view.permissions = permissions
        if ui.get("domain"):
            log.info("view %s: _meta.ui.domain %r ignored (a loopback host has no per-view origins)", uri,
                     ui.get("domain"))
        border = ui.get("prefersBorder")
        return ViewPage(view_id=view.view_id, title=view.title, html=html, csp=str(applied.header),
                        allow=str(csp.allow_attribute(permissions)),
                        prefers_border=border if isinstance(border, bool) else None)

    def open_browser(self, url: str, mode: str) -> bool:
        return bool(_web_module("launcher").open_in_browser(url, mode))


def _web_module(name: str) -> Any:
    """One of the web side's modules (built beside this one: loaded by name so the session side stands alone)."""
    try:
        return importlib.import_module(f"mini_claude.mcp.apps.{name}")
    except ImportError as exc:
        raise AppsError(f"the MCP Apps web side is missing ({exc})") from None
