"""Regression: prompt_toolkit removes its SIGINT handler after every prompt, which silently removed ours, so
Ctrl+C during a turn did nothing. The REPL now installs its handler per turn (and again after an in-turn prompt).

Driven through a real pseudo-terminal: the REPL runs under tmux against the mock model; Ctrl+C during a long
bash call must kill the command and leave a history the next request carries (interrupted tool_result)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from mini_claude.models.mock_server import MockModelServer
from mini_claude.models.scenario import parse_scenario
from tests.helpers import PYTHON, require_program, wait_until

pytestmark = pytest.mark.timeout(60)


def _wait_for(predicate: Callable[[], object], timeout: float = 10.0) -> bool:
    try:
        wait_until(predicate, "the terminal", within_s=timeout, poll_s=0.1)  # each poll runs tmux
    except AssertionError:
        return False
    return True


def test_ctrl_c_interrupts_a_turn_after_a_permission_prompt(tmp_path: Path) -> None:
    tmux = require_program("tmux", "drives the REPL in a real terminal")
    pidfile = tmp_path / "sleep.pid"
    turns = [{"content": [{"type": "tool_use", "name": "Bash",
                           "input": {"command": f"sleep 60 & echo $! > {pidfile}; sleep 61"}}]},
             {"content": [{"type": "text", "text": "after interrupt"}]}]
    session = f"mc-{tmp_path.parent.name}-{tmp_path.name}"
    with MockModelServer(parse_scenario({"turns": turns})) as mock:
        url = mock.start()
        cmd = (f"cd {tmp_path} && ANTHROPIC_BASE_URL={url} ANTHROPIC_API_KEY=x HOME={tmp_path} "
               f"MINI_CLAUDE_STATE_DIR={tmp_path / 'state'} {PYTHON} -m mini_claude")
        subprocess.run([tmux, "new-session", "-d", "-s", session, "-x", "120", "-y", "30", cmd], check=True)
        try:
            def screen() -> str:
                return subprocess.run([tmux, "capture-pane", "-p", "-t", session], capture_output=True,
                                      text=True).stdout

            def keys(*k: str) -> None:
                subprocess.run([tmux, "send-keys", "-t", session, *k], check=True)

            assert _wait_for(lambda: "/help for commands" in screen()), screen()
            keys("go long", "Enter")
            assert _wait_for(lambda: "[y/a/n]" in screen()), screen()
            keys("y", "Enter")
            assert _wait_for(pidfile.exists), screen()
            pid = int(pidfile.read_text())
            keys("C-c")
            assert _wait_for(lambda: "interrupted" in screen()), screen()
            assert _wait_for(lambda: not Path(f"/proc/{pid}").exists() or
                             "zombie" in Path(f"/proc/{pid}/status").read_text().lower()), "sleep survived"
            keys("next", "Enter")
            assert _wait_for(lambda: "after interrupt" in screen()), screen()
            last = mock.requests[-1]["body"]["messages"]
            results = [b for b in last[-1]["content"] if b.get("type") == "tool_result"]
            assert len(results) == 1 and results[0].get("is_error") is True
            assert json.dumps(last[-1]["content"]).count("next") == 1
        finally:
            subprocess.run([tmux, "kill-session", "-t", session], capture_output=True)
