"""The REPL's `/tasks` (alias `/bashes`) in a real terminal (tmux) against the mock model: the background commands
the model started are listed with id, status, run time and command (an escape sequence in the command shown as
text, never obeyed); `/tasks stop ID` ends one, its process group gone; an unknown id is named; leaving the REPL
stops the rest, and the model hears of the one the user stopped on its next request."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import start_repl

from mini_claude.models.mock_server import MockModelServer
from mini_claude.models.scenario import parse_scenario
from mini_claude.tools.shell import group_alive
from tests.helpers import read_pidfile, wait_until
from tests.integration.conftest import answer, tool_use

pytestmark = pytest.mark.timeout(90)

FIRST = "echo $$ > one.pid; sleep 300; printf 'A\\033[2JB'"
SECOND = "echo $$ > two.pid; sleep 300"


def test_tasks_lists_stops_and_exit_stops_the_rest(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    mock = MockModelServer(parse_scenario({"turns": [
        tool_use("Bash", {"command": FIRST, "run_in_background": True}),
        tool_use("Bash", {"command": SECOND, "run_in_background": True}),
        answer("BOTH-STARTED"),
        answer("HEARD-IT"),
    ]}, source="test"))
    term = start_repl(tmp_path, work, mock.start(), "tasks", "--allowedTools", "Bash")
    try:
        term.wait_for(lambda s: "/help for commands" in s, "the prompt")
        term.enter("start two sleepers")
        term.wait_for(lambda s: "BOTH-STARTED" in s, "the model's answer")
        one, two = read_pidfile(work / "one.pid"), read_pidfile(work / "two.pid")

        term.enter("/tasks")
        term.wait_for(lambda s: "> /tasks" in s and "bash_2" in s.split("> /tasks")[-1], "the listing")
        listing = " ".join(term.screen().split("> /tasks")[-1].split())  # one line, however the terminal wrapped
        assert "bash_1 running" in listing and "bash_2 running" in listing
        assert "s echo $$ > one.pid; sleep 300; printf 'A\\033[2JB' bash_2" in listing
        assert "\x1b" not in term.screen()

        term.enter("/bashes stop bash_9")
        term.wait_for(lambda s: "No background task with ID 'bash_9'" in s, "the unknown id named")
        term.enter("/tasks stop bash_1")
        term.wait_for(lambda s: "stopped bash_1" in s, "the stop")
        wait_until(lambda: not group_alive(one), "the first group to be gone", within_s=10)
        assert group_alive(two)
        term.enter("/tasks")
        term.wait_for(lambda s: "bash_1 stopped by the user" in " ".join(s.split("> /tasks")[-1].split()),
                      "the new status")

        term.enter("anything new?")
        term.wait_for(lambda s: "HEARD-IT" in s, "the next answer")
        texts = [b["text"] for b in mock.requests[-1]["body"]["messages"][-1]["content"] if b.get("type") == "text"]
        assert len(texts) == 2 and texts[0] == "anything new?"
        assert texts[1].startswith("<background-task-ended>\nBackground task bash_1 (`echo $$ > one.pid; sleep 300; "
                                   "printf 'A\\033[2JB'`) was stopped by the user after ")

        term.enter("/exit")
        term.wait_for(lambda s: "[exit 0]" in s, "the REPL to end")
        wait_until(lambda: not group_alive(two), "the second group to be gone", within_s=10)
    finally:
        term.close()
        mock.stop()
