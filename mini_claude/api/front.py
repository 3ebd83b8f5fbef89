"""The Python API's two UIs: what the session and the agent loop tell a program (`ApiUI`), and what MCP servers may
ask of it (`ApiHostUI`).

`ApiUI` turns the session's notices into lines for `Options.stderr` (else the `mini_claude.api` logger) and, with
`include_partial_messages`, the model's text as it streams into `stream_event` records shaped as the Messages API's
stream events. `ApiHostUI` answers servers through the program's callbacks: a form through `on_elicitation`
(declined without one), sampling through `on_sampling` (without one: allowed for the program's own in-process
servers, refused for every other), progress to `on_progress`. Nothing here prints.
"""

from __future__ import annotations

import inspect
import logging
import uuid
from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Any

from mini_claude.mcp.host import FormAnswer, FormRequest, SamplingChoice, SamplingRequest, UrlRequest

if TYPE_CHECKING:
    from mini_claude.api.options import Options
    from mini_claude.models.base import AssistantTurn
    from mini_claude.tools.base import ToolResult

__all__ = ["ApiHostUI", "ApiUI"]

log = logging.getLogger("mini_claude.api")


class ApiUI:
    """The session's notices and the agent loop's output, for a program. `emit(record)` hands a stream-json record
    on (the partial messages); `session_id()` names the session in them."""

    def __init__(self, options: Options, emit: Callable[[dict[str, Any]], None], session_id: Callable[[], str]
                 ) -> None:
        self._stderr = options.stderr
        self._partial = options.include_partial_messages
        self._emit = emit
        self._session_id = session_id
        self._streaming = False  # a text block is open in the partial stream

    # ---- SessionUI -----------------------------------------------------------------------------------------------
    def info(self, text: str) -> None:
        self._line(text, logging.INFO)

    def warn(self, text: str) -> None:
        self._line(f"warning: {text}", logging.WARNING)

    def error(self, text: str) -> None:
        self._line(f"error: {text}", logging.ERROR)

    def _line(self, text: str, level: int) -> None:
        if self._stderr is not None:
            self._stderr(text)
        else:
            log.log(level, "%s", text)

    # ---- AgentUI -------------------------------------------------------------------------------------------------
    def text_delta(self, text: str) -> None:
        if not self._partial:
            return
        if not self._streaming:
            self._streaming = True
            self._event({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})
        self._event({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}})

    def assistant_done(self, turn: AssistantTurn) -> None:
        if self._partial and self._streaming:
            self._event({"type": "content_block_stop", "index": 0})
            self._event({"type": "message_stop"})
        self._streaming = False

    def tool_started(self, name: str, args: dict[str, Any]) -> None:
        pass

    def tool_finished(self, name: str, result: ToolResult) -> None:
        pass

    def _event(self, event: dict[str, Any]) -> None:
        self._emit({"type": "stream_event", "uuid": str(uuid.uuid4()), "session_id": self._session_id(),
                    "event": event, "parent_tool_use_id": None})


class ApiHostUI:
    """What servers may ask of a program, answered by its callbacks. `own_servers()`: the names of the program's
    in-process servers (their sampling needs no consent: the program wrote them)."""

    interactive = True

    def __init__(self, options: Options, own_servers: Callable[[], Collection[str]], notice: Callable[[str], None]
                 ) -> None:
        self._options = options
        self._own = own_servers
        self._notice = notice

    async def approve_sampling(self, request: SamplingRequest) -> SamplingChoice:
        decide = self._options.on_sampling
        if decide is None:
            return SamplingChoice.ALWAYS if request.server in self._own() else SamplingChoice.DENY
        return SamplingChoice.ONCE if await decide(request) else SamplingChoice.DENY

    async def fill_form(self, request: FormRequest) -> FormAnswer:
        answer_with = self._options.on_elicitation
        if answer_with is None:
            return FormAnswer("decline")
        answer: Any = answer_with(request)
        if inspect.isawaitable(answer):
            answer = await answer
        if isinstance(answer, FormAnswer):
            return answer
        if isinstance(answer, dict):  # the protocol's shape: {"action": ..., "content": {...}}
            action = str(answer.get("action", "accept"))
            content = answer.get("content")
            return FormAnswer(action, dict(content) if isinstance(content, dict) else None)
        return FormAnswer("decline")

    async def open_url(self, request: UrlRequest) -> str:
        return "decline"  # a program has nobody to open a page for the server

    def notice(self, server: str, text: str) -> None:
        self._notice(f"MCP server {server}: {text}")

    def progress(self, call: str, progress: float, total: float | None, message: str | None) -> None:
        if self._options.on_progress is not None:
            self._options.on_progress(call, progress, total, message)
