"""`can_use_tool`: the program's answer wherever the permission rules say "ask" (never for a call the rules allow or
deny, never in bypassPermissions mode), with the Claude Agent SDK's names.

    async def can_use_tool(tool_name: str, tool_input: dict, context: ToolPermissionContext):
        if tool_name == "Bash" and "rm " in tool_input["command"]:
            return PermissionResultDeny(message="no deleting", interrupt=False)
        return PermissionResultAllow(updated_input=None)

`asker` turns such a function into the permission gate's question (permissions/gate.py `AskFn`). The tool name is
Claude Code's (`Bash`, `Read`, `mcp__server__tool`), the input as the model sent it. An answer that is neither
result, or a callback that raises, denies the call with a message saying why.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from mini_claude.tools.base import Tool

__all__ = ["PermissionResult", "PermissionResultAllow", "PermissionResultDeny", "PermissionUpdate",
           "ToolPermissionContext", "asker"]

log = logging.getLogger("mini_claude.api")


@dataclass
class PermissionUpdate:
    """A rule change the answer asks for (the SDK's shape): `type` "addRules" with `rules` ({"toolName",
    "ruleContent"}) and `behavior` "allow" adds allow rules for the rest of the session."""

    type: str
    rules: list[dict[str, Any]] | None = None
    behavior: str | None = None
    mode: str | None = None
    directories: list[str] | None = None
    destination: str | None = None


@dataclass
class ToolPermissionContext:
    """What the program is told beside the call: `suggestions`, the rules an "always" would add; `view` (ours),
    the MCP server whose Apps view makes the call (None: the model's call, the only kind the SDK knows)."""

    signal: Any = None
    suggestions: list[PermissionUpdate] = field(default_factory=list)
    tool_use_id: str | None = None
    view: str | None = None


@dataclass
class PermissionResultAllow:
    behavior: Literal["allow"] = "allow"
    updated_input: dict[str, Any] | None = None
    updated_permissions: list[PermissionUpdate] | None = None


@dataclass
class PermissionResultDeny:
    behavior: Literal["deny"] = "deny"
    message: str = ""
    interrupt: bool = False


PermissionResult = PermissionResultAllow | PermissionResultDeny
CanUseTool = Callable[[str, dict[str, Any], ToolPermissionContext], Awaitable[PermissionResult]]


def asker(can_use_tool: CanUseTool) -> Callable[..., Awaitable[Any]]:
    """The gate's question (permissions/answers.py), answered by `can_use_tool`."""
    from mini_claude.permissions.answers import AskContext, PermissionAnswer
    from mini_claude.permissions.calls import claude_tool_name

    async def ask(tool: Tool, args: dict[str, Any], gate_context: AskContext) -> PermissionAnswer:
        context = ToolPermissionContext(suggestions=[_update(rule) for rule in gate_context.suggestions],
                                        tool_use_id=gate_context.tool_use_id, view=gate_context.view)
        try:
            answer: Any = can_use_tool(claude_tool_name(tool.name), dict(args), context)
            if inspect.isawaitable(answer):
                answer = await answer
        except (Exception, SystemExit) as exc:  # a stray sys.exit() too: a denial, never the program's end
            log.exception("can_use_tool raised")
            return PermissionAnswer(False, message=f"denied: the program's permission callback failed "
                                                   f"({type(exc).__name__}: {exc})")
        if isinstance(answer, dict):
            answer = _from_dict(answer)
        if isinstance(answer, PermissionResultAllow):
            remember = [rule for update in answer.updated_permissions or () for rule in _rules(update)]
            return PermissionAnswer(True, updated_input=answer.updated_input, remember=tuple(remember))
        if isinstance(answer, PermissionResultDeny):
            return PermissionAnswer(False, message=answer.message, interrupt=answer.interrupt)
        return PermissionAnswer(False, message=f"denied: the permission callback answered {type(answer).__name__}, "
                                               "not a PermissionResult")

    return ask


def _from_dict(answer: dict[str, Any]) -> Any:
    """The SDK's wire spelling of an answer ({"behavior": "allow", "updatedInput": ...})."""
    if answer.get("behavior") == "allow":
        updated = answer.get("updatedInput", answer.get("updated_input"))
        return PermissionResultAllow(updated_input=updated)  # not an object: the gate refuses the call
    if answer.get("behavior") == "deny":
        return PermissionResultDeny(message=str(answer.get("message", "")), interrupt=bool(answer.get("interrupt")))
    return answer


def _update(rule: str) -> PermissionUpdate:
    """One of our allow rules (`Bash(git status:*)`) as the SDK's suggestion."""
    name, _, rest = rule.partition("(")
    content = rest[:-1] if rest.endswith(")") else None
    return PermissionUpdate("addRules", rules=[{"toolName": name, "ruleContent": content}], behavior="allow",
                            destination="session")


def _rules(update: PermissionUpdate) -> list[str]:
    """The allow rules an `addRules` update asks for, in our syntax (other kinds of update add none)."""
    if update.type != "addRules" or update.behavior not in (None, "allow"):
        return []
    rules = []
    for rule in update.rules or ():
        name, content = rule.get("toolName"), rule.get("ruleContent")
        if isinstance(name, str) and name:
            rules.append(f"{name}({content})" if content else name)
    return rules
