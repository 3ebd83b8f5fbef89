"""Issue 21, acceptance 1 (the todo list shown, REPL): a TodoWrite call is shown in a real terminal (tmux) as the whole
checklist; a custom command that needs approval stops with its message and the REPL goes on."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from mini_claude.models.mock_server import MockModelServer
from tests.integration.test_host_repl import Terminal, repl, text_of
from tests.todo.test_todo import PLAN

__all__ = ["repl"]  # the fixture, imported for this module


def test_the_repl_shows_the_checklist(repl: Callable[..., tuple[Terminal, MockModelServer]]) -> None:
    many = [*PLAN, *({"content": f"Step {k}", "status": "pending", "activeForm": f"Doing step {k}"}
                     for k in range(4, 9))]
    term, mock = repl([{"content": [{"type": "tool_use", "name": "TodoWrite", "input": {"todos": many}}]},
                       {"content": [{"type": "text", "text": "PLANNED-OK"}]}], {})
    term.wait_for(lambda s: "/help for commands" in s, "the prompt")
    term.enter("make a plan")
    term.wait_for(lambda s: "PLANNED-OK" in s, "the answer")
    screen = term.screen()
    lines = [line.strip() for line in screen.splitlines()]
    start = next(k for k, line in enumerate(lines) if line.endswith("Todo list (1/8 done):"))
    assert lines[start + 1:start + 9] == ["☒ Read the code", "◼ Fix the bug (Fixing the bug)", "☐ Run the tests",
                                          *(f"☐ Step {k}" for k in range(4, 9))]  # whole, not a 4-line preview
    assert "Todos have been modified successfully" not in screen  # the note is the model's, not shown
    assert "Todos have been modified successfully" in text_of(mock.requests[1])  # ...which the model does get
    term.keys("C-d")


def test_a_stopped_command_keeps_the_repl(repl: Callable[..., tuple[Terminal, MockModelServer]],
                                          tmp_path: Path) -> None:
    folder = tmp_path / "work" / ".claude" / "commands"
    folder.mkdir(parents=True)
    (folder / "c.md").write_text("Go: !`touch made`\n")
    term, mock = repl([{"content": [{"type": "text", "text": "STILL-HERE"}]}], {})
    term.wait_for(lambda s: "/help for commands" in s, "the prompt")
    term.enter("/c")  # its `!` line is asked about in the REPL; "no" stops the command whole
    term.wait_for(lambda s: "Run a shell command: touch made" in s and "Allow it?" in s, "the question")
    term.keys("n", "Enter")
    term.wait_for(lambda s: "What should the model do instead?" in s, "the follow-up")
    term.keys("Enter")
    term.wait_for(lambda s: "/c: stopped, nothing was run or sent: !`touch made`" in s, "the stop")
    assert not (tmp_path / "work" / "made").exists() and mock.requests == []
    term.enter("hello")
    term.wait_for(lambda s: "STILL-HERE" in s, "the next answer")
    term.keys("C-d")
