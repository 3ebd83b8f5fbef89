"""What the offline mock model reads from a request: its system prompt, and the last tool result in it (in the
Anthropic Messages form and the OpenAI chat completions one), which a scenario turn's `expect_tool_result_contains`
and `{{last_tool_result}}` refer to. Split from mock_server.py, which answers the requests.
"""

from __future__ import annotations

from typing import Any

from mini_claude.models.base import loaded_text
from mini_claude.models.scenario import ToolResultSeen

__all__ = ["blocks_text", "clip", "last_tool_result_chat", "last_tool_result_messages", "system_text"]


def system_text(body: dict[str, Any]) -> str:
    """The request's system prompt as one string (it may come as text blocks)."""
    system = body.get("system")
    if isinstance(system, list):
        return "".join(str(b.get("text", "")) for b in system if isinstance(b, dict))
    return system if isinstance(system, str) else ""


def clip(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def blocks_text(content: Any) -> str:
    """Text of a tool result's content: a string, or a list of blocks / parts with `text`."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) if b.get("type") == "text" else loaded_text(b)
                         for b in content if isinstance(b, dict) and b.get("type") in ("text", "tool_reference"))
    return ""


def last_tool_result_messages(body: dict[str, Any]) -> ToolResultSeen | None:
    messages = body.get("messages")
    for message in reversed(messages if isinstance(messages, list) else []):
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            continue
        for block in reversed(content):
            if isinstance(block, dict) and block.get("type") == "tool_result":
                return ToolResultSeen(blocks_text(block.get("content")), bool(block.get("is_error")))
    return None


def last_tool_result_chat(body: dict[str, Any]) -> ToolResultSeen | None:
    messages = body.get("messages")
    for message in reversed(messages if isinstance(messages, list) else []):
        if isinstance(message, dict) and message.get("role") == "tool":
            text = blocks_text(message.get("content"))
            # OpenAICompatModel marks failed tool results with this prefix (the wire format has no flag)
            return ToolResultSeen(text, text.startswith("Error: "))
    return None
