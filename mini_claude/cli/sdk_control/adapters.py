"""The SDK's side of the session's questions, each as a control request of ours through the channel:

* `sdk_ask(channel, ...)`: the gate's `ask(tool, args)` (with `--permission-prompt-tool stdio`) as a `can_use_tool`
  request; the SDK's `{"behavior": "allow" | "deny", ...}` becomes the gate's typed answer in `permission_answer`.
* `hook_callables(channel, hooks_config)`: the `initialize` request's hook matchers, each callback id an async
  callable `(input, tool_use_id, context) -> dict` that sends `hook_callback` and returns the SDK's answer (a dict
  meaning what a command hook's JSON stdout means). `register_sdk_hooks` hands them to the session's hooks.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from mini_claude.cli.sdk_control.channel import ControlChannel, ControlError

if TYPE_CHECKING:
    from mini_claude.agent.subagents import SubagentType
    from mini_claude.permissions.answers import PermissionAnswer
    from mini_claude.session.parts import SessionParts
    from mini_claude.tools.base import Tool

__all__ = ["AskContextLike", "HookCallable", "SdkHookGroup", "hook_callables", "permission_answer", "register_sdk_hooks", "sdk_agent_types", "sdk_ask"]

HookCallable = Callable[[dict[str, Any], str | None, Any], Awaitable[dict[str, Any]]]


def permission_answer(answer: dict[str, Any], original: dict[str, Any] | None = None) -> PermissionAnswer:
    """The SDK's `can_use_tool` answer as the gate's typed answer (permissions/answers.py): an allow's changed input
    (`updatedInput`, run after the gate checks it) and `updatedPermissions` that add allow rules for the session;
    a denial's message. (A denial's `interrupt` is the driver's: it ends the turn.)"""
    from mini_claude.permissions.answers import PermissionAnswer

    if answer.get("behavior") == "allow":
        updated = answer.get("updatedInput")
        if updated is not None and not isinstance(updated, dict):  # it meant another input: never the model's
            return PermissionAnswer(False, message=f"the SDK's permission callback allowed this call with an "
                                                   f"updatedInput that is a {type(updated).__name__}, not an "
                                                   "object; nothing was run")
        changed = updated if isinstance(updated, dict) and updated != original else None
        remember = [rule for update in answer.get("updatedPermissions") or () for rule in _rules(update)]
        return PermissionAnswer(True, updated_input=changed, remember=tuple(remember))
    return PermissionAnswer(False, message=str(answer.get("message") or "").strip())


def _rules(update: Any) -> list[str]:
    """The allow rules (our syntax) of one of the SDK's permission updates; other kinds add none."""
    if not isinstance(update, dict) or update.get("type") != "addRules" or update.get("behavior") not in (None, "allow"):
        return []
    found = []
    for rule in update.get("rules") or ():
        name = rule.get("toolName") if isinstance(rule, dict) else None
        if isinstance(name, str) and name:
            content = rule.get("ruleContent")
            found.append(f"{name}({content})" if isinstance(content, str) and content else name)
    return found


class AskContextLike(Protocol):
    """What the gate may tell the one it asks (permissions/answers.py `AskContext`, coming from another branch of
    issue 28; the gate passes it to an ask callback that takes a third argument)."""

    suggestions: tuple[str, ...]
    reason: str
    blocked_path: str | None
    tool_use_id: str | None


def sdk_ask(channel: ControlChannel, interrupt: Callable[[], object] = lambda: None
            ) -> Callable[..., Awaitable[PermissionAnswer | str]]:
    """The gate's ask callback, answered by the SDK's `can_use_tool` callback (the built-in tools carry Claude
    Code's names and input keys already). A failed request (no answer, stdin ended) is a denial; a denial with
    `interrupt` also calls `interrupt()` (the run stops, as the SDK's PermissionResultDeny(interrupt=True) asks)."""

    async def ask(tool: Tool, args: dict[str, Any], context: AskContextLike | None = None) -> PermissionAnswer | str:
        request: dict[str, Any] = {"subtype": "can_use_tool", "tool_name": tool.name, "input": args,
                                   "permission_suggestions": None, "blocked_path": None}
        if context is not None:
            request["permission_suggestions"] = [_suggestion(rule) for rule in context.suggestions] or None
            request["blocked_path"] = context.blocked_path
            if context.tool_use_id is not None:
                request["tool_use_id"] = context.tool_use_id
            if context.reason:
                request["decision_reason"] = context.reason
        try:
            answer = await channel.request(request)
        except ControlError as exc:
            return f"no: the SDK's permission callback failed ({exc})"
        if answer.get("behavior") != "allow" and answer.get("interrupt") is True:
            interrupt()
        return permission_answer(answer, args)

    return ask


def _suggestion(rule: str) -> dict[str, Any]:
    """An allow rule (`Bash(git status:*)`) as the SDK's permission update adding it for the session."""
    tool, paren, rest = rule.partition("(")
    value: dict[str, Any] = {"toolName": tool}
    if paren and rest.endswith(")"):
        value["ruleContent"] = rest[:-1]
    return {"type": "addRules", "rules": [value], "behavior": "allow", "destination": "session"}


@dataclass(frozen=True)
class SdkHookGroup:
    """One matcher of the `initialize` request's hooks: its event, matcher, timeout and callables."""

    event: str
    matcher: str | None
    timeout_s: float | None
    callables: tuple[HookCallable, ...]


def hook_callables(channel: ControlChannel, hooks_config: Any) -> list[SdkHookGroup]:
    """`{"PreToolUse": [{"matcher": "Bash", "hookCallbackIds": ["hook_0"], "timeout": 10}], ...}` → one group per
    matcher. A malformed config raises ValueError naming the event."""
    if hooks_config is None:
        return []
    if not isinstance(hooks_config, dict):
        raise ValueError("initialize: hooks must be an object of events")
    groups = []
    for event, matchers in hooks_config.items():
        if not isinstance(matchers, list):
            raise ValueError(f"initialize: hooks.{event} must be a list of matchers")
        for entry in matchers:
            ids = entry.get("hookCallbackIds") if isinstance(entry, dict) else None
            if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
                raise ValueError(f"initialize: hooks.{event}: each matcher needs hookCallbackIds (strings)")
            timeout = entry.get("timeout")
            groups.append(SdkHookGroup(str(event), entry.get("matcher"),
                                       float(timeout) if isinstance(timeout, (int, float)) else None,
                                       tuple(_callback(channel, i, timeout) for i in ids)))
    return groups


def _callback(channel: ControlChannel, callback_id: str, timeout: Any) -> HookCallable:
    async def call(input_: dict[str, Any], tool_use_id: str | None, context: Any) -> dict[str, Any]:
        wait = float(timeout) if isinstance(timeout, (int, float)) else None
        return await channel.request({"subtype": "hook_callback", "callback_id": callback_id, "input": input_,
                                      "tool_use_id": tool_use_id}, timeout_s=wait)

    return call


def register_sdk_hooks(parts: SessionParts, groups: list[SdkHookGroup]) -> bool:
    """The groups' callables as the session's callable hooks (hooks/callables.py), beside the user's command hooks;
    whether they fire (initialize's `hooks_applied`: the session was started ready for hooks from code)."""
    from mini_claude.hooks.callables import CallableHook

    if parts.hooks is None:
        return not groups
    for group in groups:
        for n, callback in enumerate(group.callables):
            parts.hooks.callables.append(CallableHook(group.event, callback, matcher=group.matcher or "",
                                                      timeout_s=group.timeout_s,
                                                      name=f"sdk: {group.event} hook {n + 1}"))
    return True


_AGENT_KEYS_USED = frozenset({"description", "prompt", "tools", "disallowedTools", "model"})


def sdk_agent_types(definitions: Any) -> tuple[dict[str, SubagentType], list[str]]:
    """`initialize`'s `agents` (the SDK's AgentDefinition objects by name) as sub-agent types, and one note per key
    this version does not act on. A malformed definition raises ValueError naming it."""
    from mini_claude.agent.subagents import SubagentType

    if definitions is None:
        return {}, []
    if not isinstance(definitions, dict):
        raise ValueError("initialize: agents must be an object of definitions by name")
    kinds: dict[str, SubagentType] = {}
    notes: list[str] = []
    for name, entry in definitions.items():
        if not isinstance(entry, dict) or not isinstance(entry.get("description"), str) \
                or not isinstance(entry.get("prompt"), str):
            raise ValueError(f"initialize: agents.{name} needs a description and a prompt (strings)")
        tools, excluded = entry.get("tools"), entry.get("disallowedTools")
        model = entry.get("model")
        kinds[str(name)] = SubagentType(
            name=str(name), description=entry["description"], prompt=entry["prompt"],
            tools=tuple(str(t) for t in tools) if isinstance(tools, list) and "*" not in tools else None,
            excluded=tuple(str(t) for t in excluded) if isinstance(excluded, list) else (),
            model=model if isinstance(model, str) and model != "inherit" else None, source="sdk")
        notes += [f"agents.{name}.{key}: not supported here, ignored" for key in entry if key not in _AGENT_KEYS_USED]
    return kinds, notes
