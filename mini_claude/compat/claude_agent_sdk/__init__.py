"""The Claude Agent SDK's public names over mini-claude's Python API: a program written for `claude_agent_sdk` runs
in-process on mini-claude by changing its import to `mini_claude.compat.claude_agent_sdk`.

    query, ClaudeSDKClient, ClaudeAgentOptions          the entry points (api/exchange.py, api/client.py, options.py)
    tool, create_sdk_mcp_server, SdkMcpTool             in-process MCP servers (api/tools.py)
    HookMatcher, HookContext, PermissionResultAllow/Deny, ToolPermissionContext, PermissionUpdate
    the messages and content blocks                      (api/types.py: the same classes)
    ClaudeSDKError, CLIConnectionError, ...              the errors (errors.py here)

What differs from the SDK, and why, is in docs/API.md ("Moving over from the Claude Agent SDK"). An option we do not
support is a ConfigError naming it (options.py).
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator
from typing import Any

from mini_claude import __version__
from mini_claude.api.client import Client
from mini_claude.api.exchange import query as _query
from mini_claude.api.options import AgentDefinition
from mini_claude.api.permissions import (
    CanUseTool,
    PermissionResult,
    PermissionResultAllow,
    PermissionResultDeny,
    PermissionUpdate,
    ToolPermissionContext,
)
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
from mini_claude.compat.claude_agent_sdk.errors import (
    ClaudeSDKError,
    CLIConnectionError,
    CLIJSONDecodeError,
    CLINotFoundError,
    MessageParseError,
    ProcessError,
)
from mini_claude.compat.claude_agent_sdk.hooks import HookCallback, HookContext, HookJSONOutput, HookMatcher
from mini_claude.compat.claude_agent_sdk.options import ClaudeAgentOptions, to_options
from mini_claude.errors import ConfigError

__all__ = [
    "AgentDefinition", "AssistantMessage", "CLIConnectionError", "CLIJSONDecodeError", "CLINotFoundError",
    "CanUseTool", "ClaudeAgentOptions", "ClaudeSDKClient", "ClaudeSDKError", "ContentBlock", "HookCallback",
    "HookContext", "HookJSONOutput", "HookMatcher", "Message", "MessageParseError", "PermissionResult",
    "PermissionResultAllow", "PermissionResultDeny", "PermissionUpdate", "ProcessError", "ResultMessage",
    "SdkMcpTool", "StreamEvent", "SystemMessage", "TextBlock", "ThinkingBlock", "ToolPermissionContext",
    "ToolResultBlock", "ToolUseBlock", "UserMessage", "__version__", "create_sdk_mcp_server", "query", "tool",
]


async def query(*, prompt: str | AsyncIterable[dict[str, Any]], options: ClaudeAgentOptions | None = None,
                transport: Any = None) -> AsyncIterator[Message]:
    """The SDK's `query`: one exchange with a fresh in-process session."""
    _no_transport(transport)
    async for message in _query(prompt=prompt, options=to_options(options)):
        yield message


class ClaudeSDKClient(Client):
    """The SDK's `ClaudeSDKClient`: a session of many turns (api/client.py), its options the SDK's."""

    def __init__(self, options: ClaudeAgentOptions | None = None, transport: Any = None) -> None:
        _no_transport(transport)
        super().__init__(to_options(options))

    async def toggle_mcp_server(self, server_name: str, enabled: bool) -> None:
        await self.set_mcp_server_enabled(server_name, enabled)

    async def get_server_info(self) -> dict[str, Any] | None:
        """What the session says of itself at the start (the init message's data), or None before connect."""
        if self.parts is None:
            return None
        from mini_claude.session.init_record import init_record

        return await init_record(self.parts, original_cwd=str(self.parts.agent.ctx.cwd))

    async def rewind_files(self, user_message_id: str) -> None:
        raise ConfigError("rewind_files: file checkpointing is not supported by mini-claude")


def _no_transport(transport: Any) -> None:
    if transport is not None:
        raise ConfigError("transport: mini-claude runs the session in this process; a custom transport has no "
                          "meaning here (leave it unset)")


def __getattr__(name: str) -> Any:
    # the in-process servers' names come from api/tools.py
    if name in ("tool", "create_sdk_mcp_server", "SdkMcpTool"):
        from mini_claude.api import tools

        return getattr(tools, name)
    raise AttributeError(f"module 'mini_claude.compat.claude_agent_sdk' has no attribute {name!r}")
