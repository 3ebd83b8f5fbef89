"""The Messages API as both Anthropic backends speak it (the SDK path, anthropic.py, and the default httpx one,
anthropic_http.py): which model is asked for and how its requests are shaped (`ModelChoice`, from the table in
catalog.py: output limit, thinking, effort), the request body (`build_params`) and the beta header it needs
(`request_headers`), and reading the answer (`StreamAssembler` for the event stream, `turn_from_message` for a
whole message, `usage_of`).

Our history already is Messages format, so it passes through (minus empty text blocks, which the API rejects).
Prompt-cache breakpoints go on the last tool, the system prompt and the last block of the conversation. Streaming:
text deltas go to `on_text` as they arrive, `input_json_delta` pieces are joined per block and parsed at
`content_block_stop`. Thinking blocks (`thinking` with its `signature`, `redacted_thinking`) are kept exactly as
they came, so the next request sends them back unchanged, as the API requires while a tool loop goes on.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

from mini_claude.errors import ModelError
from mini_claude.models.base import (
    THINKING_TYPES,
    AssistantTurn,
    GenerationOptions,
    ToolSpec,
    Usage,
    loaded_text,
    tool_references,
)
from mini_claude.models.catalog import OPUSPLAN, RequestShape, ThinkingPrefs, plan_variant, request_shape

__all__ = ["ModelChoice", "StreamAssembler", "build_params", "is_live", "request_headers", "tools_cost",
           "turn_from_message", "usage_of"]

TOOL_SEARCH_BETA = "advanced-tool-use-2025-11-20"  # defer_loading tools and tool_reference blocks
THINKING_BETA = "interleaved-thinking-2025-05-14"  # thinking between tool calls
CONTEXT_MANAGEMENT_BETA = "context-management-2025-06-27"  # `context_management` (clearing old thinking)
EFFORT_BETA = "effort-2025-11-24"  # `output_config.effort`
EMPTY_TURN_TEXT = "(no response)"
CACHE_POINT = {"type": "ephemeral"}


class ModelChoice:
    """The model an Anthropic backend asks for (`name`: the id sent; `requested`: as the user named it, `opusplan`
    included) and the shape of its requests (`shape`). Shared by the SDK path and anthropic_http.py."""

    name: str

    def _choose(self, name: str, *, requested: str = "", thinking: ThinkingPrefs | None = None,
                max_tokens: int | None = None, env: dict[str, str] | None = None) -> None:
        self.name = name
        self.requested = requested or name
        self.thinking = thinking or ThinkingPrefs()
        self.max_tokens_override = max_tokens  # a fixed output limit (tests); None: the table's
        self._alias_env = {k: v for k, v in (env or {}).items() if k.startswith("ANTHROPIC_DEFAULT_")}
        self._planning = False

    def switch(self, requested: str, env: dict[str, str]) -> None:
        """Ask for another model from now on (`/model NAME`; an alias becomes its id)."""
        self.requested = requested.strip()
        self._alias_env = {k: v for k, v in env.items() if k.startswith("ANTHROPIC_DEFAULT_")}
        self.name = plan_variant(self.requested, self._alias_env, planning=self._planning)

    def set_planning(self, planning: bool) -> None:
        """Plan mode on or off: `opusplan` asks for opus while planning, sonnet otherwise."""
        self._planning = planning
        if self.requested.lower() == OPUSPLAN:
            self.name = plan_variant(self.requested, self._alias_env, planning=planning)

    def shape(self, options: GenerationOptions | None = None) -> RequestShape:
        """How the next request is shaped. A one-off request with its own output limit (MCP sampling, a summary)
        gets no thinking and no cache breakpoints."""
        shape = request_shape(self.name, self.thinking)
        if self.max_tokens_override is not None:
            shape = replace(shape, max_tokens=self.max_tokens_override)
        if options is not None and options.max_tokens is not None:
            return RequestShape(options.max_tokens, cache=False)
        thinking = shape.thinking
        if thinking is not None and thinking.get("type") == "enabled":
            budget = min(int(str(thinking["budget_tokens"])), shape.max_tokens - 1)
            shape = replace(shape, thinking={**thinking, "budget_tokens": budget})
        return shape


def is_live(base_url: str) -> bool:
    """Whether `base_url` is Anthropic's own API (which expands `tool_reference` blocks), not a mock or a proxy."""
    host = (urlsplit(base_url).hostname or "").lower()
    return host == "api.anthropic.com"


class StreamAssembler:
    """Builds one AssistantTurn from the Messages stream's events (each as decoded JSON, whoever decoded it: the
    SDK here, anthropic_http.py's own reader there): text deltas go to `emit` as they come, `input_json_delta`
    pieces are joined per block and parsed at `content_block_stop`."""

    def __init__(self, emit: Callable[[str], None]) -> None:
        self.emit = emit
        self.blocks: dict[int, dict[str, Any]] = {}
        self.json_parts: dict[int, list[str]] = {}
        self.usage = Usage()
        self.stop_reason: str | None = None
        self.finished = False

    def feed(self, kind: str, data: dict[str, Any]) -> None:
        if kind == "message_start":
            self.usage = usage_of((data.get("message") or {}).get("usage") or {})
        elif kind == "content_block_start":
            index, block = data.get("index"), data.get("content_block") or {}
            if not isinstance(index, int):
                return
            if block.get("type") == "text":
                self.blocks[index] = {"type": "text", "text": block.get("text") or ""}
                if block.get("text"):
                    self.emit(block["text"])
            elif block.get("type") == "tool_use":
                self.blocks[index] = {"type": "tool_use", "id": block.get("id"), "name": block.get("name"),
                                      "input": _as_input(block.get("input"), str(block.get("name")))}
                self.json_parts[index] = []
            elif block.get("type") == "thinking":
                self.blocks[index] = {"type": "thinking", "thinking": block.get("thinking") or "",
                                      "signature": block.get("signature") or ""}
            elif block.get("type") == "redacted_thinking":
                self.blocks[index] = {"type": "redacted_thinking", "data": block.get("data") or ""}
        elif kind == "content_block_delta":
            index, delta = data.get("index"), data.get("delta") or {}
            target = self.blocks.get(index) if isinstance(index, int) else None
            if target is None:
                return
            if delta.get("type") == "text_delta" and target["type"] == "text":
                target["text"] += delta.get("text") or ""
                if delta.get("text"):
                    self.emit(delta["text"])
            elif delta.get("type") == "input_json_delta" and index in self.json_parts:
                self.json_parts[index].append(delta.get("partial_json") or "")
            elif delta.get("type") == "thinking_delta" and target["type"] == "thinking":
                target["thinking"] += delta.get("thinking") or ""
            elif delta.get("type") == "signature_delta" and target["type"] == "thinking":
                target["signature"] += delta.get("signature") or ""
        elif kind == "content_block_stop":
            index = data.get("index")
            parts = self.json_parts.pop(index, None) if isinstance(index, int) else None
            if parts:
                target = self.blocks[index]
                target["input"] = _parse_input("".join(parts), target["name"])
        elif kind == "message_delta":
            self.stop_reason = (data.get("delta") or {}).get("stop_reason") or self.stop_reason
            more = data.get("usage") or {}
            if isinstance(more.get("output_tokens"), int):
                self.usage.output_tokens = more["output_tokens"]
            for key, attribute in _USAGE_FIELDS:  # later counts replace the message_start ones
                if isinstance(more.get(key), int) and more[key]:
                    setattr(self.usage, attribute, more[key])
        elif kind == "message_stop":
            self.finished = True

    def turn(self, base_url: str) -> AssistantTurn:
        if not self.finished:
            raise ModelError(f"the model API at {base_url} ended the stream before message_stop", retryable=True)
        return AssistantTurn(content=[self.blocks[i] for i in sorted(self.blocks)], stop_reason=self.stop_reason,
                             usage=self.usage)


def build_params(model: str, shape: RequestShape, system: str, messages: list[dict[str, Any]],
                 tools: list[ToolSpec], options: GenerationOptions | None) -> dict[str, Any]:
    """The Messages request body (without `stream`), shared by this SDK path and anthropic_http.py. Prompt-cache
    breakpoints go on the last tool sent in full, the system prompt and the last block of the conversation (three
    of the API's four), so each request reads what the previous one wrote."""
    options = options or GenerationOptions()
    # a tool goes as `defer_loading` only while a tool_reference in the history sent loads it: after a rollback or
    # cleared results it goes in full, so the model never has a tool it cannot see
    referenced = tool_references(messages) if any(t.defer_loading for t in tools) else set()
    tools = [t if not t.defer_loading or t.name in referenced else replace(t, defer_loading=False) for t in tools]
    wire = _wire_messages(messages, {t.name for t in tools if t.defer_loading}, thinking=shape.thinks)
    params: dict[str, Any] = {"model": model, "max_tokens": shape.max_tokens,
                              "messages": _cache_tail(wire) if shape.cache else wire}
    # `options.temperature` is not sent: the Messages API (SDK 2.x) no longer takes one
    if options.stop_sequences:
        params["stop_sequences"] = list(options.stop_sequences)
    if system:
        params["system"] = [{"type": "text", "text": system, "cache_control": CACHE_POINT}] if shape.cache else system
    if tools:
        params["tools"] = _wire_tools(tools, cache=shape.cache)
    if shape.thinking is not None:
        params["thinking"] = shape.thinking
    if shape.context_management is not None:
        params["context_management"] = shape.context_management
    if shape.effort is not None:
        params["output_config"] = {"effort": shape.effort}
    return params


def _cache_tail(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`messages` with a cache breakpoint on the last block of the last message that can carry one (copies: the
    history itself is never marked)."""
    for m_index in range(len(messages) - 1, -1, -1):
        content = messages[m_index].get("content")
        if isinstance(content, str) and content:
            content = [{"type": "text", "text": content}]
        if not isinstance(content, list):
            continue
        for b_index in range(len(content) - 1, -1, -1):
            block = content[b_index]
            if isinstance(block, dict) and block.get("type") not in THINKING_TYPES:
                marked = [*content[:b_index], {**block, "cache_control": CACHE_POINT}, *content[b_index + 1:]]
                return [*messages[:m_index], {**messages[m_index], "content": marked}, *messages[m_index + 1:]]
    return messages


_BASELINE_TOOL = ToolSpec("noop", "", {"type": "object"})


async def tools_cost(count: Callable[[dict[str, Any]], Awaitable[int]], model: str, tools: list[ToolSpec]) -> int:
    """What `tools` add to a request, by two count-tokens requests at once: a one-word message with a one-line tool,
    and the same with `tools` too. The baseline carries a tool because every request of ours has tools, so the
    API's fixed tool-use preamble is not counted as theirs. If one count fails, the other is cancelled."""
    tasks = [asyncio.ensure_future(count({"model": model, "messages": [{"role": "user", "content": "hi"}],
                                          "tools": _wire_tools([*extra, _BASELINE_TOOL])}))
             for extra in (tools, [])]
    try:
        with_tools, baseline = await asyncio.gather(*tasks)
    finally:
        for task in tasks:
            task.cancel()
    return max(0, with_tools - baseline)


def turn_from_message(message: dict[str, Any]) -> AssistantTurn:
    """A Messages response (decoded JSON) as an AssistantTurn."""
    content: list[dict[str, Any]] = []
    for block in message.get("content") or []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            content.append({"type": "text", "text": block.get("text") or ""})
        elif block.get("type") == "tool_use":
            content.append({"type": "tool_use", "id": block.get("id"), "name": block.get("name"),
                            "input": _as_input(block.get("input"), str(block.get("name")))})
        elif block.get("type") == "thinking":
            content.append({"type": "thinking", "thinking": block.get("thinking") or "",
                            "signature": block.get("signature") or ""})
        elif block.get("type") == "redacted_thinking":
            content.append({"type": "redacted_thinking", "data": block.get("data") or ""})
    return AssistantTurn(content=content, stop_reason=message.get("stop_reason"),
                         usage=usage_of(message.get("usage") or {}))


_USAGE_FIELDS = (("input_tokens", "input_tokens"), ("cache_read_input_tokens", "cache_read_tokens"),
                 ("cache_creation_input_tokens", "cache_write_tokens"))


def usage_of(raw: dict[str, Any]) -> Usage:
    """A Messages `usage` object (decoded JSON) as Usage; a field left out is 0."""
    def count(key: str) -> int:
        value = raw.get(key)
        return value if isinstance(value, int) else 0
    return Usage(count("input_tokens"), count("output_tokens"), count("cache_read_input_tokens"),
                 count("cache_creation_input_tokens"))


def _wire_tools(tools: list[ToolSpec], *, cache: bool = False) -> list[dict[str, Any]]:
    """The tools as sent; `cache`: a breakpoint on the last one sent in full (a deferred one is not in the
    prefix)."""
    wire = [{"name": t.name, "description": t.description, "input_schema": t.input_schema,
             **({"defer_loading": True} if t.defer_loading else {})} for t in tools]
    for index in range(len(wire) - 1 if cache else -1, -1, -1):
        if not wire[index].get("defer_loading"):
            wire[index] = {**wire[index], "cache_control": CACHE_POINT}
            break
    return wire


def request_headers(params: dict[str, Any]) -> dict[str, str]:
    """The beta header a request needs (as Claude Code sends them): thinking between tool calls, context
    management, deferred tools, effort; none for a request with none of these."""
    thinking = params.get("thinking")
    betas = [beta for beta, needed in (
        (THINKING_BETA, isinstance(thinking, dict) and thinking.get("type") in ("adaptive", "enabled")),
        (CONTEXT_MANAGEMENT_BETA, "context_management" in params),
        (TOOL_SEARCH_BETA, any(t.get("defer_loading") for t in params.get("tools") or ())),
        (EFFORT_BETA, "output_config" in params)) if needed]
    return {"anthropic-beta": ",".join(betas)} if betas else {}


def _wire_messages(messages: list[dict[str, Any]], deferred: set[str], *, thinking: bool = True
                   ) -> list[dict[str, Any]]:
    """The history as sent. The API rejects empty text blocks, which an empty answer leaves in the history:
    drop them, and stand in a placeholder for an assistant message that had nothing else. A `tool_reference` to a
    tool this request does not defer (a compaction, a fallback, another backend earlier) becomes a line of text.
    A request without thinking (turned off, or a model without it after `/model`) sends no thinking blocks."""
    out: list[dict[str, Any]] = []
    for message in messages:
        content = message.get("content")
        if not thinking and isinstance(content, list) and any(_thought(b) for b in content):
            content = [b for b in content if not _thought(b)] or [{"type": "text", "text": ""}]
            message = {**message, "content": content}
        if isinstance(content, list):
            converted = [_references_as_text(b, deferred) for b in content]
            if any(new is not old for new, old in zip(converted, content, strict=True)):
                content = converted
                message = {**message, "content": content}
        if isinstance(content, list) and any(_empty_text(b) for b in content):
            kept = [b for b in content if not _empty_text(b)]
            if not kept:
                kept = [{"type": "text", "text": EMPTY_TURN_TEXT}] if message.get("role") == "assistant" else content
            message = {**message, "content": kept}
        out.append(message)
    return out


def _references_as_text(block: Any, deferred: set[str]) -> Any:
    """`block`, or a copy of a tool result whose references to tools not in `deferred` became text."""
    inner = block.get("content") if isinstance(block, dict) and block.get("type") == "tool_result" else None
    if not isinstance(inner, list) or not any(_stray(b, deferred) for b in inner):
        return block
    return {**block, "content": [{"type": "text", "text": loaded_text(b)} if _stray(b, deferred) else b
                                 for b in inner]}


def _stray(block: Any, deferred: set[str]) -> bool:
    return isinstance(block, dict) and block.get("type") == "tool_reference" and block.get("tool_name") not in deferred


def _thought(block: Any) -> bool:
    return isinstance(block, dict) and block.get("type") in THINKING_TYPES


def _empty_text(block: Any) -> bool:
    return isinstance(block, dict) and block.get("type") == "text" and not block.get("text")


def _parse_input(raw: str, tool_name: str) -> Any:
    """The tool input; invalid JSON is passed on as the raw string so the agent answers it with an is_error
    tool_result (every tool_use gets one) instead of the whole turn failing."""
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        return raw
    return _as_input(value, tool_name)


def _as_input(value: object, tool_name: str) -> Any:
    """Objects as dicts; anything else passed on as is (the agent rejects it with a tool_result)."""
    if value is None:
        return {}
    return dict(value) if isinstance(value, dict) else value

