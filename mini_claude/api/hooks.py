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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mini_claude.errors import ConfigError
from mini_claude.hooks.callables import CALLABLE_EVENTS, CallableHook, HookCallback, HookContext

__all__ = ["HOOK_EVENTS", "HookCallback", "HookContext", "HookMatcher", "callable_hooks"]

HOOK_EVENTS = CALLABLE_EVENTS


@dataclass
class HookMatcher:
    """`matcher`: which tool names (or other event values) it matches, as a command hook's matcher does (None: all);
    `hooks`: the callbacks; `timeout`: seconds per callback (default: the hooks' 60)."""

    matcher: str | None = None
    hooks: list[HookCallback] = field(default_factory=list)
    timeout: float | None = None


def callable_hooks(hooks: Mapping[str, Sequence[Any]] | None) -> tuple[CallableHook, ...]:
    """`Options.hooks` as the engine's callable hooks (ConfigError naming the event or matcher that is unusable)."""
    found: list[CallableHook] = []
    for event, matchers in (hooks or {}).items():
        if event not in HOOK_EVENTS:
            raise ConfigError(f"Options.hooks: unknown event {event!r} (expected one of: {', '.join(HOOK_EVENTS)})")
        for n, matcher in enumerate(matchers):
            if not isinstance(matcher, HookMatcher):
                raise ConfigError(f"Options.hooks.{event}[{n}]: a HookMatcher")
            for callback in matcher.hooks:
                try:
                    found.append(CallableHook(event, callback, matcher=matcher.matcher or "",
                                              timeout_s=matcher.timeout))
                except (ValueError, TypeError) as exc:
                    raise ConfigError(f"Options.hooks.{event}[{n}]: {exc}") from None
    return tuple(found)
