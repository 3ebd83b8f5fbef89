"""The seam between the Apps service and the web side: `WebSide` is what the service needs from it (a channel, a
page for a fetched `ui://` resource, a browser), and `LoopbackWeb` is the real one over `loopback.ViewServer`,
`csp.build_view_csp` / `csp.allow_attribute` and `launcher.open_in_browser`. Tests pass their own `WebSide`.

The page is built from the `resources/read` contents: the item whose `uri` is the view's (else the first), read by
meta.py (its HTML, `_meta.ui`); the declared CSP domains are cut to what the user approved for that server
(`mcpApps.approvedDomains`; default none: the spec's default policy), and the policy applied is logged.
"""

from __future__ import annotations

import logging
from typing import Any, Protocol

from mini_claude.errors import AppsError
from mini_claude.mcp.apps.channel import PageEvents, ViewChannel, ViewInbox, ViewPage
from mini_claude.mcp.apps.meta import PERMISSION_NAMES, ViewResourceError, read_view_html, resource_meta
from mini_claude.mcp.apps.views import View

__all__ = ["LoopbackWeb", "WebSide", "view_document", "view_item"]

log = logging.getLogger(__name__)


class WebSide(Protocol):
    def channel(self, inbox: ViewInbox, events: PageEvents) -> ViewChannel: ...

    def page(self, view: View, uri: str, contents: list[dict[str, Any]], approved: tuple[str, ...],
             permissions: tuple[str, ...] = ()) -> ViewPage:
        """The view's page, given the origins and browser permissions the user approved for its server; sets
        `view.granted_csp` and `view.permissions` to what it was granted, and `view.declined_domains` /
        `view.declined_permissions` to what it declared or asked for that the user has not approved."""
        ...

    def open_browser(self, url: str, mode: str, *, private: bool = False) -> bool:
        """Open `url` in the user's browser (see launcher.py); `private`: the URL holds a secret."""
        ...


def view_item(uri: str, contents: list[dict[str, Any]]) -> dict[str, Any]:
    """The `resources/read` content item of the view: the one whose `uri` is the view's, else the first."""
    items = [item for item in contents if isinstance(item, dict)]
    item = next((i for i in items if i.get("uri") == uri), items[0] if items else None)
    if item is None:
        raise AppsError(f"resources/read {uri} returned no contents")
    return item


def view_document(uri: str, contents: list[dict[str, Any]]) -> str:
    """The view's HTML document; AppsError when there is no usable one."""
    try:
        return read_view_html(view_item(uri, contents))
    except ViewResourceError as exc:
        raise AppsError(f"{uri}: {exc}") from None


class LoopbackWeb:
    """The real web side: `loopback.ViewServer`, `csp.build_view_csp`, `launcher.open_in_browser`."""

    def channel(self, inbox: ViewInbox, events: PageEvents) -> ViewChannel:
        from mini_claude.mcp.apps.loopback import ViewServer  # the web server: loaded with the first view

        return ViewServer(inbox, events=events)

    def page(self, view: View, uri: str, contents: list[dict[str, Any]], approved: tuple[str, ...],
             permissions: tuple[str, ...] = ()) -> ViewPage:
        from mini_claude.mcp.apps.csp import allow_attribute, build_view_csp, granted_permissions

        html = view_document(uri, contents)
        meta = resource_meta(view_item(uri, contents))
        for warning in meta.warnings:
            log.info("view %s of %s: %s", uri, view.server, warning)
        if meta.domain:
            log.info("view %s of %s: _meta.ui.domain %r ignored (a loopback host has no per-view origins)", uri,
                     view.server, meta.domain)
        applied = build_view_csp(meta.csp, approved)
        log.info("view %s of %s: Content-Security-Policy %s%s", uri, view.server, applied.header,
                 f" (cut: {'; '.join(applied.dropped)})" if applied.dropped else "")
        view.granted_csp = {key: list(domains) for key, domains in applied.granted.items()}
        view.declined_domains = applied.unapproved
        view.permissions = granted_permissions(meta.permissions, permissions)
        view.declined_permissions = tuple(name for name in PERMISSION_NAMES
                                          if name in meta.permissions and name not in view.permissions)
        return ViewPage(view_id=view.view_id, title=view.title, html=html, csp=applied.header,
                        allow=allow_attribute(meta.permissions, permissions), prefers_border=meta.prefers_border)

    def open_browser(self, url: str, mode: str, *, private: bool = False) -> bool:
        from mini_claude.mcp.apps.launcher import open_in_browser

        return open_in_browser(url, mode, private=private)
