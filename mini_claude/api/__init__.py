"""mini-claude as a library: the whole agent and its MCP host in this process (docs/API.md).

    from mini_claude.api import Options, ResultMessage, query

    async for message in query(prompt="Summarise README.md", options=Options(cwd=".", allowed_tools=["Read"])):
        if isinstance(message, ResultMessage):
            print(message.result)

`query` (one exchange) and `Client` (a session of many turns) yield the typed messages of api/types.py. Tools written
as Python functions (`tool`, `create_sdk_mcp_server`) are real MCP servers served in this process; hooks and
`can_use_tool` are Python callables. `mini_claude.compat.claude_agent_sdk` offers the same under the Claude Agent
SDK's names. Importing this package loads only the types: a session's machinery loads when the first one starts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mini_claude.api.client import Client
from mini_claude.api.exchange import query
from mini_claude.api.hooks import HookContext, HookMatcher
from mini_claude.api.options import AgentDefinition, Options
from mini_claude.api.types import (
    AssistantMessage,
    ContentBlock,
    Message,
    ResultMessage,
    StreamEvent,
    SystemMessage,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)

if TYPE_CHECKING:
    from mini_claude.api.permissions import (
        PermissionResultAllow,
        PermissionResultDeny,
        PermissionUpdate,
        ToolPermissionContext,
    )
    from mini_claude.api.tools import SdkMcpTool, ToolCallContext, create_sdk_mcp_server, function_tool, tool

__all__ = [
    "AgentDefinition",
    "AssistantMessage",
    "Client",
    "ContentBlock",
    "HookContext",
    "HookMatcher",
    "Message",
    "Options",
    "PermissionResultAllow",
    "PermissionResultDeny",
    "PermissionUpdate",
    "ResultMessage",
    "SdkMcpTool",
    "StreamEvent",
    "SystemMessage",
    "TextBlock",
    "ThinkingBlock",
    "ToolCallContext",
    "ToolPermissionContext",
    "ToolResultBlock",
    "ToolUseBlock",
    "UserMessage",
    "create_sdk_mcp_server",
    "function_tool",
    "query",
    "tool",
]

_LAZY = {
    "PermissionResultAllow": "mini_claude.api.permissions", "PermissionResultDeny": "mini_claude.api.permissions",
    "PermissionUpdate": "mini_claude.api.permissions", "ToolPermissionContext": "mini_claude.api.permissions",
    **{name: "mini_claude.api.tools" for name in ("SdkMcpTool", "ToolCallContext", "create_sdk_mcp_server",
                                                  "function_tool", "tool")},
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'mini_claude.api' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
