"""A PreToolUse hook's `updatedInput` that cannot be used (outside review, round 3). The hook's allow was about the
input it meant, so when that input is not an object, not JSON or nested past any tool's shape, the call is refused:
before, the allow stood for the model's own input (`{**tool_input, "file_path": Path(...)}` from a hook that moved
writes into a scratch folder let the model's path be written unasked), and a deeply nested one ended the whole run
with a RecursionError instead of being one hook's failure. A command hook's output nested past the decoder's depth
is no answer either."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mini_claude.hooks import CallableHook
from mini_claude.settings import SettingsHook
from tests.agent.agent_helpers import last_user_tool_results, result_text, say, tool, validate_history
from tests.hooks.test_callable_hooks import Recorder, _agent, _hooks, _pre

pytestmark = pytest.mark.timeout(60)


def _deep(levels: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(levels):
        value = {"a": value}
    return value


@pytest.mark.parametrize(("updated", "why"), [
    ({"file_path": Path("scratch/a.txt"), "content": "x"}, "not JSON"),
    ({"file_path": "scratch/a.txt", "content": float("nan")}, "not JSON"),
    ('{"file_path": "scratch/a.txt", "content": "x"}', "expected an object, got str"),
    ({"file_path": "scratch/a.txt", "content": "x", "deep": _deep(100_000)}, "nested deeper than"),
])
async def test_an_allow_with_an_unusable_updated_input_refuses_the_call(mock_model: Any, tmp_path: Path,
                                                                       updated: Any, why: str) -> None:
    rewrite = Recorder(_pre("allow", "moved into scratch/", updatedInput=updated))
    mock = mock_model([tool("Write", file_path="victim.txt", content="model's text\n"), say("done")])
    agent = _agent(mock.url, tmp_path, _hooks(tmp_path, [CallableHook("PreToolUse", rewrite)]))
    outcome = await agent.run("go")  # no RecursionError: one hook's failure, not the run's
    assert outcome.text == "done"
    assert not (tmp_path / "victim.txt").exists()  # the model's input never runs under the hook's allow
    [result] = last_user_tool_results(mock.requests[1]["body"])
    assert result.get("is_error") is True and why in result_text(result)
    assert "cannot be run" in result_text(result)
    validate_history(agent.history)


async def test_an_unusable_updated_input_without_a_decision_refuses_too(mock_model: Any, tmp_path: Path) -> None:
    """A rewrite alone (no decision) that cannot be used does not let the original run under an allow rule."""
    rewrite = Recorder({"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                               "updatedInput": {"command": Path("true")}}})
    mock = mock_model([tool("Bash", command="touch original"), say("done")])
    agent = _agent(mock.url, tmp_path, _hooks(tmp_path, [CallableHook("PreToolUse", rewrite)]), allow=("Bash",))
    assert (await agent.run("go")).text == "done"
    assert not (tmp_path / "original").exists()


async def test_an_updated_input_of_null_changes_nothing(mock_model: Any, tmp_path: Path) -> None:
    keep = Recorder(_pre("allow", "fine as it is", updatedInput=None))
    mock = mock_model([tool("Bash", command="touch kept"), say("done")])
    agent = _agent(mock.url, tmp_path, _hooks(tmp_path, [CallableHook("PreToolUse", keep)]))
    assert (await agent.run("go")).text == "done"
    assert (tmp_path / "kept").exists()


async def test_a_command_hook_printing_json_nested_too_deep_is_no_answer(mock_model: Any, tmp_path: Path) -> None:
    deep = '{"a":' * 100_000 + "1" + "}" * 100_000
    (tmp_path / "out.json").write_text(deep)
    command = SettingsHook("PreToolUse", "Bash", f"cat > /dev/null; cat {tmp_path / 'out.json'}", None,
                           "~/.claude/settings.json", "hooks.PreToolUse[0].hooks[0]")
    mock = mock_model([tool("Bash", command="touch made"), say("ok")])
    agent = _agent(mock.url, tmp_path, _hooks(tmp_path, [], [command]), allow=("Bash(touch:*)",))
    assert (await agent.run("go")).text == "ok"  # the run goes on; the hook said nothing usable
    assert (tmp_path / "made").exists()
    json.dumps(agent.history)


def test_an_sdk_allow_with_an_updated_input_that_is_no_object_refuses() -> None:
    """The SDK sends a PermissionResultAllow's updated_input as it is: a string or a list there was read as "no
    change", so the model's own input ran under an allow meant for another."""
    from mini_claude.cli.sdk_control.adapters import permission_answer

    for updated in ('{"command": "ls"}', ["ls"], 3):
        answer = permission_answer({"behavior": "allow", "updatedInput": updated}, {"command": "rm -rf x"})
        assert not answer.allow and "not an object" in answer.message
    assert permission_answer({"behavior": "allow", "updatedInput": None}, {"command": "ls"}).allow


async def test_a_dict_answer_with_an_updated_input_that_is_no_object_refuses(mock_model: Any, tmp_path: Path) -> None:
    from mini_claude.api.permissions import asker
    from mini_claude.permissions import PermissionGate, PermissionMode, RuleSet

    async def can_use_tool(name: str, tool_input: dict[str, Any], context: Any) -> dict[str, Any]:
        return {"behavior": "allow", "updatedInput": json.dumps({**tool_input, "file_path": "scratch.txt"})}

    mock = mock_model([tool("Write", file_path="victim.txt", content="x"), say("done")])
    agent = _agent(mock.url, tmp_path, _hooks(tmp_path, []))
    agent.gate = PermissionGate(PermissionMode.DEFAULT, RuleSet(), ask=asker(can_use_tool), cwd=tmp_path,
                                home=tmp_path / "home")
    assert (await agent.run("go")).text == "done"
    assert not (tmp_path / "victim.txt").exists() and not (tmp_path / "scratch.txt").exists()
    [result] = last_user_tool_results(mock.requests[1]["body"])
    assert result.get("is_error") is True and "not an object" in result_text(result)
