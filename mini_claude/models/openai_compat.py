"""`OpenAICompatModel`: OpenAI chat completions (and compatible servers) with function calling.

The conversion between our Anthropic-format history and OpenAI messages lives here, at the edge:

* the system prompt becomes a `system` message;
* an assistant message's text and `tool_use` blocks become one assistant message with `tool_calls`
  (`arguments` is a JSON string);
* a user message's `tool_result` blocks become `tool` messages (`tool_call_id`, text content; `is_error` results
  are prefixed `Error: ` because the wire format has no flag), emitted first so they follow the assistant's
  `tool_calls` directly; its text and images follow as one user message (images as `image_url` data URLs; images
  inside tool results go there too, since `tool` messages carry text only).

Answers come back as `AssistantTurn`s whose `tool_use` ids are the `tool_call` ids, with `finish_reason`
mapped to Anthropic stop reasons. Streaming assembles tool-call argument deltas by their `index`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any
from urllib.parse import urlsplit

from mini_claude.models.base import (
    AssistantTurn,
    GenerationOptions,
    RetryListener,
    ToolSpec,
    Usage,
    loaded_text,
)
from mini_claude.models.credentials import OpenAICredentials
from mini_claude.models.retry import Endpoint, RetryPolicy, complete_with_retry
from mini_claude.models.sdk_errors import map_openai_error

__all__ = ["STOP_REASONS", "OpenAICompatModel", "from_openai_message", "to_openai_messages", "to_openai_tools"]

STOP_REASONS = {"tool_calls": "tool_use", "function_call": "tool_use", "stop": "end_turn", "length": "max_tokens"}
ERROR_PREFIX = "Error: "


class OpenAICompatModel:
    """A `Model` backed by an OpenAI-compatible chat completions endpoint."""

    def __init__(
        self,
        model: str,
        *,
        api_key: str,
        base_url: str | None = None,
        stream: bool = True,
        retry: RetryPolicy | None = None,
        keyless: bool = False,
    ) -> None:
        import openai

        self.name = model
        self.stream = stream
        self.retry = retry or RetryPolicy.from_env()
        self.credentials = OpenAICredentials(api_key, keyless=keyless)  # what a 401/403 names
        self._client = openai.AsyncOpenAI(api_key=api_key, base_url=base_url, max_retries=0)
        self.base_url = str(self._client.base_url).rstrip("/")

    async def complete(
        self,
        *,
        system: str,
        messages: list[dict[str, Any]],
        tools: list[ToolSpec],
        on_text: Callable[[str], None] | None = None,
        options: GenerationOptions | None = None,
        on_retry: RetryListener | None = None,
    ) -> AssistantTurn:
        params: dict[str, Any] = {"model": self.name, "messages": to_openai_messages(system, messages)}
        if options is not None:
            if options.max_tokens is not None:
                params["max_tokens"] = options.max_tokens
            if options.temperature is not None:
                params["temperature"] = options.temperature
            if options.stop_sequences:
                params["stop"] = list(options.stop_sequences)[:4]  # the Chat Completions API takes up to 4
        if tools:
            params["tools"] = to_openai_tools(tools)
        return await complete_with_retry(
            lambda: self._complete_once(params), lambda emit: self._stream_once(params, emit), stream=self.stream,
            on_text=on_text, policy=self.retry, map_error=partial(map_openai_error, base_url=self.base_url),
            credentials=self.credentials, endpoint=Endpoint(self.base_url, "OPENAI_BASE_URL"), on_retry=on_retry)

    @property
    def list_priced(self) -> bool:
        """OpenAI's list prices apply on api.openai.com only: a local or other compatible server's model has no
        known price, whatever it is called."""
        return urlsplit(self.base_url).hostname == "api.openai.com"

    async def aclose(self) -> None:
        await self._client.close()

    # ---- one attempt -------------------------------------------------------------------------------------------

    async def _complete_once(self, params: dict[str, Any]) -> AssistantTurn:
        response = await self._client.chat.completions.create(**params)
        usage = _usage(response.usage)
        if not response.choices:
            return AssistantTurn(content=[], stop_reason="end_turn", usage=usage)
        choice = response.choices[0]
        message = choice.message
        calls = [(c.id, c.function.name, c.function.arguments)
                 for c in (message.tool_calls or []) if getattr(c, "function", None) is not None]
        turn = from_openai_message(message.content, calls, choice.finish_reason)
        turn.usage = usage
        return turn

    async def _stream_once(self, params: dict[str, Any], emit: Callable[[str], None]) -> AssistantTurn:
        text: list[str] = []
        calls: dict[int, _CallParts] = {}
        finish: str | None = None
        usage = Usage()
        stream = await self._client.chat.completions.create(
            **params, stream=True, stream_options={"include_usage": True})
        async with stream:
            async for chunk in stream:
                if chunk.usage is not None:
                    usage = _usage(chunk.usage)
                if not chunk.choices:
                    continue
                choice = chunk.choices[0]
                delta = choice.delta
                if delta is not None:
                    if delta.content:
                        text.append(delta.content)
                        emit(delta.content)
                    for call in delta.tool_calls or []:
                        parts = calls.setdefault(call.index, _CallParts())
                        if call.id:
                            parts.id = call.id
                        if call.function is not None:
                            if call.function.name:
                                parts.name += call.function.name
                            if call.function.arguments:
                                parts.arguments.append(call.function.arguments)
                if choice.finish_reason:
                    finish = choice.finish_reason
        ordered = [calls[i] for i in sorted(calls)]
        turn = from_openai_message("".join(text), [(c.id, c.name, "".join(c.arguments)) for c in ordered], finish)
        turn.usage = usage
        return turn


@dataclass
class _CallParts:
    id: str | None = None
    name: str = ""
    arguments: list[str] = field(default_factory=list)


# ---- conversion ---------------------------------------------------------------------------------------------


def to_openai_tools(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    return [{"type": "function", "function": {"name": t.name, "description": t.description,
                                              "parameters": t.input_schema}} for t in tools]


def to_openai_messages(system: str, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Our Anthropic-format history as OpenAI chat messages."""
    out: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for message in messages:
        blocks = _blocks(message.get("content"))
        if message.get("role") == "assistant":
            out.extend(_assistant_message(blocks))
        else:
            out.extend(_user_messages(blocks))
    return out


def from_openai_message(text: str | None, calls: list[tuple[str | None, str, str | None]],
                        finish_reason: str | None) -> AssistantTurn:
    """An answer (text, [(id, name, arguments JSON)], finish_reason) as an AssistantTurn."""
    content: list[dict[str, Any]] = []
    if text:
        content.append({"type": "text", "text": text})
    for n, (call_id, name, arguments) in enumerate(calls, start=1):
        content.append({"type": "tool_use", "id": call_id or f"call_{n}", "name": name,
                        "input": _parse_arguments(arguments)})
    stop = STOP_REASONS.get(finish_reason or "", finish_reason)
    if calls and stop in (None, "end_turn"):  # some compatible servers say "stop" after a tool call
        stop = "tool_use"
    return AssistantTurn(content=content, stop_reason=stop or "end_turn")


def _parse_arguments(arguments: str | None) -> Any:
    """Parsed arguments. Unparseable ones are kept as the raw string: the agent answers the model with a
    tool_result error ("must be a JSON object") instead of the whole turn failing."""
    if not arguments or not arguments.strip():
        return {}
    try:
        return json.loads(arguments)
    except json.JSONDecodeError:
        return arguments


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or [] if isinstance(b, dict)]


def _assistant_message(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    text = "".join(b.get("text", "") for b in blocks if b.get("type") == "text")
    calls = [{"id": b.get("id", ""), "type": "function",
              "function": {"name": b.get("name", ""), "arguments": _arguments_json(b.get("input"))}}
             for b in blocks if b.get("type") == "tool_use"]
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        message["tool_calls"] = calls
    elif not text:
        message["content"] = ""
    return [message]


def _arguments_json(value: Any) -> str:
    if isinstance(value, str):  # kept raw by _parse_arguments
        return value
    return json.dumps(value if value is not None else {}, ensure_ascii=False)


def _user_messages(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    parts: list[dict[str, Any]] = []
    for block in blocks:
        kind = block.get("type")
        if kind == "tool_result":
            inner = _blocks(block.get("content"))
            text = "\n".join(b.get("text", "") if b.get("type") == "text" else loaded_text(b)
                             for b in inner if b.get("type") in ("text", "tool_reference"))
            if block.get("is_error"):
                text = ERROR_PREFIX + text
            out.append({"role": "tool", "tool_call_id": block.get("tool_use_id", ""), "content": text})
            images = [p for p in (_image_part(b) for b in inner if b.get("type") == "image") if p is not None]
            if images:
                parts.append({"type": "text", "text": f"(image output of tool call {block.get('tool_use_id', '')})"})
                parts.extend(images)
        elif kind == "text":
            parts.append({"type": "text", "text": block.get("text", "")})
        elif kind == "image":
            image = _image_part(block)
            if image is not None:
                parts.append(image)
    if parts:
        if all(p["type"] == "text" for p in parts):
            # plain strings are what every compatible server accepts
            out.append({"role": "user", "content": "\n\n".join(p["text"] for p in parts)})
        else:
            out.append({"role": "user", "content": parts})
    return out


def _image_part(block: dict[str, Any]) -> dict[str, Any] | None:
    source = block.get("source")
    if not isinstance(source, dict):
        return None
    if source.get("type") == "base64":
        url = f"data:{source.get('media_type', 'image/png')};base64,{source.get('data', '')}"
    elif source.get("type") == "url" and isinstance(source.get("url"), str):
        url = source["url"]
    else:
        return None
    return {"type": "image_url", "image_url": {"url": url}}


def _usage(usage: Any) -> Usage:
    if usage is None:
        return Usage()
    return Usage(getattr(usage, "prompt_tokens", 0) or 0, getattr(usage, "completion_tokens", 0) or 0)
