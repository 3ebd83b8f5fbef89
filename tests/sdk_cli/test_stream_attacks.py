"""What the SDK's stream may not do (outside review, round 3): a `set_permission_mode` line on stdin never widens the
session to bypassPermissions unless the command line launched it there (Claude Code refuses it the same way), and
a mode switch that is refused leaves the gate asking as before."""

from __future__ import annotations

import json

import pytest

from tests.sdk_cli.conftest import SdkRun

pytestmark = pytest.mark.timeout(150)


def answer(text: str) -> dict[str, object]:
    return {"content": [{"type": "text", "text": text}]}


def bash(command: str) -> dict[str, object]:
    return {"content": [{"type": "tool_use", "name": "Bash", "input": {"command": command}}]}


def test_the_stream_cannot_switch_an_asking_session_to_bypass_permissions(sdk: SdkRun) -> None:
    sdk.mock([bash("touch pwned.txt"), answer("done")])
    got = sdk.drive("""
        out = {}
        async with ClaudeSDKClient(options=options()) as client:
            try:
                await client.set_permission_mode("bypassPermissions")
            except Exception as exc:
                out["refused"] = str(exc)
            out["mode"] = (await client.get_server_info())["current_permission_mode"]
            await client.query("make a file")
            async for message in client.receive_response():
                if isinstance(message, UserMessage):
                    for block in message.content:
                        if isinstance(block, ToolResultBlock):
                            out["result"] = [block.is_error, str(block.content)]
        report(out)
    """)
    assert "not launched with --dangerously-skip-permissions" in got["refused"]
    assert got["mode"] == "default"
    assert got["result"][0] is True and not (sdk.work / "pwned.txt").exists()


def test_a_session_launched_in_bypass_may_switch_back_to_it(sdk: SdkRun) -> None:
    sdk.mock([bash("touch made.txt"), answer("done")])
    got = sdk.drive("""
        out = {}
        async with ClaudeSDKClient(options=options(permission_mode="bypassPermissions")) as client:
            await client.set_permission_mode("default")
            await client.set_permission_mode("bypassPermissions")
            out["mode"] = (await client.get_server_info())["current_permission_mode"]
            await client.query("make a file")
            async for message in client.receive_response():
                pass
        report(out)
    """)
    assert got["mode"] == "bypassPermissions" and (sdk.work / "made.txt").exists()


def test_an_interrupting_denial_in_a_parallel_batch_answers_every_call(sdk: SdkRun) -> None:
    """Three read-only calls in one batch, the first refused with interrupt: each tool_use gets a tool_result, and
    the next turn's request carries a valid history (every tool_use answered, in order)."""
    outside = sdk.work.parent / "outside"
    outside.mkdir()
    for name in "abc":
        (outside / name).write_text(name)
    reads = {"content": [{"type": "tool_use", "name": "Read", "input": {"file_path": str(outside / n)}}
                         for n in "abc"]}
    mock = sdk.mock([reads, answer("next turn")])
    got = sdk.drive("""
        out = {"results": []}
        async def can_use_tool(name, tool_input, context):
            return PermissionResultDeny(message="stop everything", interrupt=True)
        async with ClaudeSDKClient(options=options(can_use_tool=can_use_tool)) as client:
            await client.query("read them")
            async for message in client.receive_response():
                if isinstance(message, UserMessage) and isinstance(message.content, list):
                    out["results"] += [str(b.content) for b in message.content if isinstance(b, ToolResultBlock)]
            await client.query("what now?")
            async for message in client.receive_response():
                if isinstance(message, ResultMessage):
                    out["second"] = message.result
        report(out)
    """)
    assert got["second"] == "next turn"
    body = mock.requests[1]["body"]
    uses = [b["id"] for m in body["messages"] if m["role"] == "assistant" for b in m["content"]
            if b.get("type") == "tool_use"]
    answered = [b["tool_use_id"] for m in body["messages"] if m["role"] == "user" and isinstance(m["content"], list)
                for b in m["content"] if b.get("type") == "tool_result"]
    assert len(uses) == 3 and answered == uses
    first_user_after = next(m for m in body["messages"][2:] if m["role"] == "user")
    assert [b["type"] for b in first_user_after["content"]][:3] == ["tool_result"] * 3  # results first
    assert "stop everything" in json.dumps(first_user_after["content"][0])


def test_a_second_initialize_is_refused_and_the_hooks_fire_once(sdk: SdkRun) -> None:
    sdk.mock([bash("true"), answer("done")])
    got = sdk.drive("""
        out = {"fired": 0}
        async def count(input_data, tool_use_id, context):
            out["fired"] += 1
            return {}
        hooks = {"PreToolUse": [HookMatcher(matcher="Bash", hooks=[count])]}
        async with ClaudeSDKClient(options=options(hooks=hooks, allowed_tools=["Bash(true)"])) as client:
            try:
                await client._query._send_control_request({"subtype": "initialize", "hooks": None})
            except Exception as exc:
                out["again"] = str(exc)
            await client.query("run true")
            async for message in client.receive_response():
                pass
        report(out)
    """)
    assert "already initialized" in got["again"]
    assert got["fired"] == 1
