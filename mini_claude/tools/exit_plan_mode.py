"""The `ExitPlanMode` tool (Claude Code's name and input): in plan mode, the model presents its plan (`plan`, in
Markdown) and the user decides whether it may start.

The tool decides nothing itself. The permission gate (permissions/gate.py) is the only authority over the mode: it
refuses the call outside plan mode, always asks the user in plan mode (no allow rule or hook answers for the user,
and there is no "always"), and leaves plan mode only on the user's yes. So when `run` is reached, the user has
approved, and the result tells the model it may start. A "no" never reaches `run`: the gate's refusal, with what
the user wants changed, is the result, and plan mode stays on. `allowedPrompts` (Claude Code's newer input: the
commands the plan will need) is accepted so a model used to it is not refused, and ignored: nothing the model
sends grants anything.
"""

from __future__ import annotations

import copy
from typing import Any, ClassVar

from mini_claude.tools.base import ToolContext, ToolResult

__all__ = ["APPROVED_TEXT", "EXIT_PLAN_MODE_TOOL_NAME", "NOT_IN_PLAN_MODE_TEXT", "ExitPlanModeTool"]

EXIT_PLAN_MODE_TOOL_NAME = "ExitPlanMode"
# Claude Code's words to the model, in both cases
APPROVED_TEXT = "User has approved your plan. You can now start coding. Start with updating your todo list if applicable"
NOT_IN_PLAN_MODE_TEXT = "You are not in plan mode. If your plan was already approved, continue with implementation."


class ExitPlanModeTool:
    """Present the plan for the user's approval (see the module docstring)."""

    name = EXIT_PLAN_MODE_TOOL_NAME
    description = (
        "Use this tool when you are in plan mode and have finished planning an implementation and are ready for the "
        "user's approval. Put the whole plan in `plan` (Markdown); the user sees it, then approves (plan mode ends "
        "and you may make the changes) or tells you what to change (keep planning). Not for research-only tasks."
    )
    _SCHEMA: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "plan": {"type": "string", "minLength": 1, "description": "The plan to show the user, in Markdown"},
            "allowedPrompts": {
                "type": "array",
                "description": "Ignored (accepted for compatibility)",
                "items": {"type": "object"},
            },
        },
        "required": ["plan"],
        "additionalProperties": False,
    }
    read_only = False  # it changes the session's mode: never run beside other calls

    def __init__(self) -> None:
        self.input_schema: dict[str, Any] = copy.deepcopy(self._SCHEMA)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return ToolResult.text(APPROVED_TEXT)
