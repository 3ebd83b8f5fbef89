"""Keeping the conversation inside the model's context window.

How full it is: the input tokens the API reported for the last request, plus an estimate (characters / 4,
calibrated by the last report) for what was added since. Before each request:

1. over `CLEAR_AT` of the window, the content of old tool results (all but those of the last `KEEP_RECENT_RESULTS`
   messages) is replaced by a one-line note — the cheapest room there is;
2. over `COMPACT_AT`, the older part of the history is replaced by a summary the model writes
   (`SUMMARY_SYSTEM_PROMPT`), keeping the recent turns (from the start of the last `KEEP_TURNS` user prompts) and
   the files the old part touched.

A request refused as "prompt is too long" compacts (forced) and is retried once; a second refusal is the user's
error to see, never a loop. `/compact [focus]` compacts on demand. `before_compact(trigger, focus)` is awaited before
each summary request (the user's PreCompact hooks; trigger `manual` for /compact, else `auto`). `prelude([])` gives the
blocks that open a conversation (the memory files, the git status: agent/loop.py): they open it again after a
summary, before the summary's text, and are left out of what the summariser reads.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from mini_claude.errors import ModelError
from mini_claude.models.base import SUMMARY_SYSTEM_PROMPT, GenerationOptions, Model, loaded_text
from mini_claude.models.catalog import lookup

__all__ = ["COMPACT_AT", "DEFAULT_CONTEXT_TOKENS", "ContextWindow", "is_prompt_too_long"]

log = logging.getLogger(__name__)

DEFAULT_CONTEXT_TOKENS = 200_000
CLEAR_AT = 0.6
COMPACT_AT = 0.8
KEEP_RECENT_RESULTS = 6
KEEP_TURNS = 2
CHARS_PER_TOKEN = 4
CLEARED = "[an older tool result, cleared to keep the conversation within the context window]"
SUMMARY_MAX_TOKENS = 4_000
_FILE_TOOLS = ("Read", "Write", "Edit")


def is_prompt_too_long(exc: BaseException) -> bool:
    return isinstance(exc, ModelError) and exc.status == 400 and "prompt is too long" in str(exc).lower()


def context_tokens(env: Mapping[str, str] | None = None, model: str | None = None) -> int:
    """`MINI_CLAUDE_CONTEXT_TOKENS`, else `model`'s context window as the model table has it, else
    `DEFAULT_CONTEXT_TOKENS` (no model named, or one the table does not know)."""
    raw = (os.environ if env is None else env).get("MINI_CLAUDE_CONTEXT_TOKENS", "")
    if raw.strip().isdigit() and int(raw) > 0:
        return int(raw)
    info = lookup(model) if model else None
    return info.context_window if info is not None else DEFAULT_CONTEXT_TOKENS


@dataclass
class _Measure:
    reported: int = 0  # input tokens of the last request, as the API counted them
    estimated_then: int = 0  # our estimate of that same request


class ContextWindow:
    """One conversation's context budget (the agent owns one)."""

    def __init__(self, tokens: int = DEFAULT_CONTEXT_TOKENS) -> None:
        self.tokens = tokens
        self._measure = _Measure()
        self.compactions = 0
        self.on_compact: Callable[[str], None] | None = None  # told one line each time (the UI shows it)
        self.before_compact: Callable[[str, str], Awaitable[None]] | None = None  # PreCompact hooks
        # given a history, the blocks before a prompt (agent/opening.py); of an empty one, the conversation's opening
        self.prelude: Callable[[list[dict[str, Any]]], Awaitable[list[dict[str, Any]]]] | None = None

    @property
    def last_input_tokens(self) -> int:
        """The input tokens of the last request as the API counted them (0 before one, or since a compaction)."""
        return self._measure.reported

    def estimate(self, system: str, history: list[dict[str, Any]], tools: list[Any]) -> int:
        raw = (len(system) + len(json.dumps(history, ensure_ascii=False)) + len(json.dumps(tools, default=str))) \
            // CHARS_PER_TOKEN
        measure = self._measure
        if measure.reported and measure.estimated_then:
            return round(raw * max(1.0, measure.reported / measure.estimated_then))
        return raw

    def observed(self, estimated: int, reported_input_tokens: int) -> None:
        """After a response: what we estimated for the request and what the API counted."""
        if reported_input_tokens > 0 and estimated > 0:
            self._measure = _Measure(reported_input_tokens, estimated)

    async def fit(self, model: Model, system: str, history: list[dict[str, Any]], tools: list[Any],
                  *, force: bool = False, focus: str = "", trigger: str = "auto") -> bool:
        """Make room in `history` (in place) when it is too full, or always when `force`. True if it changed."""
        used = self.estimate(system, history, tools)
        if not force and used < CLEAR_AT * self.tokens:
            return False
        # forced (a refusal, /compact): only the newest results keep their content
        changed = clear_old_results(history, keep=1 if force else KEEP_RECENT_RESULTS)
        if changed:
            used = self.estimate(system, history, tools)
        if force or used >= COMPACT_AT * self.tokens:
            return await self.compact(model, history, focus=focus, trigger=trigger) or changed
        return changed

    async def compact(self, model: Model, history: list[dict[str, Any]], *, focus: str = "",
                      trigger: str = "auto") -> bool:
        cut = _cut_point(history)
        if cut <= 0:
            return False
        if self.before_compact is not None:
            await self.before_compact(trigger, focus)
        old, recent = history[:cut], history[cut:]
        opening = await self.prelude([]) if self.prelude is not None else []
        instruction = "Summarise the conversation above for its continuation."
        if focus:
            instruction += f" Pay particular attention to: {focus}"
        request = [*_without_tool_content(old, skip=opening), {"role": "user", "content": [{"type": "text", "text": instruction}]}]
        turn = await model.complete(system=SUMMARY_SYSTEM_PROMPT, messages=_alternating(request), tools=[],
                                    options=GenerationOptions(max_tokens=SUMMARY_MAX_TOKENS))
        files = _files_touched(old)
        text = f"[Summary of the earlier conversation, written when the context window filled up]\n{turn.text}"
        if files:
            text += "\n[Files read or changed earlier: " + ", ".join(files) + "]"
        head: list[dict[str, Any]] = [{"role": "user", "content": [*opening, {"type": "text", "text": text}]}]
        if recent[0]["role"] == "user":  # roles alternate: an acknowledgement between two user messages
            head.append({"role": "assistant", "content": [{"type": "text", "text": "Understood. Continuing."}]})
        history[:] = [*head, *recent]
        self.compactions += 1
        self._measure = _Measure()
        if self.on_compact is not None:
            self.on_compact(f"compacted the conversation: {len(old)} older messages became a summary")
        return True


def clear_old_results(history: list[dict[str, Any]], keep: int = KEEP_RECENT_RESULTS) -> bool:
    """Replace the content of tool results older than the last `keep` messages; True if any."""
    changed = False
    for message in history[:-keep]:
        if message["role"] != "user":
            continue
        for block in message["content"]:
            if isinstance(block, dict) and block.get("type") == "tool_result" and block.get("content") != CLEARED \
                    and not _only_references(block.get("content")):  # tiny, and what loads the tools found
                block["content"] = CLEARED
                changed = True
    return changed


def _only_references(content: Any) -> bool:
    return isinstance(content, list) and bool(content) and all(
        isinstance(b, dict) and b.get("type") == "tool_reference" for b in content)


def _cut_point(history: list[dict[str, Any]]) -> int:
    """Where the recent part starts: a user message with text (not only tool results), the `KEEP_TURNS`-th from
    the end; falling back to the last such message, or (one long turn) to the last assistant message asking for
    tools, so that every kept tool result keeps the request it answers."""
    starts = [i for i, m in enumerate(history) if m["role"] == "user" and
              any(isinstance(b, dict) and b.get("type") == "text" for b in m["content"]) and
              not any(isinstance(b, dict) and b.get("type") == "tool_result" for b in m["content"])]
    if len(starts) > KEEP_TURNS:
        return starts[-KEEP_TURNS]
    if starts and starts[-1] > 0:
        return starts[-1]
    # one long turn: keep its last tool exchange whole (the assistant's request and the results after it)
    for i in range(len(history) - 1, 0, -1):
        if history[i]["role"] == "assistant" and any(
                isinstance(b, dict) and b.get("type") == "tool_use" for b in history[i]["content"]):
            return i
    return 0


def _without_tool_content(messages: list[dict[str, Any]], skip: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages for the summariser: tool calls and results as short text (no tools are offered to it), without
    the blocks in `skip` (the conversation's opening: it is sent again after the summary)."""
    out: list[dict[str, Any]] = []
    for message in messages:
        blocks = []
        for block in message["content"]:
            kind = block.get("type") if isinstance(block, dict) else None
            if block in skip:
                continue
            if kind == "text":
                blocks.append({"type": "text", "text": block.get("text") or " "})
            elif kind == "tool_use":
                args = json.dumps(block.get("input"), ensure_ascii=False)[:500]
                blocks.append({"type": "text", "text": f"[called {block.get('name')} with {args}]"})
            elif kind == "tool_result":
                content = block.get("content")
                text = content if isinstance(content, str) else " ".join(
                    b.get("text", "") if b.get("type") != "tool_reference" else loaded_text(b)
                    for b in content or [] if isinstance(b, dict))
                blocks.append({"type": "text", "text": f"[tool result: {text[:2000]}]"})
        out.append({"role": message["role"], "content": blocks or [{"type": "text", "text": " "}]})
    return out


def _alternating(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Merge neighbours of the same role (the API wants user and assistant to alternate)."""
    merged: list[dict[str, Any]] = []
    for message in messages:
        if merged and merged[-1]["role"] == message["role"]:
            merged[-1]["content"].extend(message["content"])
        else:
            merged.append({"role": message["role"], "content": list(message["content"])})
    if merged and merged[0]["role"] != "user":
        merged.insert(0, {"role": "user", "content": [{"type": "text", "text": "(conversation start)"}]})
    return merged


def _files_touched(messages: list[dict[str, Any]]) -> list[str]:
    files: list[str] = []
    for message in messages:
        for block in message["content"]:
            if isinstance(block, dict) and block.get("type") == "tool_use" and block.get("name") in _FILE_TOOLS:
                path = (block.get("input") or {}).get("file_path")
                if isinstance(path, str) and path not in files:
                    files.append(path)
    return files[:50]
