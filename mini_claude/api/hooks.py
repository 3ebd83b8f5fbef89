"""Hooks as Python callables (the Claude Agent SDK's `HookMatcher`): for each event, matchers whose callbacks get the
same input a command hook reads on stdin and answer with what a command hook would print as JSON.

    async def no_rm(input_data: dict, tool_use_id: str | None, context: HookContext) -> dict:
        if "rm " in input_data["tool_input"].get("command", ""):
            return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                           "permissionDecisionReason": "no deleting"}}
        return {}

    Options(hooks={"PreToolUse": [HookMatcher(matcher="Bash", hooks=[no_rm])]})

Every event the CLI's hooks have is open to them, SessionStart and SessionEnd included; they run where command hooks
run (mini_claude/hooks), before the permission gate decides. The SDK's Python spellings `continue_` and `async_` in
an answer are read as `continue` and `async`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["HOOK_EVENTS", "HookCallback", "HookContext", "HookMatcher"]

HOOK_EVENTS = ("PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop", "SubagentStop", "PreCompact",
               "SessionStart", "SessionEnd", "Notification")


@dataclass
class HookContext:
    """Beside each call: `signal` (reserved, as in the SDK: None)."""

    signal: Any = None


HookCallback = Callable[[dict[str, Any], str | None, HookContext], Awaitable[dict[str, Any]]]


@dataclass
class HookMatcher:
    """`matcher`: which tool names (or other event values) it matches, as a command hook's matcher does (None: all);
    `hooks`: the callbacks; `timeout`: seconds per callback (default: the hooks' 60)."""

    matcher: str | None = None
    hooks: list[HookCallback] = field(default_factory=list)
    timeout: float | None = None


def spelled_as_json(answer: dict[str, Any]) -> dict[str, Any]:
    """An answer with the SDK's Python spellings (`continue_`, `async_`) as the JSON keys they stand for."""
    fixed = dict(answer)
    for python, key in (("continue_", "continue"), ("async_", "async")):
        if python in fixed:
            fixed.setdefault(key, fixed.pop(python))
    return fixed
