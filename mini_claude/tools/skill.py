"""The `Skill` tool: the model loads a skill listed in the system prompt, or reads one of its files.

Loading is the only moment a skill's content is fetched (for an MCP-served skill: `SKILL.md` through
`resources/read`, verified against the server's listing). A refused skill comes back as an error result that
says why, and nothing of it reaches the model.
"""

from __future__ import annotations

from typing import Any

from mini_claude.errors import McpError, ToolError
from mini_claude.skills.registry import SkillRegistry
from mini_claude.tools.base import ToolContext, ToolResult

__all__ = ["SKILL_TOOL_NAME", "SkillTool"]

SKILL_TOOL_NAME = "Skill"


class SkillTool:
    """`{"skill": NAME}` loads the skill's instructions; `{"skill": NAME, "file": PATH}` reads one of its
    supporting files (PATH relative to the skill's root, as SKILL.md refers to it)."""

    name = SKILL_TOOL_NAME
    description = (
        "Load a skill listed under 'Skills' in the system prompt: returns its instructions (SKILL.md). Load a "
        "skill when the task matches its description, then follow it. To read a file the skill refers to "
        "(e.g. references/FORMS.md), call again with `file` set to that path, relative to the skill.")
    read_only = True

    def __init__(self, registry: SkillRegistry) -> None:
        self.registry = registry
        self.input_schema: dict[str, Any] = {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "skill": {"type": "string", "description": "The skill's name exactly as listed."},
                "file": {"type": "string", "description": "Optional: a file of the skill, relative to its root."},
            },
            "required": ["skill"],
        }

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        name = args.get("skill")
        file = args.get("file")
        if not isinstance(name, str) or not name.strip():
            return ToolResult.error("`skill` must be the name of a listed skill")
        if file is not None and not isinstance(file, str):
            return ToolResult.error("`file` must be a path relative to the skill")
        name = name.strip()
        skill = self.registry.get(name)
        try:
            if file:
                text = await self.registry.read_file(name, file)
                return ToolResult.text(text)
            text = await self.registry.load(name)
        except (ToolError, McpError) as exc:
            return ToolResult.error(str(exc))
        where = skill.location if skill is not None else ""
        header = f"Skill {name!r} loaded (files it refers to are relative to {where}; read them with the " \
                 f"{SKILL_TOOL_NAME} tool's `file`)."
        return ToolResult.text(f"{header}\n\n{text}")
