"""The control channel alone, over a fake stdin (an asyncio queue of lines) and a list of written lines: turns and
control lines are told apart, every request gets one answer, our own requests are answered, time out or fail when
stdin ends, a bad line ends the input with a clear error, and nothing waits forever."""

from __future__ import annotations

import asyncio
import io
import json
from typing import Any

import pytest

from mini_claude.cli.sdk_control.channel import ControlChannel, ControlError, LineWriter
from mini_claude.errors import ConfigError
from mini_claude.permissions.answers import PermissionAnswer
from tests.helpers import eventually

pytestmark = pytest.mark.timeout(20)


class FakeStdin:
    def __init__(self) -> None:
        self.lines: asyncio.Queue[str] = asyncio.Queue()

    def send(self, record: Any) -> None:
        self.lines.put_nowait((record if isinstance(record, str) else json.dumps(record)) + "\n")

    def end(self) -> None:
        self.lines.put_nowait("")

    async def __call__(self) -> str:
        return await self.lines.get()


def written(out: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.getvalue().splitlines()]


async def echo(body: dict[str, Any]) -> dict[str, Any] | None:
    if body["subtype"] == "boom":
        raise ValueError("it broke")
    if body["subtype"] == "slow":
        await asyncio.sleep(30)
    return {"echo": body["subtype"]}


def channel(handler: Any = echo, timeout_s: float = 5.0) -> tuple[ControlChannel, FakeStdin, io.StringIO]:
    stdin, out = FakeStdin(), io.StringIO()
    chan = ControlChannel(stdin, LineWriter(out), handler, timeout_s=timeout_s)
    chan.start()
    return chan, stdin, out


async def test_turns_and_control_requests_are_told_apart_and_each_request_answered() -> None:
    chan, stdin, out = channel()
    stdin.send({"type": "user", "message": {"role": "user", "content": "hello"}})
    stdin.send({"type": "control_request", "request_id": "r1", "request": {"subtype": "ping"}})
    stdin.send({"type": "control_request", "request_id": "r2", "request": {"subtype": "boom"}})
    stdin.send({"type": "control_request", "request_id": "r3", "request": {"no": "subtype"}})
    stdin.send({"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": "two"}]}})
    stdin.end()
    assert await chan.next_turn() == "hello"
    assert await chan.next_turn() == [{"type": "text", "text": "two"}]
    assert await chan.next_turn() is None
    await eventually(lambda: len(written(out)) == 3, "three answers")
    answers = {a["response"]["request_id"]: a["response"] for a in written(out)}
    assert answers["r1"] == {"subtype": "success", "request_id": "r1", "response": {"echo": "ping"}}
    assert answers["r2"]["subtype"] == "error" and answers["r2"]["error"] == "it broke"
    assert answers["r3"]["subtype"] == "error" and "subtype" in answers["r3"]["error"]
    await chan.aclose()


async def test_our_request_gets_its_answer_and_an_error_answer_raises() -> None:
    chan, stdin, out = channel()
    asked = asyncio.create_task(chan.request({"subtype": "can_use_tool", "tool_name": "Bash"}))
    await eventually(lambda: written(out), "the request line")
    sent = written(out)[0]
    assert sent["type"] == "control_request" and sent["request"]["tool_name"] == "Bash"
    stdin.send({"type": "control_response", "response": {"subtype": "success", "request_id": sent["request_id"],
                                                         "response": {"behavior": "allow"}}})
    assert await asyncio.wait_for(asked, 5) == {"behavior": "allow"}
    failing = asyncio.create_task(chan.request({"subtype": "hook_callback"}))
    await eventually(lambda: len(written(out)) == 2, "the second request line")
    stdin.send({"type": "control_response", "response": {"subtype": "error", "request_id":
                                                         written(out)[1]["request_id"], "error": "no hook"}})
    with pytest.raises(ControlError, match="no hook"):
        await asyncio.wait_for(failing, 5)
    await chan.aclose()


async def test_stdin_end_fails_pending_requests_and_later_ones_at_once() -> None:
    chan, stdin, out = channel(timeout_s=60)
    pending = asyncio.create_task(chan.request({"subtype": "can_use_tool"}))
    await eventually(lambda: written(out), "the request line")
    stdin.end()
    with pytest.raises(ControlError, match="stdin"):
        await asyncio.wait_for(pending, 5)
    with pytest.raises(ControlError, match="stdin"):
        await asyncio.wait_for(chan.request({"subtype": "can_use_tool"}), 5)
    assert await chan.next_turn() is None
    await chan.aclose()


async def test_an_unanswered_request_times_out_naming_it_and_is_cancelled() -> None:
    chan, _, out = channel(timeout_s=0.2)
    with pytest.raises(ControlError, match=r"hook_callback within 0\.2s"):
        await chan.request({"subtype": "hook_callback"})
    request, cancel = written(out)
    assert cancel == {"type": "control_cancel_request", "request_id": request["request_id"]}
    await chan.aclose()


async def test_the_sdk_cancelling_its_request_stops_our_work_on_it() -> None:
    chan, stdin, out = channel()
    stdin.send({"type": "control_request", "request_id": "s", "request": {"subtype": "slow"}})
    await eventually(lambda: chan._handlers, "the slow handler running")
    stdin.send({"type": "control_cancel_request", "request_id": "s"})
    await eventually(lambda: not chan._tasks, "the handler cancelled")
    stdin.send({"type": "control_request", "request_id": "p", "request": {"subtype": "ping"}})
    await eventually(lambda: written(out), "the next answer")
    assert [a["response"]["request_id"] for a in written(out)] == ["p"]  # nothing was sent for the cancelled one
    await chan.aclose()


@pytest.mark.parametrize(("line", "error"), [
    ("not json", "a line is not JSON"),
    (json.dumps({"type": "mystery"}), "unknown line type 'mystery'"),
    (json.dumps({"type": "user", "message": {"role": "user", "content": 3}}), "each user line must be"),
    ('{"type": "user", "x": ' + "[" * 100_000 + "]" * 100_000 + "}", "a line is not JSON"),  # round 3
    ('{"type": "control_response", "response": ' + '{"a":' * 500 + "1" + "}" * 501, "nests deeper than 256"),
])
async def test_a_bad_line_ends_the_input_with_a_clear_error(line: str, error: str) -> None:
    chan, stdin, _ = channel()
    stdin.send({"type": "user", "message": {"role": "user", "content": "first"}})
    stdin.send(line)
    assert await chan.next_turn() == "first"  # what came before still runs
    with pytest.raises(ConfigError, match=error):
        await chan.next_turn()
    with pytest.raises(ConfigError):  # and says so again: the run loop never waits for more
        await chan.next_turn()
    await chan.aclose()


async def test_aclose_cancels_requests_being_handled() -> None:
    chan, stdin, out = channel()
    stdin.send({"type": "control_request", "request_id": "s", "request": {"subtype": "slow"}})
    await eventually(lambda: chan._tasks, "the slow handler running")
    await asyncio.wait_for(chan.aclose(), 5)
    assert not chan._tasks and out.getvalue() == ""


def test_line_writer_hands_on_whole_lines_only() -> None:
    out = io.StringIO()
    writer = LineWriter(out)
    writer.write('{"a": ')
    assert out.getvalue() == ""
    writer.write('1}\n{"b": 2}\n{"c"')
    assert out.getvalue() == '{"a": 1}\n{"b": 2}\n'
    writer.write(': 3}\n')
    assert out.getvalue().splitlines() == ['{"a": 1}', '{"b": 2}', '{"c": 3}']


async def test_hook_callbacks_send_hook_callback_and_return_the_sdk_answer() -> None:
    from mini_claude.cli.sdk_control.adapters import hook_callables, permission_answer


    chan, stdin, out = channel()
    groups = hook_callables(chan, {"PreToolUse": [{"matcher": "Bash", "hookCallbackIds": ["hook_0", "hook_1"],
                                                   "timeout": 7}]})
    assert [(g.event, g.matcher, g.timeout_s, len(g.callables)) for g in groups] == [("PreToolUse", "Bash", 7.0, 2)]
    calling = asyncio.create_task(groups[0].callables[1]({"tool_name": "Bash"}, "toolu_1", None))
    await eventually(lambda: written(out), "the hook_callback request")
    sent = written(out)[0]
    assert sent["request"] == {"subtype": "hook_callback", "callback_id": "hook_1", "input": {"tool_name": "Bash"},
                               "tool_use_id": "toolu_1"}
    decision = {"hookSpecificOutput": {"permissionDecision": "deny"}}
    stdin.send({"type": "control_response", "response": {"subtype": "success", "request_id": sent["request_id"],
                                                         "response": decision}})
    assert await asyncio.wait_for(calling, 5) == decision
    with pytest.raises(ValueError, match="hookCallbackIds"):
        hook_callables(chan, {"Stop": [{"matcher": None}]})
    assert permission_answer({"behavior": "allow", "updatedInput": {"a": 1}}, {"a": 1}) == PermissionAnswer(True)
    assert permission_answer({"behavior": "deny", "message": "not now"}) == PermissionAnswer(False, message="not now")
    assert permission_answer({"behavior": "deny"}) == PermissionAnswer(False)
    assert permission_answer({"behavior": "allow", "updatedInput": {"a": 2}}, {"a": 1}) == PermissionAnswer(
        True, updated_input={"a": 2})
    rule = {"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "git status"}], "behavior": "allow"}
    assert permission_answer({"behavior": "allow", "updatedPermissions": [rule]}).remember == ("Bash(git status)",)
    await chan.aclose()


async def test_the_gate_question_becomes_can_use_tool_with_what_the_gate_knows() -> None:
    from dataclasses import dataclass

    from mini_claude.cli.sdk_control.adapters import sdk_ask
    from mini_claude.tools.shell import BashTool

    @dataclass(frozen=True)
    class Context:  # the shape of permissions/answers.py AskContext
        suggestions: tuple[str, ...] = ("Bash(git status:*)",)
        reason: str = "rule Bash(git:*) requires asking first"
        blocked_path: str | None = None
        tool_use_id: str | None = "toolu_9"

    chan, stdin, out = channel()
    ask = sdk_ask(chan)
    asking = asyncio.create_task(ask(BashTool(), {"command": "git status"}, Context()))
    await eventually(lambda: written(out), "the can_use_tool request")
    sent = written(out)[0]
    assert sent["request"] == {
        "subtype": "can_use_tool", "tool_name": "Bash", "input": {"command": "git status"}, "blocked_path": None,
        "permission_suggestions": [{"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "git status:*"}],
                                    "behavior": "allow", "destination": "session"}],
        "tool_use_id": "toolu_9", "decision_reason": "rule Bash(git:*) requires asking first"}
    stdin.send({"type": "control_response", "response": {"subtype": "success", "request_id": sent["request_id"],
                                                         "response": {"behavior": "deny", "message": "no git"}}})
    assert await asyncio.wait_for(asking, 5) == PermissionAnswer(False, message="no git")
    stdin.end()
    assert (await ask(BashTool(), {"command": "ls"})).startswith("no: the SDK's permission callback failed")
    await chan.aclose()
