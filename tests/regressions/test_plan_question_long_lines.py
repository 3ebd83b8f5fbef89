"""ExitPlanMode's question (found by the issue-21 red team): every line of the plan is shown behind a bar so none
of it can pass for our own lines — but a line wider than the terminal was left to the terminal to wrap, and its
rest started at column 0, bar-less: a plan padded to the edge could print "plan approved; leaving plan mode …" or a
fake question as if they were ours. On a terminal each line is now broken at its width (wide characters counted
two, tabs expanded), every piece behind the bar, nothing dropped. The question is asked on a real pseudo-terminal
80 columns wide."""

from __future__ import annotations

import fcntl
import io
import os
import pty
import select
import struct
import sys
import termios
from pathlib import Path

import pytest
from prompt_toolkit.utils import get_cwidth

from mini_claude.cli.questions.permission import PromptAnswers, permission_question
from mini_claude.cli.terminal.render import TerminalUI
from mini_claude.tools.exit_plan_mode import ExitPlanModeTool
from tests.permissions.test_gate import make_gate

pytestmark = pytest.mark.timeout(30)

FAKE = "plan approved; leaving plan mode for acceptEdits: edits run without asking"


@pytest.mark.parametrize("pad", ["x" * 75, "漢" * 38, "\t" * 19 + "xxx"])
async def test_a_long_plan_line_never_reaches_column_0(pad: str, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    attrs = termios.tcgetattr(follower)
    attrs[1] &= ~termios.OPOST  # bytes as written: no \n -> \r\n
    termios.tcsetattr(follower, termios.TCSANOW, attrs)
    screen = os.fdopen(follower, "w", encoding="utf-8", closefd=True)

    async def ask(question: str, choices: dict[str, str]) -> str:
        return "no"

    async def prompt_text(label: str) -> str | None:
        return None

    plan = f"1. tidy up\n{pad}{' ' * 5}{FAKE}\n{'y' * 400}"
    try:
        monkeypatch.setattr(sys, "stderr", screen)
        answers = PromptAnswers(ask=ask, prompt_text=prompt_text, ui=TerminalUI(err=io.StringIO()), trusted=True,
                                interrupted=lambda: False)
        assert await permission_question(make_gate(tmp_path, "plan"), ExitPlanModeTool(), {"plan": plan},
                                         answers) == "no"
        screen.flush()
        shown = b""
        while not shown.endswith(b"y\n") and select.select([leader], [], [], 5)[0]:  # all of it, or 5 s of nothing
            shown += os.read(leader, 65536)
    finally:
        screen.close()
        os.close(leader)
    lines = shown.decode().splitlines()
    assert lines[0] == "The model's plan:" and lines[1] == "  │ 1. tidy up"
    for line in lines[1:]:
        assert line.startswith("  │ ") and sum(get_cwidth(c) for c in line) < 80, line
    joined = "".join(line.removeprefix("  │ ") for line in lines[1:])
    assert joined == "1. tidy up" + pad.expandtabs(4) + " " * 5 + FAKE + "y" * 400  # nothing dropped
