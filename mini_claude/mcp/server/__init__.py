"""A small MCP *server*, written on the wire format like the client (no MCP SDK): `McpServerCore` holds a server's
tools and serves each client connection (`ServerSession`); a tool handler gets a `ToolCallContext` to report
progress, log, elicit and sample while it runs. It is transport-agnostic: `InProcessTransport`
(mini_claude.mcp.transports.inprocess) connects the agent's own client to it inside this process.
"""

from mini_claude.mcp.server.context import ToolCallContext
from mini_claude.mcp.server.core import McpServerCore
from mini_claude.mcp.server.session import ServerSession
from mini_claude.mcp.server.tools import ServerTool

__all__ = ["McpServerCore", "ServerSession", "ServerTool", "ToolCallContext"]
