"""An in-process tool's handler against what the model sends (outside review, round 3): a handler that parses the
model's arguments as a command line (argparse exits on a bad one) or calls `sys.exit()` ended the whole program
using the API, since SystemExit is no Exception; it is now that call's error result, and the session goes on."""

from __future__ import annotations

import argparse
import json

import pytest

from mini_claude.api import HookMatcher, ResultMessage, create_sdk_mcp_server, tool
from tests.api import conftest as api_conftest
from tests.api.conftest import ApiWorld, call, collect, text, tool_results

world = api_conftest.world  # the API tests' fixture: a project, an isolated home and state folder

pytestmark = pytest.mark.timeout(60)


@tool("grep_cli", "Run the grep-like command line given", {"argv": str})
async def grep_cli(args):
    parser = argparse.ArgumentParser(prog="grep_cli", exit_on_error=False)
    parser.add_argument("--count", type=int, required=True)
    parsed = parser.parse_args(args["argv"].split())  # `--help` or a missing option: SystemExit
    return {"content": [{"type": "text", "text": f"count={parsed.count}"}]}


async def test_a_handler_that_exits_is_one_error_result(world: ApiWorld, mock_model) -> None:
    mock = mock_model([call("mcp__cli__grep_cli", argv="--help"), call("mcp__cli__grep_cli", argv="--count 3"),
                       text("still here")])
    options = world.options(mock.url, mcp_servers={"cli": create_sdk_mcp_server("cli", tools=[grep_cli])},
                            allowed_tools=["mcp__cli__grep_cli"])
    messages = await collect("go", options)  # no SystemExit out of the session
    first, second = tool_results(messages)
    assert first.is_error and "SystemExit" in json.dumps(first.content)
    assert not second.is_error and "count=3" in json.dumps(second.content)
    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.result == "still here"


async def test_a_hook_or_permission_callback_that_exits_is_a_failure_not_the_end(world: ApiWorld,
                                                                                 mock_model) -> None:
    async def exits_hook(input_data, tool_use_id, context):
        raise SystemExit(2)

    async def exits_answer(name, tool_input, context):
        raise SystemExit(2)

    mock = mock_model([call("Bash", command="touch asked"), text("still here")])
    options = world.options(mock.url, can_use_tool=exits_answer,
                            hooks={"PreToolUse": [HookMatcher(hooks=[exits_hook])]})
    messages = await collect("go", options)
    (block,) = tool_results(messages)
    assert block.is_error and "SystemExit" in json.dumps(block.content)  # the callback's failure denies
    assert not (world.project / "asked").exists()
    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.result == "still here"
    assert any("raised SystemExit" in line for line in world.lines)  # the hook's failure, reported
