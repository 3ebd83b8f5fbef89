"""`mini_claude.compat.claude_agent_sdk`: the SDK's names, its options turned into ours, and a clear error naming
each option mini-claude does not support."""

from __future__ import annotations

import pytest

import mini_claude.compat.claude_agent_sdk as sdk
from mini_claude.compat.claude_agent_sdk.options import to_options
from mini_claude.errors import ConfigError
from tests.api.conftest import ApiWorld, text


def test_the_public_names_are_there() -> None:
    for name in ("query", "ClaudeSDKClient", "ClaudeAgentOptions", "tool", "create_sdk_mcp_server", "HookMatcher",
                 "HookContext", "AssistantMessage", "UserMessage", "SystemMessage", "ResultMessage", "TextBlock",
                 "ToolUseBlock", "ToolResultBlock", "ThinkingBlock", "PermissionResultAllow", "PermissionResultDeny",
                 "ToolPermissionContext", "AgentDefinition", "ClaudeSDKError", "CLIConnectionError",
                 "CLINotFoundError", "ProcessError", "CLIJSONDecodeError"):
        assert getattr(sdk, name) is not None, name
    from mini_claude.compat.claude_agent_sdk.types import HookMatcher, ResultMessage

    assert ResultMessage is sdk.ResultMessage and HookMatcher is sdk.HookMatcher


def test_unsupported_options_are_named() -> None:
    with pytest.raises(ConfigError, match="fallback_model, betas"):
        to_options(sdk.ClaudeAgentOptions(fallback_model="haiku", betas=["x"]))
    with pytest.raises(ConfigError, match="enable_file_checkpointing"):
        to_options(sdk.ClaudeAgentOptions(enable_file_checkpointing=True))


def test_supported_options_carry_over() -> None:
    options = to_options(sdk.ClaudeAgentOptions(cwd="/tmp", model="sonnet", max_turns=3, allowed_tools=["Read"],
                                                permission_mode="acceptEdits", cli_path="/usr/bin/claude",
                                                setting_sources=["project"], env={"A": "1"}))
    assert (options.cwd, options.model, options.max_turns, options.allowed_tools) == ("/tmp", "sonnet", 3, ["Read"])
    assert options.permission_mode == "acceptEdits" and options.setting_sources == ["project"]
    assert options.env == {"A": "1"}


def test_errors_are_caught_by_the_sdks_names() -> None:
    assert issubclass(ConfigError, sdk.ClaudeSDKError) and issubclass(ConfigError, sdk.CLIConnectionError)


async def test_the_client_under_the_sdks_name(world: ApiWorld, mock_model) -> None:
    mock = mock_model([text("hello from compat")])
    options = sdk.ClaudeAgentOptions(cwd=world.project, env=world.env(mock.url))
    async with sdk.ClaudeSDKClient(options) as client:
        info = await client.get_server_info()
        assert info is not None and info["subtype"] == "init"
        await client.query("hi")
        messages = [m async for m in client.receive_response()]
    assert isinstance(messages[-1], sdk.ResultMessage) and messages[-1].result == "hello from compat"
    with pytest.raises(sdk.CLIConnectionError):
        await client.query("after disconnect")
