"""The permission question answered with a `PermissionAnswer` (permissions/answers.py), through the real gate and the
real agent loop against the mock model: allow with another input, deny with the text the model reads, deny that
stops the run, rules remembered for the session, the `AskContext` a three-argument callback gets, and the CLI's
string answers unchanged."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mini_claude.agent.loop import STOPPED_TEXT, Agent
from mini_claude.permissions import AskContext, PermissionAnswer, PermissionGate, PermissionMode, RuleSet
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
from tests.permissions.test_exit_plan_mode_gate import PLAN
from tests.permissions.test_exit_plan_mode_gate import tool as plan_tool
from tests.permissions.test_gate import ARGS

pytestmark = pytest.mark.timeout(60)

REAL = {t.name: t for t in builtin_tools()}
WRITE = REAL["Write"]


class Answers:
    """A scripted callback taking the context: answers in order, records (tool name, args, context)."""

    def __init__(self, *answers: Any) -> None:
        self.answers = list(answers)
        self.asked: list[tuple[str, dict[str, Any], AskContext]] = []

    async def __call__(self, tool: Any, args: dict[str, Any], context: AskContext) -> Any:
        self.asked.append((tool.name, args, context))
        return self.answers.pop(0)


def _gate(tmp_path: Path, ask: Any, *, mode: str = "default", allow: tuple[str, ...] = (),
          deny: tuple[str, ...] = (), ask_rules: tuple[str, ...] = ()) -> PermissionGate:
    return PermissionGate(PermissionMode.parse(mode), RuleSet.from_strings(allow=allow, deny=deny, ask=ask_rules),
                          ask=ask, cwd=tmp_path, home=tmp_path / "home")


def _agent(url: str, tmp_path: Path, gate: PermissionGate) -> Agent:
    tools = builtin_tools()
    return Agent(model=make_model(url), tools=lambda: tools, gate=gate,
                 ctx=ToolContext(cwd=tmp_path, spill_dir=tmp_path / ".spill"), system="s")


def _two_calls(first: dict[str, Any], second: dict[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "tool_use", "name": "Bash", "input": first},
                        {"type": "tool_use", "name": "Bash", "input": second}]}


async def test_allow_with_updated_input_runs_it_and_the_callback_gets_the_context(mock_model: Any,
                                                                                  tmp_path: Path) -> None:
    answers = Answers(PermissionAnswer(True, updated_input={"file_path": "b.txt", "content": "from the answer\n"}))
    mock = mock_model([tool("Write", file_path="a.txt", content="model\n"), say("done")])
    agent = _agent(mock.url, tmp_path, _gate(tmp_path, answers))
    assert (await agent.run("go")).text == "done"
    assert (tmp_path / "b.txt").read_text() == "from the answer\n" and not (tmp_path / "a.txt").exists()
    [(name, args, context)] = answers.asked
    [use] = [b for b in agent.history[1]["content"] if b.get("type") == "tool_use"]
    assert (name, args) == ("Write", {"file_path": "a.txt", "content": "model\n"}) == ("Write", use["input"])
    assert context == AskContext(suggestions=("Write",), reason="", blocked_path=None, tool_use_id=use["id"])
    [result] = last_user_tool_results(mock.requests[1]["body"])
    assert result.get("is_error") is None
    validate_history(agent.history)


async def test_an_answers_input_is_checked_before_it_runs(tmp_path: Path) -> None:
    gate = _gate(tmp_path, Answers(PermissionAnswer(True, updated_input={"file_path": "x.txt"}),
                                   PermissionAnswer(True, updated_input={"file_path": ".env", "content": "K=v"})),
                 deny=("Edit(.env)",))
    missing = await gate.check(WRITE, ARGS["Write"])
    assert not missing.allowed and missing.reason.startswith("permission denied for Write: invalid updated input:")
    denied = await gate.check(WRITE, ARGS["Write"])
    assert denied == await _gate(tmp_path, None, deny=("Edit(.env)",)).check(WRITE, {"file_path": ".env",
                                                                                   "content": "K=v"})
    assert not denied.allowed and denied.updated_input is None


async def test_deny_with_a_message_is_what_the_model_reads(mock_model: Any, tmp_path: Path) -> None:
    answers = Answers(PermissionAnswer(False, message="use the Makefile target instead"))
    mock = mock_model([tool("Bash", command="touch nope"), say("understood")])
    outcome = await _agent(mock.url, tmp_path, _gate(tmp_path, answers)).run("go")
    assert outcome.text == "understood" and not (tmp_path / "nope").exists()
    [result] = last_user_tool_results(mock.requests[1]["body"])
    assert result.get("is_error") is True and result_text(result) == "use the Makefile target instead"
    assert [d["tool_name"] for d in outcome.denials] == ["Bash"]


async def test_deny_with_interrupt_stops_the_run_after_that_turn(mock_model: Any, tmp_path: Path) -> None:
    answers = Answers(PermissionAnswer(False, message="stop right there", interrupt=True))
    mock = mock_model([_two_calls({"command": "touch one"}, {"command": "touch two"}), say("never"),
                       say("after")])
    agent = _agent(mock.url, tmp_path, _gate(tmp_path, answers))
    outcome = await agent.run("go")
    assert outcome.stop == "permission_interrupt" and outcome.turns == 1
    assert len(mock.requests) == 1 and len(answers.asked) == 1  # the second call was neither asked nor run
    assert not (tmp_path / "one").exists() and not (tmp_path / "two").exists()
    results = [b for b in agent.history[-1]["content"] if b.get("type") == "tool_result"]
    assert [result_text(r) for r in results] == ["stop right there", STOPPED_TEXT]
    assert all(r.get("is_error") for r in results)
    validate_history(agent.history)
    assert (await agent.run("what now?")).text == "never"  # the next run goes on from a valid history
    validate_history(mock.requests[1]["body"]["messages"])


async def test_remembered_rules_spare_the_next_question(mock_model: Any, tmp_path: Path) -> None:
    answers = Answers(PermissionAnswer(True, remember=["Bash(touch:*)"]))
    mock = mock_model([tool("Bash", command="touch a"), tool("Bash", command="touch b"), say("ok")])
    gate = _gate(tmp_path, answers)
    await _agent(mock.url, tmp_path, gate).run("go")
    assert (tmp_path / "a").exists() and (tmp_path / "b").exists()
    assert len(answers.asked) == 1
    assert answers.asked[0][2].suggestions == ("Bash(touch:*)",)
    assert [r.describe() for r in gate.rules.allow] == ['"Bash(touch:*)" (allowed for this session)']


async def test_a_malformed_rule_to_remember_is_said_not_raised(tmp_path: Path) -> None:
    gate = _gate(tmp_path, Answers(PermissionAnswer(True, remember=["Bash(touch:*)", "Bash(unclosed"]), "no"))
    decision = await gate.check(WRITE, ARGS["Write"])
    assert decision.allowed and "nothing is remembered" in decision.reason and "Bash(unclosed" in decision.reason
    assert gate.rules.allow == ()
    assert not (await gate.check(WRITE, ARGS["Write"])).allowed  # asked again, and refused


async def test_string_answers_still_work_with_two_or_three_arguments(mock_model: Any, tmp_path: Path) -> None:
    asked: list[str] = []

    async def two(tool: Any, args: dict[str, Any]) -> str:
        asked.append(tool.name)
        return "no: run the tests first"

    mock = mock_model([tool("Bash", command="touch x"), say("ok")])
    await _agent(mock.url, tmp_path, _gate(tmp_path, two)).run("go")
    [result] = last_user_tool_results(mock.requests[1]["body"])
    assert result_text(result) == ("permission denied for Bash: the user declined this tool call and said: run the "
                                   "tests first")
    three = Answers("always")
    gate = _gate(tmp_path, three)
    assert (await gate.check(WRITE, ARGS["Write"])).allowed and (await gate.check(WRITE, ARGS["Write"])).allowed
    assert len(three.asked) == 1 and asked == ["Bash"]


async def test_the_context_says_why_and_bypass_never_asks(tmp_path: Path) -> None:
    answers = Answers(PermissionAnswer(True), PermissionAnswer(True))
    gate = _gate(tmp_path, answers, allow=("Bash",), ask_rules=("Bash(git push:*)",))
    assert (await gate.check(REAL["Bash"], {"command": "git push origin main"}, tool_use_id="toolu_7")).allowed
    outside = tmp_path.parent / "elsewhere.txt"
    assert (await gate.check(WRITE, {"file_path": str(outside), "content": "x"})).allowed
    (_, _, pushing), (_, _, writing) = answers.asked
    assert pushing.reason == 'rule "Bash(git push:*)" in rules requires asking first'
    assert pushing.tool_use_id == "toolu_7" and pushing.suggestions == ("Bash(git push:*)",)
    assert writing.blocked_path == str(outside) and str(outside) in writing.reason
    assert writing.suggestions == (f"Edit(/{outside})",)
    bypass = _gate(tmp_path, Answers(), mode="bypassPermissions")
    assert (await bypass.check(WRITE, {"file_path": str(outside), "content": "x"})).allowed  # nobody was asked


async def test_a_typed_answer_to_a_plan(tmp_path: Path) -> None:
    gate = _gate(tmp_path, Answers(PermissionAnswer(False, message="split step 2", interrupt=True),
                                   PermissionAnswer(True)), mode="plan")
    no = await gate.check(plan_tool(), PLAN)
    assert not no.allowed and no.interrupt and "did not approve the plan and said: split step 2" in no.reason
    assert gate.mode is PermissionMode.PLAN
    assert (await gate.check(plan_tool(), PLAN)).allowed and gate.mode is PermissionMode.DEFAULT


async def test_an_answer_that_is_neither_is_a_refusal(tmp_path: Path) -> None:
    decision = await _gate(tmp_path, Answers({"behavior": "allow"})).check(WRITE, ARGS["Write"])
    assert not decision.allowed and "gave no answer (got dict" in decision.reason
