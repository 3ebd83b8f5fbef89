"""The `TodoWrite` tool (Claude Code's name and schema): the model's working plan for this session, as a checklist.

Each call sends the whole list (`todos`: items of `content`, `status` pending | in_progress | completed, and
`activeForm`, the present-tense label shown while the item is in progress); it replaces the previous one. The list
lives in the tool instance — one per session (`builtin_tools()` makes fresh ones) — and touches nothing outside, so
the tool is read-only for permissions.

The result's text is the checklist (`checklist`), which the terminal shows whole (the REPL on stdout, `-p` on
stderr, both through `render.clean`), followed by the note Claude Code gives the model.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, ClassVar

from mini_claude.tools.base import ToolContext, ToolResult

__all__ = ["TODO_TOOL_NAME", "TodoItem", "TodoWriteTool", "checklist"]

TODO_TOOL_NAME = "TodoWrite"
MAX_ITEMS = 100
MAX_ITEM_CHARS = 500
_MARKS = {"completed": "☒", "in_progress": "◼", "pending": "☐"}
NOTE = ("Todos have been modified successfully. Ensure that you continue to use the todo list to track your progress. "
        "Please proceed with the current tasks if applicable")


@dataclass(frozen=True)
class TodoItem:
    content: str
    status: str  # "pending" | "in_progress" | "completed"
    active_form: str


def checklist(items: list[TodoItem]) -> str:
    """`☒ done`, `◼ doing (activeForm…)`, `☐ to do`, one per line, under a header counting what is done."""
    if not items:
        return "Todo list cleared"
    done = sum(1 for item in items if item.status == "completed")
    lines = [f"Todo list ({done}/{len(items)} done):"]
    for item in items:
        text = f"{item.content} ({item.active_form})" if item.status == "in_progress" else item.content
        lines.append(f"{_MARKS[item.status]} {' '.join(text.split())}")
    return "\n".join(lines)


class TodoWriteTool:
    """Replace this session's todo list (see the module docstring)."""

    name = TODO_TOOL_NAME
    description = (
        "Create and update a task list for the current session. The list is shown to the user as your working "
        "plan.\n\n- Each todo has `content`, `status` (\"pending\" | \"in_progress\" | \"completed\"), and "
        "`activeForm` (present-tense label shown while in progress).\n- Send the full list each call; it replaces "
        "the previous one.\n- Keep one item `in_progress` at a time and mark it `completed` when done."
    )
    _SCHEMA: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "todos": {
                "description": "The updated todo list",
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "content": {"type": "string", "minLength": 1},
                        "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]},
                        "activeForm": {"type": "string", "minLength": 1},
                    },
                    "required": ["content", "status", "activeForm"],
                    "additionalProperties": False,
                },
            },
        },
        "required": ["todos"],
        "additionalProperties": False,
    }
    read_only = True

    def __init__(self) -> None:
        self.input_schema: dict[str, Any] = copy.deepcopy(self._SCHEMA)
        self.items: list[TodoItem] = []

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        raw = args.get("todos")
        if not isinstance(raw, list):
            return ToolResult.error("todos must be a list")
        if len(raw) > MAX_ITEMS:
            return ToolResult.error(f"todos: at most {MAX_ITEMS} items")
        items: list[TodoItem] = []
        for k, entry in enumerate(raw):
            if not isinstance(entry, dict):
                return ToolResult.error(f"todos[{k}] must be an object")
            content, status, form = entry.get("content"), entry.get("status"), entry.get("activeForm")
            if not isinstance(content, str) or not content.strip() or not isinstance(form, str) or not form.strip():
                return ToolResult.error(f"todos[{k}]: content and activeForm must be non-empty strings")
            if status not in _MARKS:
                return ToolResult.error(f"todos[{k}]: status must be one of pending, in_progress, completed")
            if len(content) > MAX_ITEM_CHARS or len(form) > MAX_ITEM_CHARS:
                return ToolResult.error(f"todos[{k}]: content and activeForm hold at most {MAX_ITEM_CHARS} characters")
            items.append(TodoItem(content.strip(), status, form.strip()))
        self.items = items
        return ToolResult.text(f"{checklist(items)}\n\n{NOTE}")
