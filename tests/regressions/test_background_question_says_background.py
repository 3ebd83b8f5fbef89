"""The REPL's question for a `Bash` call with `run_in_background` says that the command will keep running after the
answer (the gate's question must show the truth): before, it read "Run a shell command: …" exactly as for a
foreground call, which ends within its two-minute timeout, while a background one may run for two hours (a
listener, a watcher) and is only reported later. Found by the hostile review of issue 26."""

from __future__ import annotations

from pathlib import Path

from mini_claude.cli.questions.permission import describe_call


def test_the_question_for_a_background_command_says_it_keeps_running(tmp_path: Path) -> None:
    args = {"command": "nc -l 4444\u202e", "run_in_background": True}
    assert describe_call("Bash", args, tmp_path) == [
        "Run a shell command in the background (it keeps running until it ends, is stopped or the session ends): "
        "nc -l 4444\\u202e"]
    assert describe_call("Bash", {**args, "run_in_background": False}, tmp_path) == [
        "Run a shell command: nc -l 4444\\u202e"]
