"""Issue 21, REPL habits, in a real terminal (tmux) against the mock model: `!cmd` runs through the gate (a deny rule
refuses it with its reason, what the gate asks about is asked) and its output is shown and reaches the model in
Claude Code's `<bash-input>` / `<bash-stdout>` / `<bash-stderr>` shape; a backslash then Enter makes one two-line
message, and so does a multi-line paste; `# note` asks which memory file; Esc interrupts a slow turn (the history
stays valid, what was typed meanwhile waits at the prompt); Ctrl+C stops a long `!` command, its process group gone, nothing sent and its
line back at the prompt; a `!` command's output whose model request failed goes with the next prompt."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import Terminal, start_repl

from mini_claude.models.mock_server import MockModelServer
from mini_claude.models.scenario import parse_scenario
from mini_claude.tools.shell import group_alive
from tests.helpers import wait_until

pytestmark = pytest.mark.timeout(90)


def _user_texts(request: dict[str, Any]) -> list[str]:
    """The text blocks of the request's last (user) message."""
    return [b["text"] for b in request["body"]["messages"][-1]["content"] if b.get("type") == "text"]


def _start(tmp_path: Path, turns: list[dict[str, Any]], name: str) -> tuple[Terminal, MockModelServer, Path]:
    (tmp_path / ".claude").mkdir()  # HOME is tmp_path: the user's settings
    (tmp_path / ".claude" / "settings.json").write_text(json.dumps({"permissions": {"deny": ["Bash(rm:*)"]}}))
    work = tmp_path / "work"
    work.mkdir()
    mock = MockModelServer(parse_scenario({"turns": turns}, source="test"))
    term = start_repl(tmp_path, work, mock.start(), name)
    term.wait_for(lambda s: "/help for commands" in s, "the prompt")
    return term, mock, work


def test_bang_runs_through_the_gate_and_the_model_gets_its_output(tmp_path: Path) -> None:
    term, mock, work = _start(tmp_path, [{"content": [{"type": "text", "text": "SAW-THE-OUTPUT"}]},
                                         {"content": [{"type": "text", "text": "TWO-LINES-OK"}]},
                                         {"content": [{"type": "text", "text": "PASTE-OK"}]}], "bang")
    try:
        (work / "keep.txt").write_text("kept")
        term.enter("!rm -f keep.txt")
        term.wait_for(lambda s: "not run:" in s, "the refusal")
        assert 'denied by rule "Bash(rm:*)" in ~/.claude/settings.json' in term.screen()
        assert (work / "keep.txt").exists() and mock.requests == []

        line = "echo hello-bash; printf 'A\\033[2JB\\n'; echo 'oops <&>' >&2; exit 3"
        term.enter(f"!{line}")
        term.wait_for(lambda s: "Run a shell command: echo hello-bash" in s and s.rstrip().endswith("[y/a/n]"),
                      "the permission question")
        term.keys("y", "Enter")
        term.wait_for(lambda s: "SAW-THE-OUTPUT" in s, "the model's answer to the output")
        screen = term.screen()
        assert "\nhello-bash\nAB\n" in screen  # shown through `clean`: the clear-screen was not obeyed
        assert "oops <&>" in screen and "Exit code 3" in screen
        [request] = mock.requests
        assert _user_texts(request) == [f"<bash-input>{line}</bash-input>",
                                        "<bash-stdout>hello-bash\nA\x1b[2JB</bash-stdout>"
                                        "<bash-stderr>oops &lt;&amp;&gt;\nExit code 3</bash-stderr>"]

        term.enter("!")  # `!` alone runs nothing and sends nothing
        term.wait_for(lambda s: "! runs a shell command" in s, "the hint")

        term.enter("first line\\")  # a backslash then Enter: the line goes on
        term.enter("second line")
        term.wait_for(lambda s: "TWO-LINES-OK" in s, "the answer to the two-line message")
        assert len(mock.requests) == 2
        assert _user_texts(mock.requests[1]) == ["first line\nsecond line"]

        buffer = f"paste-{tmp_path.name}"  # a multi-line paste (bracketed) still makes one message
        subprocess.run([term.tmux, "set-buffer", "-b", buffer, "pasted one\npasted two"], check=True, timeout=10)
        subprocess.run([term.tmux, "paste-buffer", "-d", "-p", "-r", "-b", buffer, "-t", term.session], check=True,
                       timeout=10)
        term.keys("Enter")
        term.wait_for(lambda s: "PASTE-OK" in s, "the answer to the pasted message")
        assert _user_texts(mock.requests[2]) == ["pasted one\npasted two"]

        term.enter("# prefer tabs")
        term.wait_for(lambda s: s.rstrip().endswith("[p/l/u/n]"), "which memory file")
        assert "l = project-local memory (./CLAUDE.local.md" in term.screen()
        term.keys("Enter")  # no silent default: asked again
        term.wait_for(lambda s: s.count("Add the note to which memory file?") == 2, "the question again")
        term.keys("u", "Enter")
        term.wait_for(lambda s: "(user memory)" in s, "the note saved")
        assert (tmp_path / ".claude" / "CLAUDE.md").read_text() == "- prefer tabs\n"
        assert not (work / "CLAUDE.md").exists() and not (work / "CLAUDE.local.md").exists()
        term.keys("C-d")
    finally:
        term.close()
        mock.stop()


def test_esc_interrupts_a_turn_and_ctrl_c_a_long_bang_command(tmp_path: Path) -> None:
    term, mock, work = _start(tmp_path, [{"content": [{"type": "text", "text": "NEVER-SHOWN"}], "delay_ms": 30000},
                                         {"content": [{"type": "text", "text": "AFTER-ESC"}]},
                                         {"error": {"status": 400, "message": "MOCK-REFUSED"}},
                                         {"content": [{"type": "text", "text": "AFTER-FAILURE"}]}], "esc")
    try:
        term.enter("a slow question")
        wait_until(lambda: len(mock.requests) == 1, "the slow request", within_s=20)
        term.keys("-l", "typed meanwhile")
        term.keys("Escape")
        term.wait_for(lambda s: "interrupted" in s and s.rstrip().endswith("> typed meanwhile"),
                      "the interruption, and the typed text waiting at the prompt")
        term.keys("Enter")
        term.wait_for(lambda s: "AFTER-ESC" in s, "the next answer")
        assert "NEVER-SHOWN" not in term.screen()
        assert _user_texts(mock.requests[1]) == ["a slow question", "typed meanwhile"]  # a valid history

        term.enter("!echo $$ > group.txt; sleep 60")
        term.wait_for(lambda s: s.rstrip().endswith("[y/a/n]"), "the permission question")
        term.keys("y", "Enter")
        wait_until(lambda: (work / "group.txt").is_file() and (work / "group.txt").read_text().strip(),
                   "the command to start", within_s=20)
        group = int((work / "group.txt").read_text())
        term.keys("C-c")
        term.wait_for(lambda s: s.count("interrupted") == 2 and s.rstrip().endswith("> !echo $$ > group.txt; sleep 60"),
                      "the command stopped, its line back at the prompt (as in Claude Code)")
        wait_until(lambda: not group_alive(group), "its process group to be gone", within_s=10)
        assert len(mock.requests) == 2  # an interrupted `!` sends nothing

        term.keys("C-u")
        term.enter("!echo kept-output | cat")  # (a bare `echo` runs unasked: gate step 7b)
        term.wait_for(lambda s: s.rstrip().endswith("[y/a/n]"), "the permission question")
        term.keys("y", "Enter")
        term.wait_for(lambda s: "MOCK-REFUSED" in s, "the failed request")
        term.enter("and now")
        term.wait_for(lambda s: "AFTER-FAILURE" in s, "the answer")
        assert _user_texts(mock.requests[3])[-3:] == [  # the output was not lost with the failed request
            "<bash-input>echo kept-output | cat</bash-input>",
            "<bash-stdout>kept-output</bash-stdout><bash-stderr></bash-stderr>", "and now"]
        term.keys("C-d")
    finally:
        term.close()
        mock.stop()
