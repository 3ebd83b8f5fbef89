"""The loop's bookkeeping for tool calls and history blocks: a call on its way to its result, the concurrent
batches, the tool_result block, the text for an unknown tool, and the history's storable forms and last text
(moved out of loop.py to keep the loop short). `masked` is where every tool's result loses the secret values the
session knows (mini_claude.secrets) before the model, the screen, hooks or the saved session see it."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Protocol

from mini_claude.secrets import mask, mask_blocks
from mini_claude.tools.base import Tool, ToolResult, input_is_ours
from mini_claude.tools.input_check import input_problem

__all__ = ["CUT_TEXT", "Call", "Verdict", "batches", "last_text", "masked", "prompt_text", "storable", "tool_name",
           "tool_result_block", "unknown_text", "wrong_input"]

log = logging.getLogger(__name__)

# the result of each tool call of a turn cut at the output limit: its input may be incomplete, so it never runs
CUT_TEXT = ("Not run: your reply reached the output token limit while this tool call was being written, so its "
            "input may be incomplete. Call it again, splitting large content into smaller pieces if needed.")


class Verdict(Protocol):
    """The gate's decision as the loop reads it (mini_claude.permissions.answers.Decision fits)."""

    @property
    def allowed(self) -> bool: ...

    @property
    def reason(self) -> str: ...

    @property
    def updated_input(self) -> dict[str, Any] | None: ...  # run instead of the input checked (valid for the tool)

    @property
    def interrupt(self) -> bool: ...  # a refusal that ends the run


@dataclass
class Call:
    """One tool_use of a turn on its way to its tool_result."""

    block: dict[str, Any]
    tool: Tool | None
    result: ToolResult | None = None
    notes: str = ""  # what hooks said about this call, for the model beside the results
    args: dict[str, Any] | None = None  # the input it runs with once admitted (None: the block's own)


def wrong_input(tool: Tool, args: dict[str, Any], what: str) -> str | None:
    """Why `args` does not fit our own `tool`'s schema (an MCP server checks its own), as the call's error text."""
    problem = input_problem(tool.input_schema, args) if input_is_ours(tool) else None
    return f"invalid input for {what}: {problem}" if problem else None


def prompt_text(blocks: list[dict[str, Any]]) -> str:
    """The prompt as UserPromptSubmit hooks read it: the text blocks of the turn."""
    return "\n".join(b["text"] for b in blocks if b.get("type") == "text" and isinstance(b.get("text"), str))


def tool_name(block: dict[str, Any]) -> str:
    """The block's tool name; a malformed one (not a string) matches no tool instead of raising."""
    name = block.get("name", "")
    return name if isinstance(name, str) else repr(name)


def storable(content: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The assistant content as kept in the history: the API only accepts object tool inputs, so a malformed one
    is stored as `{}` (its tool_result tells the model what was wrong). Every other block, `thinking` and
    `redacted_thinking` included, is kept exactly as it came: the API wants thinking back unchanged."""
    if not content:
        return [{"type": "text", "text": ""}]
    return [{**b, "input": {}} if b.get("type") == "tool_use" and not isinstance(b.get("input"), dict) else b
            for b in content]


def batches(calls: list[Call]) -> list[list[Call]]:
    """Consecutive read-only calls form one concurrent batch; every other call is a batch of its own."""
    batches: list[list[Call]] = []
    for call in calls:
        read_only = call.tool is not None and call.tool.read_only
        if read_only and batches and batches[-1][0].tool is not None and batches[-1][0].tool.read_only:
            batches[-1].append(call)
        else:
            batches.append([call])
    return batches


def masked(result: ToolResult) -> ToolResult:
    """`result` with every known secret value in its content and aside shown as `[secret NAME]`."""
    content, aside = mask_blocks(result.content), mask(result.aside)
    return result if content is result.content and aside == result.aside else replace(
        result, content=content, aside=aside)


def tool_result_block(tool_use_id: str, result: ToolResult) -> dict[str, Any]:
    content = result.content or [{"type": "text", "text": "(no output)"}]
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_use_id, "content": content}
    if result.is_error:
        block["is_error"] = True
    return block


def unknown_text(name: str, explain: Callable[[str], str | None] | None) -> str:
    """The result for a call of a tool that is not offered: `explain`'s reason (McpManager.explain_unavailable: its
    server failed; a sub-agent's type leaves it out), else a generic one."""
    if explain is not None:
        try:
            why = explain(name)
        except Exception:  # an explanation is a nicety; never let it break the turn
            log.debug("explain_unknown(%r) failed", name, exc_info=True)
            why = None
        if why:
            return why
    return f"unknown tool {name!r}; available tools are listed in the request"


def last_text(history: list[dict[str, Any]]) -> str:
    """The text of the last assistant message."""
    for message in reversed(history):
        if message["role"] == "assistant":
            return "".join(b.get("text", "") for b in message["content"] if b.get("type") == "text")
    return ""
