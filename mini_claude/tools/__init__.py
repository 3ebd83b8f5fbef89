"""Tools the agent can call: the `Tool` protocol, the built-ins, and the MCP tool adapter."""

from mini_claude.tools.base import Tool, ToolContext, ToolResult

__all__ = ["Tool", "ToolContext", "ToolResult"]
