"""What the SDK's stream may not do (outside review, round 3): a `set_permission_mode` line on stdin never widens the
session to bypassPermissions unless the command line launched it there (Claude Code refuses it the same way), and
a mode switch that is refused leaves the gate asking as before."""

from __future__ import annotations

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
