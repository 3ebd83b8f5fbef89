"""Hooks as Python callables and `can_use_tool`'s full answers, through the public API against the mock model."""

from __future__ import annotations

import json

from mini_claude.api import (
    Client,
    HookMatcher,
    PermissionResultAllow,
    PermissionResultDeny,
    PermissionUpdate,
    ResultMessage,
)
from tests.api.conftest import ApiWorld, call, collect, text, tool_results


async def test_a_pre_tool_use_callable_denies_and_the_model_reads_why(world: ApiWorld, mock_model) -> None:
    seen: list[tuple[dict, str | None]] = []

    async def guard(input_data, tool_use_id, context):
        seen.append((input_data, tool_use_id))
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                       "permissionDecisionReason": "no shell in this project"}}

    mock = mock_model([call("Bash", command="echo hi"), text("ok: {{last_tool_result}}")])
    options = world.options(mock.url, permission_mode="bypassPermissions",
                            hooks={"PreToolUse": [HookMatcher(matcher="Bash", hooks=[guard])]})
    messages = await collect("say hi", options)
    (input_data, tool_use_id), = seen
    assert input_data["hook_event_name"] == "PreToolUse" and input_data["tool_name"] == "Bash"
    assert input_data["tool_input"] == {"command": "echo hi"} and tool_use_id == "toolu_mock_1"
    (block,) = tool_results(messages)
    assert block.is_error and "no shell in this project" in json.dumps(block.content)
    assert "no shell in this project" in json.dumps(mock.requests[1]["body"]["messages"][-1])


async def test_session_start_and_end_callables(world: ApiWorld, mock_model) -> None:
    events: list[tuple[str, str]] = []

    async def started(input_data, tool_use_id, context):
        events.append(("start", input_data["source"]))
        return {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "SESSION CONTEXT 31"}}

    async def ended(input_data, tool_use_id, context):
        events.append(("end", input_data["reason"]))
        return {}

    mock = mock_model([text("hello")])
    hooks = {"SessionStart": [HookMatcher(hooks=[started])], "SessionEnd": [HookMatcher(hooks=[ended])]}
    async with Client(world.options(mock.url, hooks=hooks)) as client:
        assert events == [("start", "startup")]
        await client.query("hi")
        [m async for m in client.receive_response()]
    assert events == [("start", "startup"), ("end", "other")]
    assert "SESSION CONTEXT 31" in json.dumps(mock.requests[0]["body"]["messages"])


async def test_a_matcher_limits_a_callable_to_its_tools(world: ApiWorld, mock_model) -> None:
    calls: list[str] = []

    async def note(input_data, tool_use_id, context):
        calls.append(input_data["tool_name"])
        return {}

    (world.project / "a.txt").write_text("a\n")
    mock = mock_model([call("Read", file_path=str(world.project / "a.txt")), call("Glob", pattern="*.txt"),
                       text("done")])
    options = world.options(mock.url, hooks={"PostToolUse": [HookMatcher(matcher="Glob", hooks=[note])]})
    await collect("look", options)
    assert calls == ["Glob"]


async def test_can_use_tool_changes_the_input_and_remembers_a_rule(world: ApiWorld, mock_model) -> None:
    asked: list[dict] = []

    async def can_use_tool(name, tool_input, context):
        asked.append({"input": tool_input, "suggestions": context.suggestions})
        rule = PermissionUpdate("addRules", rules=[{"toolName": "Bash", "ruleContent": "ls -a"}], behavior="allow")
        return PermissionResultAllow(updated_input={"command": "ls -a"}, updated_permissions=[rule])

    (world.project / "shown.txt").write_text("x\n")
    mock = mock_model([call("Bash", command="ls /"), call("Bash", command="ls -a"), text("{{last_tool_result}}")])
    messages = await collect("list", world.options(mock.url, can_use_tool=can_use_tool))
    assert len(asked) == 1  # the remembered rule allowed the second call
    assert asked[0]["input"] == {"command": "ls /"} and asked[0]["suggestions"]
    first, second = tool_results(messages)
    assert "shown.txt" in json.dumps(first.content) and "etc" not in json.dumps(first.content)  # ran `ls -a`
    assert "shown.txt" in json.dumps(second.content)


async def test_a_denial_with_interrupt_ends_the_turn(world: ApiWorld, mock_model) -> None:
    async def can_use_tool(name, tool_input, context):
        return PermissionResultDeny(message="stop right there", interrupt=True)

    mock = mock_model([call("Bash", command="ls"), text("never reached")])
    messages = await collect("list", world.options(mock.url, can_use_tool=can_use_tool))
    (block,) = tool_results(messages)
    assert block.is_error and "stop right there" in json.dumps(block.content)
    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.terminal_reason == "aborted_tools"
    assert len(mock.requests) == 1


async def test_a_callback_that_raises_denies_and_says_why(world: ApiWorld, mock_model) -> None:
    async def can_use_tool(name, tool_input, context):
        raise RuntimeError("callback bug")

    mock = mock_model([call("Bash", command="ls"), text("{{last_tool_result}}")])
    messages = await collect("list", world.options(mock.url, can_use_tool=can_use_tool))
    (block,) = tool_results(messages)
    assert block.is_error and "callback bug" in json.dumps(block.content)


async def test_an_answer_for_another_event_refuses_the_call(world: ApiWorld, mock_model) -> None:
    async def confused(input_data, tool_use_id, context):
        return {"hookSpecificOutput": {"hookEventName": "PostToolUse", "permissionDecision": "allow"}}

    mock = mock_model([call("Bash", command="echo hi"), text("{{last_tool_result}}")])
    options = world.options(mock.url, permission_mode="bypassPermissions",
                            hooks={"PreToolUse": [HookMatcher(hooks=[confused])]})
    messages = await collect("echo", options)
    (block,) = tool_results(messages)
    assert block.is_error and "answered for 'PostToolUse', not 'PreToolUse'" in json.dumps(block.content)
