"""`ListCache`: one server's paginated list methods (`tools/list`, `resources/list`, ...): following `nextCursor`
with bounds, and serving a listing from cache while the server's `ttlMs` lasts.

* Pagination is bounded: a cursor seen twice or more than `MAX_LIST_PAGES` pages ends the listing with what was
  gathered (logged), so a buggy server cannot keep us listing forever.
* A listing lives as long as its shortest-lived page's positive `ttlMs`; a `list_changed` notification (or
  `invalidate()`) ends it early, and a listing that was in flight when that happened is not cached.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Awaitable, Callable
from typing import Any

from mini_claude.errors import ProtocolError
from mini_claude.mcp.protocol import LIST_CHANGED, is_number

__all__ = ["MAX_LIST_PAGES", "ListCache", "PageRequest"]

log = logging.getLogger(__name__)

MAX_LIST_PAGES = 1000  # a listing that needs more pages than this is a server bug (endless nextCursor)

# sends one list request (method, params) and returns its result; raises like any request
PageRequest = Callable[[str, dict[str, Any]], Awaitable[Any]]


class ListCache:
    """Listings of one server. `request` sends one page's request (the client's, so errors name the server).

        lists = ListCache("demo", request)
        tools = await lists.list_all("tools/list", "tools")
        lists.invalidate_for("notifications/tools/list_changed")
    """

    def __init__(self, name: str, request: PageRequest) -> None:
        self.name = name
        self._request = request
        self._cache: dict[str, tuple[float, list[dict[str, Any]]]] = {}  # method -> (expiry, items)
        self._generation: dict[str, int] = {}  # bumped by invalidate(): a listing in flight is not cached

    def invalidate(self, method: str | None = None) -> None:
        """Forget cached listings: one list method's, or all of them."""
        for name in [method] if method is not None else list(self._cache):
            self._cache.pop(name, None)
            self._generation[name] = self._generation.get(name, 0) + 1

    def invalidate_for(self, notification: str) -> None:
        """Forget the listings a notification (`notifications/tools/list_changed`, ...) makes stale."""
        for listed in LIST_CHANGED.get(notification, ()):
            self.invalidate(listed)

    async def list_all(self, method: str, key: str) -> list[dict[str, Any]]:
        """All items of a paginated list method, or the cached ones while the server's `ttlMs` lasts."""
        loop = asyncio.get_running_loop()
        cached = self._cache.get(method)
        if cached is not None:
            if loop.time() < cached[0]:
                return list(cached[1])
            del self._cache[method]
        generation = self._generation.get(method, 0)
        ttls: list[float] = []
        items = await self._pages(method, key, ttls)
        ttl_s = min(ttls) / 1000.0 if ttls else 0.0  # the listing lives as long as its shortest-lived page
        if ttl_s > 0 and self._generation.get(method, 0) == generation:
            self._cache[method] = (loop.time() + ttl_s, list(items))
        return items

    async def _pages(self, method: str, key: str, ttls: list[float]) -> list[dict[str, Any]]:
        """Follow `nextCursor`; each page's `ttlMs` (0 when absent) goes to `ttls`. A cursor loop or endless
        pages stop it (logged)."""
        items: list[dict[str, Any]] = []
        seen: set[str] = set()
        cursor: str | None = None
        for _ in range(MAX_LIST_PAGES):
            result = await self._request(method, {"cursor": cursor} if cursor is not None else {})
            page = result.get(key) if isinstance(result, dict) else None
            if not isinstance(page, list):
                raise ProtocolError(f"{method}: result has no {key!r} list: {result!r:.200}", server=self.name)
            ttl = result.get("ttlMs")
            ttls.append(float(ttl) if is_number(ttl) and math.isfinite(ttl) and ttl > 0 else 0.0)
            items.extend(item for item in page if isinstance(item, dict))
            cursor = result.get("nextCursor")
            if cursor is None or cursor == "":
                return items
            if not isinstance(cursor, str):
                log.warning("%s: %s: nextCursor is not a string (%.50r); stopping", self.name, method, cursor)
                return items
            if cursor in seen:
                log.warning("%s: %s: nextCursor %.50r came back (a cursor loop); stopping with %d items",
                            self.name, method, cursor, len(items))
                return items
            seen.add(cursor)
        log.warning("%s: %s: still more after %d pages; stopping with %d items", self.name, method,
                    MAX_LIST_PAGES, len(items))
        return items
