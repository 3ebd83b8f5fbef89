"""MCP Apps in the Python API: what a view's session side tells a program and asks of it (`ApiAppsFront`).

A view put on the page becomes a `SystemMessage` with subtype `mcp_app_view` and data `{"url", "server", "tool",
"view_id", "opened", ...}` (the browser is opened by the `mcpApps.openBrowser` setting, "auto" by default); a view's
`ui/message` becomes a queued turn, exactly as if the program had called `Client.query` with its text (at most
`MAX_QUEUED` waiting at once); a link a view asks to open is refused (nobody here can be asked first). Apps follow
the `mcpApps` setting of the files the session reads and of `Options.settings`
(`'{"mcpApps": {"enabled": false}}'` switches them off); there is no Options field of its own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mini_claude.errors import ViewRefusedError
from mini_claude.mcp.apps.service import ViewNotice
from mini_claude.mcp.apps.views import View

__all__ = ["MAX_QUEUED", "ApiAppsFront", "with_view_context"]

MAX_QUEUED = 8


class ApiAppsFront:
    """`AppsFront` for a `Client`: `emit` hands a record on as a message, `queue_turn` queues a turn (False when the
    client is closed), `queued` says how many turns wait, `warn` is the session's warning line."""

    def __init__(self, emit: Callable[[dict[str, Any]], None], queue_turn: Callable[[str], bool],
                 queued: Callable[[], int], warn: Callable[[str], None], session_id: Callable[[], str]) -> None:
        self._emit = emit
        self._queue_turn = queue_turn
        self._queued = queued
        self._warn = warn
        self._session_id = session_id

    def view_shown(self, notice: ViewNotice) -> None:
        self._emit({"type": "system", "subtype": "mcp_app_view", "url": notice.url, "server": notice.server,
                    "tool": notice.tool, "view_id": notice.view_id, "opened": notice.opened,
                    "session_id": self._session_id()})

    def note(self, text: str) -> None:
        self._warn(text)

    async def user_message(self, view: View, text: str) -> None:
        if self._queued() >= MAX_QUEUED:
            raise ViewRefusedError(f"{MAX_QUEUED} messages already wait for the agent; try again later")
        if not self._queue_turn(text):
            raise ViewRefusedError("the session has ended")

    async def confirm(self, question: str, *, server: str = "") -> bool:
        return False  # a program's session has nobody to ask


def with_view_context(turn: str | list[dict[str, Any]], blocks: list[dict[str, Any]]
                      ) -> str | list[dict[str, Any]]:
    """The turn with what views asked the model to know (`ui/update-model-context`) after its own content."""
    if not blocks:
        return turn
    own = [{"type": "text", "text": turn}] if isinstance(turn, str) else list(turn)
    return [*own, *blocks]
