"""Hooks as Python callables (mini_claude/hooks/callables.py) through the real engine, the real permission gate and
the real agent loop against the mock model: the same input a command hook reads, the same decisions, failures
reported and ignored, matchers, and a callable beside a command hook on one event."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

from mini_claude.agent.loop import Agent
from mini_claude.hooks import CallableHook, HookPermission, Hooks, HookSession
from mini_claude.permissions import PermissionGate, PermissionMode, RuleSet
from mini_claude.permissions.rules import CLAUDE_TOOL_NAMES
from mini_claude.settings import SettingsHook, load_settings
from mini_claude.tools.base import ToolContext
from mini_claude.tools.builtins import builtin_tools
from tests.agent.agent_helpers import (
    last_user_tool_results,
    make_model,
    result_text,
    say,
    tool,
    validate_history,
)
from tests.permissions.test_gate import BASH

pytestmark = pytest.mark.timeout(60)

COMMON = {"session_id", "transcript_path", "cwd", "permission_mode", "hook_event_name"}


class Recorder:
    """A callable hook that records each (input, tool_use_id, context) and answers `output` (or what `answer`
    returns for the input)."""

    def __init__(self, output: Any = None, *, answer: Any = None) -> None:
        self.output = {} if output is None else output
        self.answer = answer
        self.calls: list[tuple[dict[str, Any], str | None, Any]] = []

    async def __call__(self, data: dict[str, Any], tool_use_id: str | None, context: Any) -> Any:
        self.calls.append((data, tool_use_id, context))
        return self.answer(data) if self.answer is not None else self.output

    @property
    def inputs(self) -> list[dict[str, Any]]:
        return [c[0] for c in self.calls]


def _hooks(tmp_path: Path, callables: list[CallableHook], commands: list[SettingsHook] | None = None,
           reports: list[str] | None = None) -> Hooks:
    session = HookSession(cwd=tmp_path, home=tmp_path / "home", env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
                          session_id=lambda: "s-1", transcript_path=lambda: str(tmp_path / "t.jsonl"),
                          permission_mode=lambda: "default", tool_names=CLAUDE_TOOL_NAMES)
    sink = reports if reports is not None else []
    return Hooks(commands or [], session, sink.append, callables=callables)


def _agent(url: str, tmp_path: Path, hooks: Hooks, *, allow: tuple[str, ...] = (),
           deny: tuple[str, ...] = ()) -> Agent:
    gate = PermissionGate(PermissionMode.DEFAULT, RuleSet.from_strings(allow=allow, deny=deny), ask=None,
                          cwd=tmp_path, home=tmp_path / "home")
    tools = builtin_tools()
    return Agent(model=make_model(url), tools=lambda: tools, gate=gate,
                 ctx=ToolContext(cwd=tmp_path, spill_dir=tmp_path / ".spill"), system="s", hooks=hooks)


def _pre(decision: str, reason: str = "", **more: Any) -> dict[str, Any]:
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": decision,
                                   "permissionDecisionReason": reason, **more}}


def _tool_use_ids(agent: Agent) -> list[str]:
    return [b["id"] for m in agent.history if m["role"] == "assistant" for b in m["content"]
            if b.get("type") == "tool_use"]


async def test_a_callable_denies_a_call_a_rule_allows_and_the_model_reads_why(mock_model: Any,
                                                                             tmp_path: Path) -> None:
    guard = Recorder(_pre("deny", "no new files on Fridays"))
    mock = mock_model([tool("Bash", command="touch pwned", description="make it"), say("ok")])
    agent = _agent(mock.url, tmp_path, _hooks(tmp_path, [CallableHook("PreToolUse", guard, matcher="Bash")]),
                   allow=("Bash",))
    outcome = await agent.run("go")
    assert outcome.text == "ok" and not (tmp_path / "pwned").exists()
    [result] = last_user_tool_results(mock.requests[1]["body"])
    assert result.get("is_error") is True and result_text(result) == "no new files on Fridays"
    [(data, tool_use_id, context)] = guard.calls
    assert set(data) >= COMMON and data["hook_event_name"] == "PreToolUse"  # what a command reads on stdin
    assert (data["tool_name"], data["tool_input"]) == ("Bash", {"command": "touch pwned", "description": "make it"})
    assert data["tool_use_id"] == tool_use_id == result["tool_use_id"] == _tool_use_ids(agent)[0]
    assert (data["session_id"], data["cwd"], data["permission_mode"]) == ("s-1", str(tmp_path), "default")
    assert data["transcript_path"] == str(tmp_path / "t.jsonl")
    assert isinstance(context["signal"], asyncio.Event) and not context["signal"].is_set()
    assert [d["tool_name"] for d in outcome.denials] == ["Bash"]


async def test_an_allow_with_updated_input_runs_the_new_input_and_history_keeps_the_models(
        mock_model: Any, tmp_path: Path) -> None:
    rewrite = Recorder(_pre("allow", "redirected", updatedInput={"file_path": "b.txt", "content": "changed\n"}))
    seen = Recorder()
    mock = mock_model([tool("Write", file_path="a.txt", content="original\n"), say("done")])
    hooks = _hooks(tmp_path, [CallableHook("PreToolUse", rewrite, matcher="Write"),
                              CallableHook("PostToolUse", seen)])
    agent = _agent(mock.url, tmp_path, hooks)  # default mode, no rule, nobody to ask: only the hook allows it
    outcome = await agent.run("go")
    assert outcome.text == "done" and outcome.denials == []
    assert (tmp_path / "b.txt").read_text() == "changed\n" and not (tmp_path / "a.txt").exists()
    [use] = [b for b in agent.history[1]["content"] if b.get("type") == "tool_use"]
    assert use["input"] == {"file_path": "a.txt", "content": "original\n"}  # as the model sent it
    [after] = seen.inputs  # PostToolUse reads what ran
    assert after["tool_input"] == {"file_path": str(tmp_path / "b.txt"), "content": "changed\n"}
    validate_history(agent.history)


async def test_an_updated_input_is_checked_like_the_models(mock_model: Any, tmp_path: Path) -> None:
    """The hook's input must fit the tool's schema, and the gate judges it (a deny rule still wins)."""
    inputs = iter([{"file_path": "c.txt"}, {"file_path": "secret.txt", "content": "x"}])
    rewrite = Recorder(answer=lambda data: _pre("allow", "mine", updatedInput=next(inputs)))
    mock = mock_model([tool("Write", file_path="a.txt", content="1"), tool("Write", file_path="a.txt", content="2"),
                       say("done")])
    agent = _agent(mock.url, tmp_path, _hooks(tmp_path, [CallableHook("PreToolUse", rewrite)]),
                   deny=("Edit(secret.txt)",))
    await agent.run("go")
    first = result_text(last_user_tool_results(mock.requests[1]["body"])[0])
    second = result_text(last_user_tool_results(mock.requests[2]["body"])[0])
    assert first.startswith("invalid input for Write (a PreToolUse hook's updatedInput):") and "content" in first
    assert second == 'permission denied for Write: denied by rule "Edit(secret.txt)" in rules'
    assert not (tmp_path / "a.txt").exists() and not (tmp_path / "secret.txt").exists()


async def test_user_prompt_submit_adds_context_or_blocks(mock_model: Any, tmp_path: Path) -> None:
    context = Recorder({"hookSpecificOutput": {"hookEventName": "UserPromptSubmit",
                                               "additionalContext": "the build is red"}})
    mock = mock_model([say("noted")])
    agent = _agent(mock.url, tmp_path, _hooks(tmp_path, [CallableHook("UserPromptSubmit", context)]))
    assert (await agent.run("hello")).text == "noted"
    [data] = context.inputs
    assert data["hook_event_name"] == "UserPromptSubmit" and data["prompt"] == "hello"
    assert context.calls[0][1] is None  # no tool_use_id outside tool events
    texts = [b["text"] for b in mock.requests[0]["body"]["messages"][-1]["content"] if b.get("type") == "text"]
    assert "UserPromptSubmit hook additional context: the build is red" in texts

    blocker = Recorder({"decision": "block", "reason": "not during the freeze"})
    agent = _agent(mock.url, tmp_path, _hooks(tmp_path, [CallableHook("UserPromptSubmit", blocker)]))
    outcome = await agent.run("deploy")
    assert outcome.stop == "hook_blocked" and "not during the freeze" in outcome.text
    assert len(mock.requests) == 1  # nothing more reached the model


async def test_session_start_and_end_callables_get_claude_codes_inputs(mock_model: Any, tmp_path: Path) -> None:
    start = Recorder({"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "branch: main"}})
    resume_only = Recorder()
    end = Recorder()
    hooks = _hooks(tmp_path, [CallableHook("SessionStart", start), CallableHook("SessionStart", resume_only,
                                                                                 matcher="resume"),
                              CallableHook("SessionEnd", end)])
    mock = mock_model([say("hi")])
    agent = _agent(mock.url, tmp_path, hooks)
    await hooks.session_start("startup")
    await agent.run("first")
    await hooks.session_end("prompt_input_exit")
    assert [(d["hook_event_name"], d["source"]) for d in start.inputs] == [("SessionStart", "startup")]
    assert resume_only.calls == []  # matched against the source
    assert [(d["hook_event_name"], d["reason"]) for d in end.inputs] == [("SessionEnd", "prompt_input_exit")]
    assert all(set(d) >= COMMON for d in [*start.inputs, *end.inputs])
    texts = [b["text"] for b in mock.requests[0]["body"]["messages"][-1]["content"] if b.get("type") == "text"]
    assert "SessionStart hook additional context: branch: main" in texts


async def test_stop_post_tool_use_notification_and_pre_compact_reach_callables(mock_model: Any,
                                                                              tmp_path: Path) -> None:
    stop = Recorder(answer=lambda data: {} if data["stop_hook_active"] else {"decision": "block",
                                                                              "reason": "run the tests too"})
    post = Recorder({"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "lint is clean"}})
    other = Recorder()
    hooks = _hooks(tmp_path, [CallableHook("Stop", stop), CallableHook("PostToolUse", post, matcher="Read"),
                              CallableHook("Notification", other), CallableHook("PreCompact", other)])
    (tmp_path / "a.txt").write_text("alpha\n")
    mock = mock_model([tool("Read", file_path="a.txt"), say("first"), say("second")])
    agent = _agent(mock.url, tmp_path, hooks)
    assert (await agent.run("go")).text == "second"
    assert [d["stop_hook_active"] for d in stop.inputs] == [False, True]
    assert [b["text"] for b in mock.requests[2]["body"]["messages"][-1]["content"]] == [
        "Stop hook feedback:\nrun the tests too"]
    [data] = post.inputs
    assert data["tool_response"]["file"]["filePath"] == str(tmp_path / "a.txt")
    assert "PostToolUse:Read hook additional context: lint is clean" in json.dumps(mock.requests[1]["body"])
    await hooks.notification("Claude needs your permission", "permission_prompt")
    await hooks.pre_compact("manual", "keep the API notes")
    assert [(d["hook_event_name"], d.get("notification_type") or d.get("trigger")) for d in other.inputs] == [
        ("Notification", "permission_prompt"), ("PreCompact", "manual")]


async def test_a_failing_callable_is_reported_and_ignored(mock_model: Any, tmp_path: Path) -> None:
    cancelled: list[bool] = []
    contexts: list[Any] = []

    async def raises(data: dict[str, Any], tool_use_id: str | None, context: Any) -> dict[str, Any]:
        raise RuntimeError("the policy server is down")

    async def returns_none(data: dict[str, Any], tool_use_id: str | None, context: Any) -> None:
        return None

    async def hangs(data: dict[str, Any], tool_use_id: str | None, context: Any) -> dict[str, Any]:
        contexts.append(context)
        try:
            await asyncio.Event().wait()  # until cancelled
        except asyncio.CancelledError:
            cancelled.append(True)
            raise
        return _pre("deny", "too late")

    reports: list[str] = []
    hooks = _hooks(tmp_path, [CallableHook("PreToolUse", raises), CallableHook("PreToolUse", returns_none),
                              CallableHook("PreToolUse", hangs, timeout_s=0.3, name="python: slow policy")],
                   reports=reports)
    mock = mock_model([tool("Bash", command="touch made"), say("ok")])
    agent = _agent(mock.url, tmp_path, hooks, allow=("Bash(touch:*)",))
    outcome = await agent.run("go")
    assert outcome.text == "ok" and (tmp_path / "made").exists()  # none of them blocked the call
    assert cancelled == [True] and contexts[0]["signal"].is_set()
    assert len(reports) == 3, reports
    raised, nothing, slow = reports
    assert raised.startswith("PreToolUse hook python: ") and "raises" in raised
    assert raised.endswith("(registered in code) raised RuntimeError: the policy server is down")
    assert "returns_none" in nothing and "returned NoneType, not a dict" in nothing
    assert slow.startswith("PreToolUse hook python: slow policy (registered in code) timed out after 0.")


async def test_matchers_select_callables_as_they_select_commands(mock_model: Any, tmp_path: Path) -> None:
    fired = {name: Recorder() for name in ("bash", "regex", "files", "mcp", "every")}
    matchers = {"bash": "Bash", "regex": "^Ba.h$", "files": "Read|Write", "mcp": "mcp__.*", "every": ""}
    hooks = _hooks(tmp_path, [CallableHook("PreToolUse", fired[n], matcher=m) for n, m in matchers.items()])
    mock = mock_model([tool("Bash", command="true"), say("ok")])
    await _agent(mock.url, tmp_path, hooks, allow=("Bash(true)",)).run("go")
    assert {n for n, r in fired.items() if r.calls} == {"bash", "regex", "every"}


async def test_a_callable_and_a_command_on_one_event_both_run_on_the_same_input(mock_model: Any,
                                                                                tmp_path: Path) -> None:
    seen = tmp_path / "command-saw.json"
    command = SettingsHook("PreToolUse", "Bash", f"cat > {seen}; printf '%s' '{json.dumps(_pre('allow', 'cmd'))}'",
                           None, "~/.claude/settings.json", "hooks.PreToolUse[0].hooks[0]")
    callable_ = Recorder({"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                                 "additionalContext": "from python"}})
    hooks = _hooks(tmp_path, [CallableHook("PreToolUse", callable_, matcher="Bash")], [command])
    assert hooks.listing()[0].startswith("PreToolUse 'Bash': `cat > ")
    assert hooks.listing()[1] == (f"PreToolUse 'Bash': python: {Recorder.__module__}.Recorder (timeout 60s) — "
                                  "registered in code")
    mock = mock_model([tool("Bash", command="touch both"), say("ok")])
    await _agent(mock.url, tmp_path, hooks).run("go")  # no rule: the command hook's allow lets it run
    assert (tmp_path / "both").exists()
    [data] = callable_.inputs
    assert json.loads(seen.read_text()) == data  # byte for byte the same payload
    assert "PreToolUse:Bash hook additional context: from python" in json.dumps(mock.requests[1]["body"])


def test_only_code_registers_callables(tmp_path: Path) -> None:
    assert Hooks([], _hooks(tmp_path, []).session, callables=[CallableHook("Stop", Recorder())])
    assert not _hooks(tmp_path, [])
    with pytest.raises(ValueError, match="unknown hook event 'PreToolCall'"):
        CallableHook("PreToolCall", Recorder())
    with pytest.raises(TypeError, match="must be callable"):
        CallableHook("Stop", "os.system")  # type: ignore[arg-type]
    home, cwd = tmp_path / "home", tmp_path / "work"
    (home / ".claude").mkdir(parents=True)
    cwd.mkdir()
    (home / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"Stop": [{"hooks": [
        {"type": "callback", "callback": "os.system"}, {"type": "command", "command": "true"}]}]}}))
    settings = load_settings(cwd=cwd, home=home)
    assert [h.command for h in settings.hooks] == ["true"]  # a settings entry is always a command
    assert any("not supported" in str(e) for e in settings.errors)


async def test_a_hooks_allow_with_updated_input_covers_only_that_input(tmp_path: Path) -> None:
    """A caller that runs the original input (the user's `!cmd`) cannot run it under the hook's allow."""
    gate = PermissionGate(PermissionMode.DEFAULT, RuleSet.from_strings(), ask=None, cwd=tmp_path, home=tmp_path)
    allow = HookPermission("allow", "rewritten", {"command": "echo safe"})
    assert (await gate.check(BASH, {"command": "echo safe"}, hook=allow)).allowed
    assert not (await gate.check(BASH, {"command": "rm -rf build"}, hook=allow)).allowed


async def test_a_callable_that_swallows_its_cancellation_still_times_out(tmp_path: Path) -> None:
    async def stubborn(data: dict[str, Any], tool_use_id: str | None, context: Any) -> dict[str, Any]:
        try:
            await asyncio.Event().wait()  # until cancelled
        except asyncio.CancelledError:
            pass
        return _pre("deny", "late")

    reports: list[str] = []
    hooks = _hooks(tmp_path, [CallableHook("PreToolUse", stubborn, timeout_s=0.2)], reports=reports)
    before = await hooks.pre_tool_use("Bash", {"command": "true"}, "toolu_1")
    assert before.permission is None
    [line] = reports
    assert "timed out after" in line


async def test_a_command_hooks_updated_input_runs_too(mock_model: Any, tmp_path: Path) -> None:
    output = json.dumps(_pre("allow", "dry run only", updatedInput={"command": "touch dry-run"}))
    command = SettingsHook("PreToolUse", "Bash", f"cat > /dev/null; printf '%s' '{output}'", None,
                           "~/.claude/settings.json", "hooks.PreToolUse[0].hooks[0]")
    mock = mock_model([tool("Bash", command="touch for-real"), say("ok")])
    agent = _agent(mock.url, tmp_path, _hooks(tmp_path, [], [command]))
    assert (await agent.run("go")).text == "ok"
    assert (tmp_path / "dry-run").exists() and not (tmp_path / "for-real").exists()
