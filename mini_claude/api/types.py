"""The typed messages the Python API yields: the records `--output-format stream-json` prints
(session/records.py), as dataclasses with the Claude Agent SDK's names and fields.

    SystemMessage(subtype, data)               the `system` records: "init" first in each query
    UserMessage(content, uuid, parent_tool_use_id)         a tool result the session sent back to the model
    AssistantMessage(content, model, parent_tool_use_id, message_id, session_id, uuid)     one block each
    ResultMessage(subtype, duration_ms, ..., result, structured_output, ...)   the end of each query
    StreamEvent(uuid, session_id, event)       partial output (`include_partial_messages`)

and the content blocks TextBlock, ThinkingBlock, ToolUseBlock, ToolResultBlock. `message_from_record` reads one
record; a record of a kind this module does not know becomes a SystemMessage with its type as the subtype, so a
newer session never breaks an older program.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["AssistantMessage", "ContentBlock", "Message", "ResultMessage", "StreamEvent", "SystemMessage", "TextBlock",
           "ThinkingBlock", "ToolResultBlock", "ToolUseBlock", "UserMessage", "block_from_dict", "message_from_record"]


@dataclass
class TextBlock:
    text: str


@dataclass
class ThinkingBlock:
    thinking: str
    signature: str = ""


@dataclass
class ToolUseBlock:
    id: str
    name: str
    input: dict[str, Any]


@dataclass
class ToolResultBlock:
    tool_use_id: str
    content: str | list[dict[str, Any]] | None = None
    is_error: bool | None = None


ContentBlock = TextBlock | ThinkingBlock | ToolUseBlock | ToolResultBlock


@dataclass
class UserMessage:
    content: str | list[ContentBlock]
    uuid: str | None = None
    parent_tool_use_id: str | None = None
    tool_use_result: dict[str, Any] | None = None


@dataclass
class AssistantMessage:
    content: list[ContentBlock]
    model: str
    parent_tool_use_id: str | None = None
    error: str | None = None
    usage: dict[str, Any] | None = None
    message_id: str | None = None
    stop_reason: str | None = None
    session_id: str | None = None
    uuid: str | None = None


@dataclass
class SystemMessage:
    subtype: str
    data: dict[str, Any] = field(default_factory=dict)


@dataclass
class ResultMessage:
    subtype: str
    duration_ms: int
    duration_api_ms: int
    is_error: bool
    num_turns: int
    session_id: str
    stop_reason: str | None = None
    total_cost_usd: float | None = None
    usage: dict[str, Any] | None = None
    result: str | None = None
    structured_output: Any = None
    model_usage: dict[str, Any] | None = None
    permission_denials: list[Any] | None = None
    errors: list[str] | None = None
    api_error_status: int | None = None
    uuid: str | None = None
    terminal_reason: str | None = None


@dataclass
class StreamEvent:
    uuid: str
    session_id: str
    event: dict[str, Any]
    parent_tool_use_id: str | None = None


Message = UserMessage | AssistantMessage | SystemMessage | ResultMessage | StreamEvent


def block_from_dict(block: dict[str, Any]) -> ContentBlock | None:
    """One API content block as a typed block; None for a kind the API types do not name (kept in the record)."""
    kind = block.get("type")
    if kind == "text":
        return TextBlock(str(block.get("text", "")))
    if kind == "thinking":
        return ThinkingBlock(str(block.get("thinking", "")), str(block.get("signature", "")))
    if kind == "tool_use":
        return ToolUseBlock(str(block.get("id", "")), str(block.get("name", "")), dict(block.get("input") or {}))
    if kind == "tool_result":
        return ToolResultBlock(str(block.get("tool_use_id", "")), block.get("content"), block.get("is_error"))
    return None


def _blocks(content: Any) -> list[ContentBlock]:
    if not isinstance(content, list):
        return []
    return [typed for block in content if isinstance(block, dict) and (typed := block_from_dict(block)) is not None]


_RESULT_KEYS = {"subtype", "duration_ms", "duration_api_ms", "is_error", "num_turns", "session_id", "stop_reason",
                "total_cost_usd", "usage", "result", "structured_output", "permission_denials", "errors",
                "api_error_status", "uuid", "terminal_reason"}


def message_from_record(record: dict[str, Any]) -> Message:
    """One stream-json record as a typed message."""
    kind = record.get("type")
    message = record.get("message") if isinstance(record.get("message"), dict) else {}
    if kind == "assistant":
        return AssistantMessage(content=_blocks(message.get("content")), model=str(message.get("model", "")),
                                parent_tool_use_id=record.get("parent_tool_use_id"), usage=message.get("usage"),
                                message_id=message.get("id"), stop_reason=message.get("stop_reason"),
                                session_id=record.get("session_id"), uuid=record.get("uuid"))
    if kind == "user":
        content = message.get("content")
        return UserMessage(content=content if isinstance(content, str) else _blocks(content), uuid=record.get("uuid"),
                           parent_tool_use_id=record.get("parent_tool_use_id"),
                           tool_use_result=record.get("tool_use_result"))
    if kind == "result":
        fields = {key: record[key] for key in _RESULT_KEYS if key in record}
        fields.setdefault("subtype", "success")
        for key, default in (("duration_ms", 0), ("duration_api_ms", 0), ("is_error", False), ("num_turns", 0),
                             ("session_id", "")):
            fields.setdefault(key, default)
        return ResultMessage(**fields, model_usage=record.get("modelUsage"))
    if kind == "stream_event":
        return StreamEvent(uuid=str(record.get("uuid", "")), session_id=str(record.get("session_id", "")),
                           event=dict(record.get("event") or {}), parent_tool_use_id=record.get("parent_tool_use_id"))
    if kind == "system":
        data = dict(record)
        return SystemMessage(subtype=str(record.get("subtype", "")), data=data)
    return SystemMessage(subtype=str(kind), data=dict(record))
