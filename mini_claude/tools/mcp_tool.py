"""The MCP tool adapter: one server tool (a manager's `McpToolEntry`), seen by the agent exactly like a built-in
`Tool`. Calls go back through the manager, which routes them to the server (reconnecting a lost remote one)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mini_claude.errors import McpError
from mini_claude.mcp.content import convert_result
from mini_claude.mcp.manager import McpManager, McpToolEntry
from mini_claude.mcp.schema import sanitize_input_schema
from mini_claude.tools.base import ToolContext, ToolResult

__all__ = ["MAX_DESCRIPTION_CHARS", "McpToolAdapter", "McpToolAdapters"]

MAX_DESCRIPTION_CHARS = 2048


class McpToolAdapter:
    """Routes a call on the entry's qualified name back to (server, raw tool name) through the manager."""

    def __init__(self, manager: McpManager, entry: McpToolEntry) -> None:
        tool = entry.tool
        self.manager = manager
        self.entry = entry
        self.server = entry.server
        self.mcp_tool = tool
        self.name = entry.qualified_name
        description = tool.description or tool.title or f"Tool {tool.name} of MCP server {entry.server}."
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
        # the session's environment (the real process environment; never a project .env), like every other setting
        max_tokens = _env_int(self.manager.env, "MAX_MCP_OUTPUT_TOKENS")
        converted = convert_result(result, spill_dir=ctx.spill_dir, stem=self.name, max_output_tokens=max_tokens)
        blocks = list(converted.blocks)
        for warning in converted.warnings:
            blocks.append({"type": "text", "text": f"[note: {warning}]"})
        return ToolResult(blocks, is_error=converted.is_error)


class McpToolAdapters:
    """The adapters for a manager's current tool entries, rebuilt only when the manager's list changes (it hands
    out the same list object until a server's state or tools change), so each turn does not re-sanitize schemas.

        adapters = McpToolAdapters(manager)
        tools = adapters()          # list[McpToolAdapter], one per ready server tool
    """

    def __init__(self, manager: McpManager) -> None:
        self.manager = manager
        self._entries: list[McpToolEntry] | None = None
        self._adapters: list[McpToolAdapter] = []

    def __call__(self) -> list[McpToolAdapter]:
        entries = self.manager.tools()
        if entries is not self._entries:
            self._adapters = [McpToolAdapter(self.manager, entry) for entry in entries]
            self._entries = entries
        return self._adapters


def _env_int(env: Mapping[str, str], name: str) -> int | None:
    try:
        value = int(env.get(name, ""))
    except ValueError:
        return None
    return value if value > 0 else None
