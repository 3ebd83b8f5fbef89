"""The MCP tool adapter: one server tool, seen by the agent exactly like a built-in `Tool`."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from mini_claude.errors import McpError
from mini_claude.mcp.content import convert_result
from mini_claude.mcp.schema import sanitize_input_schema
from mini_claude.tools.base import ToolContext, ToolResult

if TYPE_CHECKING:
    from mini_claude.mcp.client import McpTool
    from mini_claude.mcp.manager import McpManager

__all__ = ["MAX_DESCRIPTION_CHARS", "McpToolAdapter"]

MAX_DESCRIPTION_CHARS = 2048


class McpToolAdapter:
    """Routes a call on `qualified` name back to (`server`, raw tool name) through the manager."""

    def __init__(self, manager: McpManager, server: str, tool: McpTool, qualified: str) -> None:
        self.manager = manager
        self.server = server
        self.mcp_tool = tool
        self.name = qualified
        description = tool.description or tool.title or f"Tool {tool.name} of MCP server {server}."
        if len(description) > MAX_DESCRIPTION_CHARS:
            description = description[:MAX_DESCRIPTION_CHARS] + " […]"
        self.description = description
        self.input_schema = sanitize_input_schema(tool.input_schema)
        self.read_only = tool.read_only_hint

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        try:
            result = await self.manager.call_tool(self.server, self.mcp_tool.name, args)
        except McpError as exc:
            return ToolResult.error(str(exc))
        # the session's environment (process env + .env), like every other setting, not os.environ alone
        max_tokens = _env_int(getattr(self.manager, "env", os.environ), "MAX_MCP_OUTPUT_TOKENS")
        converted = convert_result(result, spill_dir=ctx.spill_dir, stem=self.name, max_output_tokens=max_tokens)
        blocks = list(converted.blocks)
        for warning in converted.warnings:
            blocks.append({"type": "text", "text": f"[note: {warning}]"})
        return ToolResult(blocks, is_error=converted.is_error)


def _env_int(env: Mapping[str, str], name: str) -> int | None:
    try:
        value = int(env.get(name, ""))
    except ValueError:
        return None
    return value if value > 0 else None
