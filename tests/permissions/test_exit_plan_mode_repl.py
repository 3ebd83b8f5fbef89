"""Issue 21, acceptance (the plan approval step), in a real terminal (tmux) against the scripted mock model: in plan
mode the model reads, then presents its plan with ExitPlanMode; the plan is shown whole (a control character in it
as an escape) with the yes / yes and auto-accept edits / no question. "n" with what should change: plan mode stays,
the model reads the user's words and its next write is still refused. "a": the prompt leaves `plan>` for
`accept-edits>` and the write runs without a question."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from mini_claude.models.mock_server import MockModelServer
from mini_claude.permissions.gate import PLAN_MODE_TEXT
from mini_claude.tools.exit_plan_mode import APPROVED_TEXT
from tests.integration.conftest import result_text, tool_results
from tests.integration.test_host_repl import Terminal, repl

__all__ = ["repl"]  # the fixture, imported for this module


def call(name: str, **args: str) -> dict[str, object]:
    return {"content": [{"type": "tool_use", "name": name, "input": args}]}


def say(text: str) -> dict[str, object]:
    return {"content": [{"type": "text", "text": text}]}


def test_the_plan_is_shown_and_only_the_users_yes_ends_plan_mode(
        repl: Callable[..., tuple[Terminal, MockModelServer]], tmp_path: Path) -> None:
    app = tmp_path / "work" / "app.py"
    app.write_text("print('hello')\n")
    write = call("Write", file_path="app.py", content="print('bonjour')\n")
    term, mock = repl([
        call("Read", file_path="app.py"),
        call("ExitPlanMode", plan="# Greeting\n1. replace hello with bonjour\x1b[2J\n2. PLAN-END-ONE"),
        write,
        say("STILL-PLANNING"),
        call("ExitPlanMode", plan="# Greeting\n1. replace hello with bonjour, keeping the quotes"),
        write,
        say("DONE-WRITING"),
    ], {})
    term.wait_for(lambda s: "/help for commands" in s, "the prompt")
    term.keys("BTab", "BTab")  # Shift+Tab twice: plan mode
    term.wait_for(lambda s: "\nplan>" in s, "the plan mode prompt")
    term.enter("change the greeting")
    term.wait_for(lambda s: "Proceed with this plan?" in s, "the plan question")
    screen = term.screen()
    assert "│ # Greeting" in screen and "│ 1. replace hello with bonjour\\x1b[2J" in screen
    assert "│ 2. PLAN-END-ONE" in screen  # whole, the escape shown, not obeyed (the screen was not cleared)
    assert "y = yes, a = yes and auto-accept edits, n = no, keep planning" in screen
    term.keys("n", "Enter")
    term.wait_for(lambda s: "What should change in the plan?" in s, "the follow-up")
    term.enter("keep the quotes")
    term.wait_for(lambda s: "STILL-PLANNING" in s, "the model's next answer")
    declined, refused = tool_results(mock)[1:3]
    assert result_text(declined) == ("permission denied for ExitPlanMode: the user did not approve the plan and "
                                     "said: keep the quotes; plan mode stays on: keep planning, and call ExitPlanMode "
                                     "again with the revised plan")
    assert result_text(refused) == f"permission denied for Write: {PLAN_MODE_TEXT}"
    assert app.read_text() == "print('hello')\n"
    term.wait_for(lambda s: s.rstrip().endswith("plan>"), "the prompt back, still in plan mode")

    term.enter("go on")
    term.wait_for(lambda s: s.count("Proceed with this plan?") == 2, "the second plan question")
    term.keys("a", "Enter")
    term.wait_for(lambda s: "DONE-WRITING" in s, "the write")
    assert app.read_text() == "print('bonjour')\n"
    approved, written = tool_results(mock)[3:5]
    assert result_text(approved) == APPROVED_TEXT and not approved.get("is_error")
    assert not written.get("is_error")
    screen = term.screen()
    assert "plan approved; leaving plan mode for acceptEdits" in screen
    assert screen.count("Allow it?") == 0  # the write ran without a question: the user chose auto-accept edits
    term.wait_for(lambda s: s.rstrip().endswith("accept-edits>"), "the prompt back, in acceptEdits")
    term.keys("C-d")
