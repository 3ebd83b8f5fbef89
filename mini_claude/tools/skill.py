"""The `Skill` tool: the model loads a skill listed in the system prompt, or reads one of its files.

Loading is the only moment a skill's content is fetched (for an MCP-served skill: `SKILL.md` through
`resources/read`, verified against the server's listing). A refused skill comes back as an error result that
says why, and nothing of it reaches the model.

The gate sees what a call touches: a local skill's files as reads of their resolved paths (`FileReader`: deny
rules, the workspace boundary and secrets apply as to Read, so a skill folder symlinked to the project root
cannot hand out `.env`), an MCP skill as a call that reaches its server (`ServerTool`: that server's deny rule
applies; only files the server listed are ever asked for, so nothing of the model's is sent).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from mini_claude.errors import McpError, ToolError
from mini_claude.mcp.skills import McpSkill
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

    input_is_servers = False  # ServerTool: an MCP skill reaches its server; the input is ours

    def servers_reached(self, args: Mapping[str, Any]) -> tuple[str, ...]:
        skill = self.registry.get(str(args.get("skill", "")).strip())
        return (skill.source.entry.server,) if skill is not None and isinstance(skill.source, McpSkill) else ()

    def files_read(self, args: Mapping[str, Any]) -> list[str]:
        """FileReader: the resolved paths a call on a local skill reads (SKILL.md, or the supporting file)."""
        skill = self.registry.get(str(args.get("skill", "")).strip())
        if skill is None or isinstance(skill.source, McpSkill):
            return []
        file = args.get("file")
        relative = file.lstrip("/") if isinstance(file, str) and file else "SKILL.md"
        return [os.path.realpath(os.path.join(skill.source.directory, relative))]

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
