"""Issue 21, plan approval, the question's part: ExitPlanMode's question shows the plan whole (a long plan is not
cut), every line behind a bar with control characters as escapes (a crafted plan cannot draw a fake question or
rewrite the real one), then asks yes / yes and auto-accept edits / no; "no" asks what should change. No "always".
Exact lines."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest

from mini_claude.cli.questions.permission import (
    PLAN_FEEDBACK,
    PLAN_QUESTION,
    PromptAnswers,
    permission_question,
    plan_lines,
)
from mini_claude.cli.terminal.render import TerminalUI
from mini_claude.permissions.gate import PLAN_ACCEPT_EDITS
from mini_claude.tools.exit_plan_mode import ExitPlanModeTool
from tests.permissions.test_gate import make_gate


class ScriptedUser:
    """Answers the question by key, then the follow-up line; records what was asked."""

    def __init__(self, key: str, line: str | None = None) -> None:
        self.key, self.line = key, line
        self.questions: list[tuple[str, dict[str, str]]] = []
        self.lines: list[str] = []
        self.err = io.StringIO()

    async def ask(self, question: str, choices: dict[str, str]) -> str:
        self.questions.append((question, choices))
        return choices[self.key]

    async def prompt_text(self, label: str) -> str | None:
        self.lines.append(label)
        return self.line

    def answers(self) -> PromptAnswers:
        return PromptAnswers(ask=self.ask, prompt_text=self.prompt_text, ui=TerminalUI(err=self.err, out=self.err),
                             trusted=True, interrupted=lambda: False)


def test_the_plan_is_shown_whole_behind_a_bar_with_controls_as_escapes() -> None:
    crafted = "# Plan\r\x1b[2K\x1b[1A\nProceed with this plan? [y/a/n] \u202eevil\n\n- step"
    assert plan_lines(crafted) == [
        "The model's plan:",
        "  │ # Plan\\x0d\\x1b[2K\\x1b[1A",
        "  │ Proceed with this plan? [y/a/n] \\u202eevil",
        "  │ ",
        "  │ - step",
    ]
    long = "\n".join(f"step {k}: " + "x" * 300 for k in range(500))
    shown = plan_lines(long)
    assert len(shown) == 501 and shown[-1] == "  │ step 499: " + "x" * 300  # never cut


@pytest.mark.parametrize(("key", "line", "expected"), [
    ("y", None, "yes"), ("a", None, PLAN_ACCEPT_EDITS), ("n", "split step 2 ", "no: split step 2"),
    ("n", "", "no"), ("n", None, "no")])
async def test_the_choices_and_the_answer(tmp_path: Path, capsys: pytest.CaptureFixture[str], key: str,
                                          line: str | None, expected: str) -> None:
    user = ScriptedUser(key, line)
    args: dict[str, Any] = {"plan": "1. edit app.py"}
    answer = await permission_question(make_gate(tmp_path, "plan"), ExitPlanModeTool(), args, user.answers())
    assert answer == expected
    assert user.questions == [(PLAN_QUESTION, {"y": "yes", "a": PLAN_ACCEPT_EDITS, "n": "no"})]
    assert PLAN_QUESTION == "Proceed with this plan? y = yes, a = yes and auto-accept edits, n = no, keep planning"
    assert "always" not in PLAN_QUESTION
    assert capsys.readouterr().err.splitlines() == ["The model's plan:", "  │ 1. edit app.py"]
    assert user.lines == ([PLAN_FEEDBACK] if key == "n" else [])
    said = user.err.getvalue()
    if key == "y":
        assert "plan approved; leaving plan mode for default: edits ask first" in said
    elif key == "a":
        assert "plan approved; leaving plan mode for acceptEdits: edits run without asking" in said
    else:
        assert "plan approved" not in said


async def test_ctrl_c_at_the_question_is_a_no(tmp_path: Path) -> None:
    user = ScriptedUser("y")
    answers = user.answers()
    answers.interrupted = lambda: True
    assert await permission_question(make_gate(tmp_path, "plan"), ExitPlanModeTool(), {"plan": "p"}, answers) == "no"


async def test_no_always_is_offered_when_no_rule_can_name_the_call(tmp_path: Path) -> None:
    # security review of issue 21: for a WebFetch of [::1] the question read "don't ask again for ," and "a" saved
    # nothing usable
    from mini_claude.tools.web_fetch import WebFetchTool

    user = ScriptedUser("y")
    gate = make_gate(tmp_path, "default")
    args = {"url": "http://[::1]:8080/", "prompt": "summarise"}
    assert gate.always_rules(WebFetchTool(), args) == []
    assert await permission_question(gate, WebFetchTool(), args, user.answers()) == "yes"
    [(question, choices)] = user.questions
    assert choices == {"y": "yes", "n": "no"} and "don't ask again" not in question
