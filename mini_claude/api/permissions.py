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
    """What the program is told beside the call: `suggestions`, the rules an "always" would add."""

    signal: Any = None
    suggestions: list[PermissionUpdate] = field(default_factory=list)
    tool_use_id: str | None = None


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
    """The gate's question, answered by `can_use_tool`."""
    from mini_claude.permissions.calls import claude_tool_name

    async def ask(tool: Tool, args: dict[str, Any], *_: Any) -> Any:
        context = ToolPermissionContext()
        try:
            answer: Any = can_use_tool(claude_tool_name(tool.name), dict(args), context)
            if inspect.isawaitable(answer):
                answer = await answer
        except Exception as exc:
            log.exception("can_use_tool raised")
            return _deny(f"denied: the program's permission callback failed ({type(exc).__name__}: {exc})", False)
        if isinstance(answer, PermissionResultAllow) or (isinstance(answer, dict) and answer.get("behavior") == "allow"):
            return _allow(answer)
        if isinstance(answer, PermissionResultDeny) or (isinstance(answer, dict) and answer.get("behavior") == "deny"):
            message = answer.message if isinstance(answer, PermissionResultDeny) else str(answer.get("message", ""))
            interrupt = answer.interrupt if isinstance(answer, PermissionResultDeny) else bool(answer.get("interrupt"))
            return _deny(message or "denied by the program", interrupt)
        return _deny(f"denied: the permission callback answered {type(answer).__name__}, not a PermissionResult",
                     False)

    return ask


def _allow(answer: PermissionResultAllow | dict[str, Any]) -> Any:
    return "yes"


def _deny(message: str, interrupt: bool) -> Any:
    return f"no: {message}"
