"""What the agent loop tells the terminal: `AgentUI` (text, turns, tool calls), the optional `RequestUI` (a model
request in flight: the REPL's spinner) and `RetryNotices` (a failed request waiting to be sent again), `SilentUI`, and
the helpers that show a request whatever its outcome."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, Protocol, runtime_checkable

from mini_claude.models.base import (
    AssistantTurn,
    GenerationOptions,
    Model,
    RetryListener,
    RetryNotice,
    ToolSpec,
)
from mini_claude.tools.base import ToolResult

__all__ = ["AgentUI", "RequestUI", "RetryNotices", "Shown", "SilentUI", "retry_arguments", "retry_listener", "showing"]


class AgentUI(Protocol):
    """What the loop tells the terminal. All methods are cheap and synchronous."""

    def text_delta(self, text: str) -> None: ...
    def assistant_done(self, turn: AssistantTurn) -> None: ...
    def tool_started(self, name: str, args: dict[str, Any]) -> None: ...
    def tool_finished(self, name: str, result: ToolResult) -> None: ...


@runtime_checkable
class RequestUI(Protocol):
    """An AgentUI that also shows a model request in flight (the REPL's spinner): told when a request starts, with
    the estimated input tokens and what it is for ("Thinking", "Compacting conversation"), and when it has ended,
    whatever the outcome."""

    def request_started(self, input_tokens: int, activity: str = "Thinking") -> None: ...
    def request_finished(self, completed: bool) -> None: ...  # completed: False when it failed or was cancelled


@runtime_checkable
class RetryNotices(Protocol):
    """An AgentUI that shows a model request that failed and waits to be sent again: why, which retry of how many,
    and in how long (the REPL's spinner line; a line on -p's stderr). Told before each wait."""

    def model_retrying(self, notice: RetryNotice) -> None: ...


def retry_listener(ui: AgentUI) -> RetryListener | None:
    """What hears a request's retries for `ui`: its `model_retrying` when it has that capability, else None."""
    return ui.model_retrying if isinstance(ui, RetryNotices) else None


def retry_arguments(ui: AgentUI, given: RetryListener | None = None) -> dict[str, RetryListener]:
    """`Model.complete`'s `on_retry` keyword for a request shown by `ui` (`given` first): none at all when nobody
    listens, so a model that takes no `on_retry` is called as before."""
    listener = given or retry_listener(ui)
    return {"on_retry": listener} if listener is not None else {}


class SilentUI:
    """An AgentUI that shows nothing (tests, sub-agents)."""

    def text_delta(self, text: str) -> None:
        pass

    def assistant_done(self, turn: AssistantTurn) -> None:
        pass

    def tool_started(self, name: str, args: dict[str, Any]) -> None:
        pass

    def tool_finished(self, name: str, result: ToolResult) -> None:
        pass


@asynccontextmanager
async def showing(ui: AgentUI, input_tokens: int, activity: str = "Thinking") -> AsyncIterator[None]:
    """A model request in flight, shown by a `RequestUI` (told its end whatever the outcome)."""
    shows = ui if isinstance(ui, RequestUI) else None
    if shows is not None:
        shows.request_started(input_tokens, activity)
    completed = False
    try:
        yield
        completed = True
    finally:
        if shows is not None:
            shows.request_finished(completed)


class Shown:
    """`model` with each of its requests shown as `activity` (the compaction summary), its input tokens as
    `estimate` puts them."""

    def __init__(self, model: Model, ui: AgentUI, activity: str,
                 estimate: Callable[[str, list[dict[str, Any]]], int]) -> None:
        self.name = model.name
        self._model, self._ui, self._activity, self._estimate = model, ui, activity, estimate

    async def complete(self, *, system: str, messages: list[dict[str, Any]], tools: list[ToolSpec],
                       on_text: Callable[[str], None] | None = None, options: GenerationOptions | None = None,
                       on_retry: RetryListener | None = None) -> AssistantTurn:
        async with showing(self._ui, self._estimate(system, messages), self._activity):
            return await self._model.complete(system=system, messages=messages, tools=tools, on_text=on_text,
                                              options=options, **retry_arguments(self._ui, on_retry))
