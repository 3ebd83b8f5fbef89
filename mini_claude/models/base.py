"""The `Model` protocol and the data that crosses it.

The conversation history is kept in Anthropic Messages format (plain dicts): `{"role": "user"|"assistant",
"content": [blocks]}` with `text`, `image`, `tool_use` and `tool_result` blocks, and the assistant's `thinking`
(with its `signature`) and `redacted_thinking` blocks, kept exactly as the API sent them. Every backend converts to
and from its own wire format at its edge (one without thinking drops those blocks); the agent only ever sees this
one shape.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

__all__ = ["SUMMARY_SYSTEM_PROMPT", "THINKING_TYPES", "AssistantTurn", "Closable", "GenerationOptions", "LoadsReferencedTools",
           "Model", "PlanAware", "RetryListener", "RetryNotice", "Switchable", "ToolCounter", "ToolSpec", "Usage",
           "loaded_text", "tool_references"]

THINKING_TYPES = frozenset({"thinking", "redacted_thinking"})  # the model's reasoning: returned, never shown as text

# The system prompt of the agent's request to summarise its own history (compaction). Shared here so that the
# offline mock model can recognise such a request and answer it without using a scripted turn.
SUMMARY_SYSTEM_PROMPT = ("You summarise a coding conversation so that it can continue from the summary alone. Keep: "
                         "the user's goals and instructions, decisions made, files read or changed and how, "
                         "commands run and their outcomes, errors met, and what is left to do. Be specific and "
                         "brief.")


@dataclass(frozen=True)
class ToolSpec:
    """A tool definition as sent to the model. `defer_loading`: the API loads it where a tool result references it
    (a `tool_reference` block: Anthropic's deferred tools), not up front."""

    name: str
    description: str
    input_schema: dict[str, Any]
    defer_loading: bool = False


@dataclass(frozen=True)
class GenerationOptions:
    """Per-request settings a caller may ask for (MCP sampling does); None leaves the backend's own. A backend
    whose API has no such setting ignores it (the Anthropic Messages API takes no temperature)."""

    max_tokens: int | None = None
    temperature: float | None = None
    stop_sequences: tuple[str, ...] = ()


@dataclass
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0  # input read from the prompt cache (Anthropic)
    cache_write_tokens: int = 0  # input written to the prompt cache (Anthropic)

    @property
    def prompt_tokens(self) -> int:
        """The whole input: uncached, read from the cache and written to it."""
        return self.input_tokens + self.cache_read_tokens + self.cache_write_tokens

    def add(self, other: Usage) -> None:
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.cache_read_tokens += other.cache_read_tokens
        self.cache_write_tokens += other.cache_write_tokens


@dataclass
class AssistantTurn:
    """One assistant message: Anthropic-format content blocks (`text`, `tool_use` with parsed `input`)."""

    content: list[dict[str, Any]]
    stop_reason: str | None = None
    usage: Usage = field(default_factory=Usage)

    @property
    def tool_uses(self) -> list[dict[str, Any]]:
        return [b for b in self.content if b.get("type") == "tool_use"]

    @property
    def text(self) -> str:
        return "".join(b.get("text", "") for b in self.content if b.get("type") == "text")

    @property
    def thinking(self) -> list[dict[str, Any]]:
        """Its `thinking` and `redacted_thinking` blocks."""
        return [b for b in self.content if b.get("type") in THINKING_TYPES]


@dataclass(frozen=True)
class RetryNotice:
    """A model request failed and will be sent again after `delay_s`: told to `on_retry` before the wait.

    `cause` is one line for people, with no secret in it ("connection refused (127.0.0.1:9)", "overloaded (529)");
    `kind` says the same for programs (models/retry_cause.py lists them). `attempt` is the retry about to be made,
    counted from 1, of at most `max_retries`; `status` is the HTTP status when the server answered one, and
    `retry_after_s` the wait it asked for, if any."""

    cause: str
    kind: str
    attempt: int
    max_retries: int
    delay_s: float
    status: int | None = None
    retry_after_s: float | None = None


RetryListener = Callable[[RetryNotice], None]


class Model(Protocol):
    """A chat model that can call tools. `on_text` receives text deltas as they stream in; `on_retry` hears of each
    failed attempt that will be tried again, before the wait (a caller that passes none hears nothing)."""

    name: str

    async def complete(
        self,
        *,
        system: str,
        messages: list[dict[str, Any]],
        tools: list[ToolSpec],
        on_text: Callable[[str], None] | None = None,
        options: GenerationOptions | None = None,
        on_retry: RetryListener | None = None,
    ) -> AssistantTurn: ...


@runtime_checkable
class Switchable(Protocol):
    """A backend whose model can be changed mid-session (`/model NAME`): an alias becomes its full id, and the
    output limit and thinking follow the new model."""

    requested: str  # the name as the user gave it (an alias, `opusplan`)

    def switch(self, requested: str, env: dict[str, str]) -> None: ...


@runtime_checkable
class Closable(Protocol):
    """A backend holding connections (its HTTP client) that a session closes when it ends."""

    async def aclose(self) -> None: ...


@runtime_checkable
class PlanAware(Protocol):
    """A backend whose model follows plan mode (`opusplan`: opus while planning, sonnet otherwise)."""

    def set_planning(self, planning: bool) -> None: ...


@runtime_checkable
class ToolCounter(Protocol):
    """A backend whose API counts tokens (Anthropic's count-tokens endpoint): what `tools` add to a request."""

    async def count_tool_tokens(self, tools: list[ToolSpec]) -> int: ...


@runtime_checkable
class LoadsReferencedTools(Protocol):
    """A backend whose API expands `tool_reference` blocks into the definitions of `defer_loading` tools (Anthropic's
    Messages API). `live`: it talks to that API itself, not to a mock or a proxy that may not."""

    live: bool


def tool_references(messages: Iterable[Mapping[str, Any]]) -> set[str]:
    """The tool names that `tool_reference` blocks in the history's tool results point at (a search that loaded
    tools the API's way: tools/tool_search.py)."""
    names: set[str] = set()
    for message in messages:
        content = message.get("content")
        for block in content if isinstance(content, list) else ():
            inner = block.get("content") if isinstance(block, dict) and block.get("type") == "tool_result" else None
            for item in inner if isinstance(inner, list) else ():
                if isinstance(item, dict) and item.get("type") == "tool_reference":
                    names.add(str(item.get("tool_name")))
    return names


def loaded_text(reference: Mapping[str, Any]) -> str:
    """A `tool_reference` block as text, where it cannot load anything (another backend, a tool not deferred)."""
    return f"Loaded tool {reference.get('tool_name')}."
