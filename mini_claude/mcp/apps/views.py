"""One view's state on the session side: which tool call it shows, what has been said to it, and what waits.

A view is born when the model calls a tool that has a `ui://` resource. The host MUST NOT send it anything before
the view's `ui/notifications/initialized`, and our tool call usually ends before the browser has even loaded the
page, so the call's input and its result (or its cancellation) are kept here and sent, in that order, once the view
says it is initialized. A view that sends `ui/initialize` again (the page was reloaded) starts over: the same input
and result are sent again after its next `initialized`.

    view = View(view_id="ab12", server="board", tool=mcp_tool, qualified="mcp__board__show", arguments={})
    view.on_initialize()                  # LOADING: nothing goes out
    view.finish({"content": [...]})       # [] while loading: kept
    view.on_initialized()                 # [tool-input, tool-result]: send these now

Also here: the view's model-context slot (`ui/update-model-context`: the last one wins) and the bound on how many
requests a view may make (`RequestRate`). No I/O.
"""

from __future__ import annotations

import enum
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mini_claude.mcp.protocol import McpTool

__all__ = ["RATE_LIMIT", "RATE_WINDOW_S", "ModelContext", "RequestRate", "View", "ViewPhase", "notification"]

RATE_LIMIT = 100  # requests a view may make in any RATE_WINDOW_S seconds (a pdf viewer reads its file in pieces)
RATE_WINDOW_S = 10.0

TOOL_INPUT = "ui/notifications/tool-input"
TOOL_RESULT = "ui/notifications/tool-result"
TOOL_CANCELLED = "ui/notifications/tool-cancelled"


class ViewPhase(enum.Enum):
    LOADING = "loading"  # on the page, not yet initialized: nothing may be sent to it
    LIVE = "live"  # initialized: notifications go out as they come
    TORN_DOWN = "torn_down"  # gone; nothing more is sent or answered


def notification(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method, "params": params}


@dataclass(frozen=True)
class ModelContext:
    """What a view last asked the model to know (`ui/update-model-context`)."""

    content: tuple[dict[str, Any], ...]
    structured: Any | None


class RequestRate:
    """At most `limit` requests in any `window_s` seconds (a runaway view is refused, not served)."""

    def __init__(self, limit: int = RATE_LIMIT, window_s: float = RATE_WINDOW_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.limit = limit
        self.window_s = window_s
        self._clock = clock
        self._times: deque[float] = deque()

    def take(self) -> bool:
        now = self._clock()
        while self._times and now - self._times[0] > self.window_s:
            self._times.popleft()
        if len(self._times) >= self.limit:
            return False
        self._times.append(now)
        return True


@dataclass
class View:
    """One rendered view of one tool call."""

    view_id: str
    server: str
    tool: McpTool
    qualified: str  # the tool's name as the model and the permission rules see it: mcp__server__tool
    arguments: dict[str, Any]
    granted_csp: dict[str, list[str]] = field(default_factory=dict)  # the declared domains the user approved
    declined_domains: tuple[str, ...] = ()  # the declared (well-formed) origins the user has not approved
    declined_permissions: tuple[str, ...] = ()  # the browser permissions it asked for that the user has not approved
    permissions: dict[str, Any] = field(default_factory=dict)  # the Permission Policy features granted
    url: str = ""
    display_mode: str = "inline"  # or "fullscreen" (channel.DISPLAY_MODES)
    phase: ViewPhase = ViewPhase.LOADING
    result: dict[str, Any] | None = None  # the whole CallToolResult, once the call ended
    cancelled: str | None = None  # why the call was cancelled, once it was
    context: ModelContext | None = None
    rate: RequestRate = field(default_factory=RequestRate)

    @property
    def title(self) -> str:
        return f"{self.server} · {self.tool.title or self.tool.name}"

    @property
    def live(self) -> bool:
        return self.phase is ViewPhase.LIVE

    def on_initialize(self) -> None:
        """`ui/initialize` (the first, or again after a reload): hold everything until `initialized`."""
        if self.phase is not ViewPhase.TORN_DOWN:
            self.phase = ViewPhase.LOADING

    def on_initialized(self) -> list[dict[str, Any]]:
        """`ui/notifications/initialized`: the messages to send now (the input, then the outcome, if known)."""
        if self.phase is ViewPhase.TORN_DOWN:
            return []
        self.phase = ViewPhase.LIVE
        out = [notification(TOOL_INPUT, {"arguments": self.arguments})]
        out.extend(self._outcome())
        return out

    def finish(self, result: dict[str, Any]) -> list[dict[str, Any]]:
        """The tool call ended with `result` (a CallToolResult as sent): what to send now ([] while loading)."""
        if self.result is not None or self.cancelled is not None:
            return []
        self.result = result
        return self._outcome() if self.live else []

    def cancel(self, reason: str) -> list[dict[str, Any]]:
        """The tool call was cancelled (interrupted, or it failed before a result): what to send now."""
        if self.result is not None or self.cancelled is not None:
            return []
        self.cancelled = reason
        return self._outcome() if self.live else []

    def tear_down(self) -> None:
        self.phase = ViewPhase.TORN_DOWN

    def _outcome(self) -> list[dict[str, Any]]:
        if self.result is not None:
            return [notification(TOOL_RESULT, self.result)]
        if self.cancelled is not None:
            return [notification(TOOL_CANCELLED, {"reason": self.cancelled})]
        return []
