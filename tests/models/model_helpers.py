"""Helpers shared by the model-backend tests (imported as `model_helpers`): retry policy and message shorthands."""

from __future__ import annotations

from typing import Any

from mini_claude.models.retry import RetryPolicy

FAST_RETRY = RetryPolicy(max_attempts=4, base_delay_s=0.001, max_delay_s=0.01)


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def tool_result(tool_use_id: str, text: str, *, is_error: bool = False) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_use_id,
                             "content": [{"type": "text", "text": text}]}
    if is_error:
        block["is_error"] = True
    return {"role": "user", "content": [block]}
