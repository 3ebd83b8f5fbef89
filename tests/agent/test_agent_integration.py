"""The agent loop end to end in-process: a real Agent, the real `anthropic` / `openai` SDKs against the mock model
over loopback HTTP, real built-in tools and the real permission gate. Requests are asserted on the mock's log."""

from __future__ import annotations

import asyncio
import socket
import time
from pathlib import Path
from typing import Any, ClassVar

import pytest
from agent_helpers import (
    RawChatServer,
    last_user_tool_results,
    make_agent,
    result_text,
    say,
    tool,
    validate_history,
)

from mini_claude.agent.loop import INTERRUPTED_TEXT, SilentUI
from mini_claude.tools.base import ToolContext, ToolResult
from tests.helpers import eventually, pid_alive

pytestmark = pytest.mark.timeout(30)

CHAIN = [tool("Read", file_path="a.txt"),
         tool("Edit", file_path="a.txt", old_string="beta", new_string="gamma"),
         tool("Read", file_path="a.txt"),
         say("final: {{last_tool_result}}")]


class Boom:
    name = "boom"
    description = "Always raises."
    input_schema: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}}
    read_only = True

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        raise RuntimeError("kaboom")


@pytest.mark.parametrize(("backend", "stream"), [("anthropic", True), ("anthropic", False),
                                                 ("openai", True), ("openai", False)])
async def test_read_edit_read_chain(mock_model: Any, tmp_path: Path, backend: str, stream: bool) -> None:
    (tmp_path / "a.txt").write_bytes(b"alpha\r\nbeta\n\xc3\xa9\n")
    mock = mock_model(CHAIN)
    agent = make_agent(mock.url, tmp_path, backend=backend, stream=stream, allow=("Edit",))
    outcome = await agent.run("edit a.txt")
    assert (tmp_path / "a.txt").read_bytes() == b"alpha\r\ngamma\n\xc3\xa9\n"
    assert outcome.stop == "end_turn" and outcome.turns == 4
    assert outcome.text.startswith("final: ") and "gamma" in outcome.text
    validate_history(agent.history)
    requests = mock.requests
    assert len(requests) == 4
    path = "/v1/messages" if backend == "anthropic" else "/v1/chat/completions"
    assert all(r["path"] == path for r in requests)
    assert all(bool(r["body"].get("stream")) is stream for r in requests)
    if backend == "anthropic":
        for request in requests:
            validate_history(request["body"]["messages"])
        for request in requests[1:]:
            assert [r.get("is_error") for r in last_user_tool_results(request["body"])] == [None]
    else:
        last = requests[-1]["body"]["messages"]
        tool_msgs = [m for m in last if m["role"] == "tool"]
        assert len(tool_msgs) == 3 and not any(m["content"].startswith("Error") for m in tool_msgs)


async def test_failing_raising_and_denied_tools_yield_is_error_results(mock_model: Any, tmp_path: Path) -> None:
    turns = [{"content": [{"type": "tool_use", "name": "Read", "input": {"file_path": "missing.txt"}},
                          {"type": "tool_use", "name": "boom", "input": {}},
                          {"type": "tool_use", "name": "Bash", "input": {"command": "touch pwned"}}]},
             say("ok")]
    mock = mock_model(turns)
    agent = make_agent(mock.url, tmp_path, extra_tools=(Boom(),))
    outcome = await agent.run("go")
    assert outcome.text == "ok"
    assert not (tmp_path / "pwned").exists()
    body = mock.requests[1]["body"]
    validate_history(body["messages"])
    results = last_user_tool_results(body)
    ids = [b["id"] for b in body["messages"][-2]["content"] if b["type"] == "tool_use"]
    assert [r["tool_use_id"] for r in results] == ids
    assert [r.get("is_error") for r in results] == [True, True, True]
    assert "missing.txt" in result_text(results[0])
    assert "boom failed: kaboom" in result_text(results[1])
    denial = result_text(results[2])
    assert "permission denied for Bash" in denial
    assert "--yolo" in denial and "permissions.allow" in denial and '"Bash(touch:*)"' in denial


async def test_unknown_tool_gets_a_result(mock_model: Any, tmp_path: Path) -> None:
    turns = [{"content": [{"type": "tool_use", "name": "no_such_tool", "input": {"x": 1}},
                          {"type": "tool_use", "name": "Read", "input": {"file_path": "missing"}}]},
             say("ok")]
    mock = mock_model(turns)
    agent = make_agent(mock.url, tmp_path)
    await agent.run("go")
    body = mock.requests[1]["body"]
    validate_history(body["messages"])
    results = last_user_tool_results(body)
    assert [r.get("is_error") for r in results] == [True, True]
    assert "unknown tool 'no_such_tool'" in result_text(results[0])


async def test_non_object_tool_arguments_get_a_result(tmp_path: Path) -> None:
    calls = [{"id": "c1", "type": "function", "function": {"name": "Read", "arguments": "[1, 2]"}},
             {"id": "c2", "type": "function", "function": {"name": "Read", "arguments": "{not json"}},
             {"id": "c3", "type": "function", "function": {"name": "bogus", "arguments": "7"}}]
    server = RawChatServer([{"role": "assistant", "content": None, "tool_calls": calls},
                            {"role": "assistant", "content": "recovered"}])
    with server.running():
        agent = make_agent(server.url, tmp_path, backend="openai", stream=False)
        outcome = await agent.run("go")
    assert outcome.text == "recovered"
    validate_history(agent.history)
    tool_msgs = [m for m in server.bodies[1]["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_msgs] == ["c1", "c2", "c3"]
    assert "must be a JSON object, got list" in tool_msgs[0]["content"]
    assert "must be a JSON object, got str" in tool_msgs[1]["content"]
    assert "unknown tool 'bogus'" in tool_msgs[2]["content"]
    # the history keeps malformed inputs as {} (the Messages API accepts only object inputs, and the history is
    # backend-neutral); each tool_result above says what was wrong with what the model sent
    assistant = [m for m in server.bodies[1]["messages"] if m["role"] == "assistant"][-1]
    assert [c["function"]["arguments"] for c in assistant["tool_calls"]] == ["{}", "{}", "{}"]


async def test_interrupt_during_bash_kills_the_group_and_the_next_run_is_valid(
        mock_model: Any, tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    command = f"sleep 30 & echo $! > {pidfile}.tmp; echo $$ >> {pidfile}.tmp; mv {pidfile}.tmp {pidfile}; sleep 30"
    mock = mock_model([tool("Bash", command=command), say("after the interruption")])
    agent = make_agent(mock.url, tmp_path, allow=("Bash",))
    task = asyncio.ensure_future(agent.run("run it"))
    deadline = time.monotonic() + 10
    while not pidfile.exists():
        assert time.monotonic() < deadline, "the command never wrote its pidfile"
        assert not task.done(), task
        await asyncio.sleep(0.02)
    pids = [int(p) for p in pidfile.read_text().split()]
    assert len(pids) == 2 and all(pid_alive(p) for p in pids)
    began = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert time.monotonic() - began < 5
    # up to 10 s for the kernel to finish tearing the group down (a loaded machine)
    await eventually(lambda: not any(pid_alive(p) for p in pids), "the interrupted command's children to die",
                     within_s=10)
    validate_history(agent.history)

    outcome = await agent.run("what happened?")
    assert outcome.text == "after the interruption"
    assert len(mock.requests) == 2
    body = mock.requests[1]["body"]
    validate_history(body["messages"])
    last = body["messages"][-1]
    results = [b for b in last["content"] if b.get("type") == "tool_result"]
    assert len(results) == 1 and results[0]["is_error"] is True
    assert result_text(results[0]) == INTERRUPTED_TEXT
    assert last["content"][-1] == {"type": "text", "text": "what happened?", "cache_control": {"type": "ephemeral"}}


async def test_interrupt_during_model_request_keeps_history_valid(mock_model: Any, tmp_path: Path) -> None:
    # a listening socket that never answers: the turn is cancelled while the SDK waits for the response
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(5)  # accepts connections, never answers
    sock.settimeout(10)
    try:
        agent = make_agent(f"http://127.0.0.1:{sock.getsockname()[1]}", tmp_path)
        task = asyncio.ensure_future(agent.run("first"))
        connection, _ = await asyncio.to_thread(sock.accept)  # the SDK's request is under way
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        connection.close()
    finally:
        sock.close()
    mock = mock_model([say("second answer")])
    agent.model = make_agent(mock.url, tmp_path).model
    outcome = await agent.run("second")
    assert outcome.text == "second answer"
    messages = mock.requests[0]["body"]["messages"]
    validate_history(messages)
    assert [b["text"] for b in messages[-1]["content"]] == ["first", "second"]


async def test_max_turns_stops_a_model_that_keeps_calling_tools(mock_model: Any, tmp_path: Path) -> None:
    mock = mock_model([tool("Glob", pattern="*"), tool("Glob", pattern="*"), say("never")])
    agent = make_agent(mock.url, tmp_path, max_turns=1)
    outcome = await agent.run("loop")
    assert outcome.stop == "max_turns" and outcome.turns == 1
    assert len(mock.requests) == 1
    validate_history(agent.history)  # the last tool call was still answered


def test_validator_rejects_bad_histories() -> None:
    use = {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "x", "input": {}}]}
    with pytest.raises(AssertionError):
        validate_history([{"role": "user", "content": "hi"}, use])
    with pytest.raises(AssertionError):
        validate_history([{"role": "user", "content": "hi"}, use, {"role": "user", "content": "no result"}])
    with pytest.raises(AssertionError):
        validate_history([{"role": "user", "content": "a"}, {"role": "user", "content": "b"}])
    validate_history([{"role": "user", "content": "hi"}, use,
                      {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "r"}]}])


class _ShowingUI(SilentUI):
    """Records what a RequestUI is told."""

    def __init__(self) -> None:
        self.shown: list[tuple[str, Any]] = []

    def request_started(self, input_tokens: int, activity: str = "Thinking") -> None:
        self.shown.append((activity, input_tokens))

    def request_finished(self, completed: bool) -> None:
        self.shown.append(("finished", completed))


async def test_the_compaction_summary_request_is_shown_too(mock_model: Any, tmp_path: Path) -> None:
    """`/compact` (and automatic compaction) asks the model for a summary: the UI shows that request as
    "Compacting conversation", then the next request as "Thinking"."""
    mock = mock_model([say("first"), say("second"), say("third"), say("fourth")])
    agent = make_agent(mock.url, tmp_path)
    agent.ui = ui = _ShowingUI()
    for prompt in ("one", "two", "three"):
        await agent.run(prompt)
    ui.shown.clear()
    assert await agent.compact()
    assert [entry[0] for entry in ui.shown] == ["Compacting conversation", "finished"]
    assert ui.shown[0][1] > 0 and ui.shown[1] == ("finished", True)
    await agent.run("four")
    assert [entry[0] for entry in ui.shown[2:]] == ["Thinking", "finished"]


class _Scripted:
    """A model that answers from a list: an exception is raised, a turn returned; it records the tools it got
    (a compaction's summary request is answered aside)."""

    name = "scripted"

    def __init__(self, *answers: Any) -> None:
        self.answers = list(answers)
        self.offered: list[list[Any]] = []

    async def complete(self, *, system: str, messages: Any, tools: Any, on_text: Any = None,
                       options: Any = None) -> Any:
        from mini_claude.models.base import SUMMARY_SYSTEM_PROMPT, AssistantTurn

        if system == SUMMARY_SYSTEM_PROMPT:  # compaction's summary request: not part of the script
            return AssistantTurn([{"type": "text", "text": "summary"}], "end_turn")
        self.offered.append(list(tools))
        answer = self.answers.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        return AssistantTurn(answer, "tool_use" if any(b["type"] == "tool_use" for b in answer) else "end_turn")


class _Loading:
    """A DeferredLoading with one deferred tool, given up on a refusal that names defer_loading."""

    def __init__(self) -> None:
        self.native = True

    def deferred_names(self) -> set[str]:
        return {"found"} if self.native else set()

    def refused(self, error: Any) -> bool:
        if self.native and "defer_loading" in str(error):
            self.native = False
            return True
        return False


class _Found:
    name, description, read_only = "found", "a found tool", True
    input_schema: ClassVar[dict[str, Any]] = {"type": "object"}

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return ToolResult([{"type": "tool_reference", "tool_name": "found"}], aside="found: a found tool")


async def test_a_refusal_after_a_compaction_still_falls_back(tmp_path: Path) -> None:
    """Each retry is its own: "prompt is too long" compacts and retries, a refusal of deferred loading then still
    gets its retry with the tool sent in full — and the other order too."""
    from mini_claude.agent.loop import Agent
    from mini_claude.errors import ModelError
    from mini_claude.permissions import PermissionGate, PermissionMode, RuleSet

    too_long = ModelError("model API error 400: prompt is too long: 300000 tokens > 200000 maximum", status=400)
    refused = ModelError("model API error 400: tools.0.custom.defer_loading: Extra inputs are not permitted",
                         status=400)
    for order in ((too_long, refused), (refused, too_long)):
        model = _Scripted(*order, [{"type": "text", "text": "ok"}])
        gate = PermissionGate(PermissionMode.DEFAULT, RuleSet(), ask=None, cwd=tmp_path)
        agent = Agent(model=model, tools=lambda: [_Found()], gate=gate, system="s", loading=_Loading(),
                      ctx=ToolContext(cwd=tmp_path, spill_dir=tmp_path / "spill"))
        for i in range(6):  # something to compact
            agent.history.extend([{"role": "user", "content": [{"type": "text", "text": f"q{i} " * 50}]},
                                  {"role": "assistant", "content": [{"type": "text", "text": f"a{i}"}]}])
        assert (await agent.run("go")).text == "ok"
        assert [[t.defer_loading for t in tools] for tools in model.offered][-1] == [False]
        assert len(model.offered) == 3 and agent.context.compactions == 1


async def test_the_unanswered_note_survives_an_aside(tmp_path: Path) -> None:
    """A run that stops at the turn limit right after a tool whose result has text beside it (a native tool search)
    still tells the model so on the next prompt."""
    from mini_claude.agent.loop import MAX_TURNS_NOTE, Agent
    from mini_claude.permissions import PermissionGate, PermissionMode, RuleSet

    model = _Scripted([{"type": "tool_use", "id": "t1", "name": "found", "input": {}}],
                      [{"type": "text", "text": "ok"}])
    gate = PermissionGate(PermissionMode.DEFAULT, RuleSet(), ask=None, cwd=tmp_path)
    agent = Agent(model=model, tools=lambda: [_Found()], gate=gate, system="s", max_turns=1,
                  ctx=ToolContext(cwd=tmp_path, spill_dir=tmp_path / "spill"))
    assert (await agent.run("go")).stop == "max_turns"
    await agent.run("and now?")
    last = agent.history[-2]["content"]
    assert [b["type"] for b in last] == ["tool_result", "text", "text", "text"]
    assert last[1]["text"] == "found: a found tool" and last[2]["text"] == MAX_TURNS_NOTE
