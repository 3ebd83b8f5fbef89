"""The user's prompts in a conversation's history: where each starts, what the user typed, and the history cut back
to just before one. `/rewind`, the checkpoints of file changes, the resume view and `/export` read a history
through these.

A prompt starts a user message whose content holds no tool results, or — after an interruption, when the agent
merged the new prompt into the trailing message of tool results — at the first text block after those results.
The memory files and git snapshot the agent puts before a prompt (`<system-reminder>` blocks), its own bracketed
notes (`[The previous request was interrupted by the user.]`) and the notice of a background task that ended (whose
description and command the model wrote) are not the user's words and are skipped, and so is
the summary that opens a compacted history (it is no prompt: nothing to rewind to).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

__all__ = ["PromptPoint", "before", "current_point", "opens_with_summary", "prompt_points", "user_text"]

_REMINDER = "<system-reminder>"
_NOTES = ("[The previous request", "[Your previous reply")  # agent/loop.py's notes before a prompt
_SUMMARY = "[Summary of the earlier conversation"  # agent/compaction.py's head of a compacted history
_BACKGROUND = "<background-task-ended>"  # tools/background.py's notice, added to the message the next request ends


@dataclass(frozen=True)
class PromptPoint:
    """Where a prompt starts: the message's index and the block's index in it; `mark` tells this prompt from
    another one later found at the same place (after a compaction or a rewind)."""

    index: int
    block: int
    text: str
    mark: str

    @property
    def key(self) -> tuple[int, int]:
        return (self.index, self.block)


def user_text(blocks: list[Any]) -> str:
    """What the user typed among `blocks` (the agent's reminders and notes left out)."""
    texts = [b["text"] for b in blocks if isinstance(b, dict) and b.get("type") == "text"
             and isinstance(b.get("text"), str) and not _agent_note(b["text"])]
    return "\n".join(texts).strip()


def prompt_points(history: list[dict[str, Any]]) -> list[PromptPoint]:
    """Every prompt in `history`, oldest first."""
    points: list[PromptPoint] = []
    for index, message in enumerate(history):
        if message.get("role") != "user" or not isinstance(message.get("content"), list):
            continue
        content = message["content"]
        start = _prompt_start(content)
        if start is None:
            continue
        # the text up to the next message: a hook's context after the prompt belongs to it as well
        text = user_text(content[start:])
        if not text:
            continue
        points.append(PromptPoint(index, start, text, _mark(index, start, text)))
    return points


def opens_with_summary(history: list[dict[str, Any]]) -> bool:
    """Whether `history` was compacted: it opens with the summary of what came before."""
    content = history[0].get("content") if history else None
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "text" and str(b.get("text", "")).startswith(_SUMMARY)
        for b in content)


def current_point(history: list[dict[str, Any]]) -> PromptPoint | None:
    """The prompt the running turn answers (the last one), None before the first."""
    points = prompt_points(history)
    return points[-1] if points else None


def before(history: list[dict[str, Any]], point: PromptPoint) -> list[dict[str, Any]]:
    """The history as it was just before `point`'s prompt was sent."""
    kept = [dict(m) for m in history[:point.index]]
    if point.block > 0:  # merged into a message of tool results: those results stay
        kept.append({**history[point.index], "content": list(history[point.index]["content"][:point.block])})
    return kept


def _prompt_start(content: list[Any]) -> int | None:
    last_result = max((i for i, b in enumerate(content) if isinstance(b, dict) and b.get("type") == "tool_result"),
                      default=-1)
    if last_result < 0:
        return 0 if any(isinstance(b, dict) and b.get("type") == "text" for b in content) else None
    # after tool results: a prompt merged there starts with the agent's note; other text is a tool's aside
    for i in range(last_result + 1, len(content)):
        block = content[i]
        if isinstance(block, dict) and block.get("type") == "text" and str(block.get("text", "")).startswith(_NOTES):
            return i
    return None


def _agent_note(text: str) -> bool:
    stripped = text.lstrip()
    return stripped.startswith((_REMINDER, _SUMMARY, _BACKGROUND)) or (stripped.startswith(_NOTES) and "\n" not in stripped.strip())


def _mark(index: int, block: int, text: str) -> str:
    return hashlib.sha256(f"{index}:{block}:{text}".encode("utf-8", "surrogatepass")).hexdigest()[:16]
