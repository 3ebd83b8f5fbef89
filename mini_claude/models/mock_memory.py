"""What the mock model remembers between requests, as the real API does: its prompt cache and the thinking it sent.

`PromptCache` turns a Messages request's `cache_control` breakpoints into the usage the API reports. The request
is read as one sequence of blocks in the API's order (tools, then system blocks, then each message's blocks); a
prefix ending at a breakpoint is "written" to the cache, and a later request whose blocks start with a prefix
written before "reads" it (the longest one; the real API looks back at most 20 blocks from a breakpoint, the mock
at any distance). Tokens are the blocks' JSON characters divided by 4, capped at the request's total, so
`input_tokens + cache_read_input_tokens + cache_creation_input_tokens` is the request's size as the mock counts it.
A request without breakpoints neither reads nor writes.

`ThinkingLedger` keeps the thinking blocks each answer carried, by the ids of the tool calls in that answer. In a
request with thinking on, while a tool loop goes on (the messages after the last user message without a tool_result), every assistant message
holding one of those calls must carry the same thinking blocks, unchanged and in the same order, or the request is
refused (HTTP 400), as the API refuses it.

Stdlib only: the mock starts fast.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

__all__ = ["PromptCache", "ThinkingLedger"]

_THINKING = ("thinking", "redacted_thinking")


class PromptCache:
    """The mock's prompt cache (not thread-safe: the server calls it under its lock)."""

    def __init__(self) -> None:
        self._written: set[str] = set()

    def account(self, body: dict[str, Any], total: int) -> tuple[int, int, int]:
        """(input_tokens, cache_read_input_tokens, cache_creation_input_tokens) for `body`, whose whole size is
        `total` tokens; remembers the prefixes its breakpoints write."""
        blocks = _blocks(body)
        digests: list[str] = []
        sizes: list[int] = []
        running, size = hashlib.sha256(str(body.get("model")).encode()), 0
        breakpoints: list[int] = []
        for index, block in enumerate(blocks):
            if isinstance(block, dict) and "cache_control" in block:
                breakpoints.append(index)
                block = {k: v for k, v in block.items() if k != "cache_control"}
            text = json.dumps(block, sort_keys=True, ensure_ascii=False)
            running.update(text.encode())
            size += len(text) // 4
            digests.append(running.copy().hexdigest())
            sizes.append(min(size, total))
        if not breakpoints:
            return total, 0, 0
        last = breakpoints[-1]
        read_at = next((i for i in range(last, -1, -1) if digests[i] in self._written), None)
        read = sizes[read_at] if read_at is not None else 0
        written = sizes[last] - read
        for index in breakpoints:
            self._written.add(digests[index])
        return max(0, total - read - written), read, written


class ThinkingLedger:
    """The thinking blocks the mock sent, by tool-use id (not thread-safe: called under the server's lock)."""

    def __init__(self) -> None:
        self._by_tool: dict[str, list[dict[str, Any]]] = {}

    def remember(self, content: list[dict[str, Any]]) -> None:
        """Note the thinking of an answer (its blocks as sent) under each of its tool calls."""
        thinking = [dict(b) for b in content if b.get("type") in _THINKING]
        if not thinking:
            return
        for block in content:
            if block.get("type") == "tool_use":
                self._by_tool[str(block.get("id"))] = thinking

    def problem(self, body: dict[str, Any]) -> str | None:
        """Why the API would refuse `body`'s thinking (see the module docstring), None when it is fine."""
        messages = body.get("messages")
        thinking = body.get("thinking")
        if not isinstance(messages, list) or not isinstance(thinking, dict) or \
                thinking.get("type") not in ("adaptive", "enabled"):
            return None  # without thinking the API asks for none back
        start = 0
        for index, message in enumerate(messages):
            if isinstance(message, dict) and message.get("role") == "user" and not _has_tool_result(message):
                start = index + 1
        for index in range(start, len(messages)):
            message = messages[index]
            content = message.get("content") if isinstance(message, dict) else None
            if not isinstance(message, dict) or message.get("role") != "assistant" or not isinstance(content, list):
                continue
            for block in content:
                sent = self._by_tool.get(str(block.get("id"))) if isinstance(block, dict) and \
                    block.get("type") == "tool_use" else None
                if sent is None:
                    continue
                back = [{k: v for k, v in b.items() if k != "cache_control"} for b in content
                        if isinstance(b, dict) and b.get("type") in _THINKING]
                if back != sent:
                    how = "dropped" if not back else "changed"
                    return (f"messages.{index}.content: the thinking blocks of an assistant turn that called tools "
                            f"were {how}; while a tool loop goes on, thinking and redacted_thinking blocks must be "
                            "passed back exactly as they were sent, with their signatures")
                break
        return None


def _has_tool_result(message: dict[str, Any]) -> bool:
    content = message.get("content")
    return isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)


def _blocks(body: dict[str, Any]) -> list[Any]:
    """The request's blocks in the API's cache order: tools, system, then each message's content blocks."""
    blocks: list[Any] = list(body.get("tools") or []) if isinstance(body.get("tools"), list) else []
    system = body.get("system")
    if isinstance(system, str) and system:
        blocks.append({"type": "text", "text": system})
    elif isinstance(system, list):
        blocks.extend(system)
    for message in body.get("messages") or [] if isinstance(body.get("messages"), list) else []:
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        role = message.get("role")
        if isinstance(content, str):
            blocks.append({"role": role, "type": "text", "text": content})
        elif isinstance(content, list):
            blocks.extend({**b, "role": role} if isinstance(b, dict) else b for b in content)
    return blocks
