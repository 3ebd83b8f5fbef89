"""The model's view of MCP resources: `ListMcpResourcesTool` and `ReadMcpResourceTool` (offered while a ready server
has resources; see mini_claude.mcp.host.resources). Both only read, but they talk to a server the model names (a
uri can carry data out), so each is that server's tool (`ServerTool`): its `mcp__server` rules and approval apply,
plan mode asks, and the question shows the server and the uri. Server text in listings is data for the model; the
terminal shows it only through `cli.terminal.render.clean`."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from mini_claude.errors import McpError
from mini_claude.mcp.host.resources import ResourceService
from mini_claude.tools.base import ToolContext, ToolResult

__all__ = ["ListMcpResourcesTool", "ReadMcpResourceTool", "resource_tools"]

MAX_LISTED = 500


class ListMcpResourcesTool:
    name = "ListMcpResourcesTool"
    description = ("List the resources (files, documents, data) that connected MCP servers offer: each with its "
                   "server, uri, name and mimeType. Pass `server` to list one server's. Read one with "
                   "ReadMcpResourceTool.")
    read_only = True
    input_is_servers = False

    def __init__(self, resources: ResourceService) -> None:
        self.resources = resources
        self.input_schema: dict[str, Any] = {"type": "object", "additionalProperties": False, "properties": {
            "server": {"type": "string", "description": "Only this server's resources (optional)."}}}

    def servers_reached(self, args: Mapping[str, Any]) -> tuple[str, ...]:
        server = args.get("server")
        return (server,) if isinstance(server, str) else tuple(self.resources.servers_with_resources())

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        server = args.get("server")
        if server is not None and not isinstance(server, str):
            return ToolResult.error("server must be a string")
        try:
            listed = await self.resources.list_all(server)
        except McpError as exc:
            return ToolResult.error(str(exc))
        rows = [{"server": name, **{k: r[k] for k in ("uri", "name", "mimeType", "description") if k in r}}
                for name, r in listed[:MAX_LISTED]]
        more = f"\n({len(listed) - MAX_LISTED} more not shown)" if len(listed) > MAX_LISTED else ""
        return ToolResult.text((json.dumps(rows, ensure_ascii=False, indent=1) if rows else "No resources.") + more)


class ReadMcpResourceTool:
    name = "ReadMcpResourceTool"
    description = "Read one resource of an MCP server by its uri (from ListMcpResourcesTool or a resource link)."
    read_only = True
    input_is_servers = False

    def __init__(self, resources: ResourceService) -> None:
        self.resources = resources
        self.input_schema: dict[str, Any] = {"type": "object", "additionalProperties": False,
                                             "required": ["server", "uri"], "properties": {
            "server": {"type": "string", "description": "The server that offers it."},
            "uri": {"type": "string", "description": "The resource's uri."}}}

    def servers_reached(self, args: Mapping[str, Any]) -> tuple[str, ...]:
        server = args.get("server")
        return (server,) if isinstance(server, str) else ()

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        server, uri = args.get("server"), args.get("uri")
        if not isinstance(server, str) or not isinstance(uri, str):
            return ToolResult.error("server and uri must be strings")
        try:
            blocks = await self.resources.read_blocks(server, uri, spill_dir=ctx.spill_dir)
        except McpError as exc:
            return ToolResult.error(str(exc))
        return ToolResult(blocks or [{"type": "text", "text": "(the resource is empty)"}])


def resource_tools(resources: ResourceService) -> list[ListMcpResourcesTool | ReadMcpResourceTool]:
    """Both tools while some ready server has resources, else none."""
    if not resources.servers_with_resources():
        return []
    return [ListMcpResourcesTool(resources), ReadMcpResourceTool(resources)]
