"""The REPL's side of hooks, in a real terminal (tmux): `/hooks` lists each hook in force with the file it comes from
(a repository's only once trusted), `/clear` ends one session and starts the next (SessionEnd `clear`, SessionStart
`clear`), a permission question fires Notification, and leaving fires SessionEnd `prompt_input_exit`."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from mini_claude.models.mock_server import MockModelServer
from mini_claude.models.scenario import parse_scenario
from tests.helpers import PYTHON, require_program, wait_until
from tests.trust.test_trust_repl import Terminal

pytestmark = pytest.mark.timeout(120)

RECORD = "import json,sys; open(sys.argv[1],'a').write(json.dumps(json.load(sys.stdin))+chr(10))"


def payloads(log: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def _recording(log: Path) -> str:
    return f"{sys.executable} -c {json.dumps(RECORD)} {log}"


@pytest.fixture
def terminal(tmp_path: Path) -> Iterator[tuple[Terminal, Path]]:
    tmux = require_program("tmux", "drives the REPL in a real terminal")
    work, home = tmp_path / "work", tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    (work / ".claude").mkdir(parents=True)
    logs = tmp_path / "logs"
    logs.mkdir()
    (home / ".claude" / "settings.json").write_text(json.dumps({"hooks": {
        "SessionStart": [{"hooks": [{"type": "command", "command": _recording(logs / "start.log")}]}],
        "SessionEnd": [{"hooks": [{"type": "command", "command": _recording(logs / "end.log")}]}],
        "Notification": [{"hooks": [{"type": "command", "command": _recording(logs / "notify.log")}]}],
        "PreToolUse": [{"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "true",
                                                            "timeout": 5}]}]}}))
    (work / ".claude" / "settings.json").write_text(json.dumps({"hooks": {
        "PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "echo repo-hook"}]}]}}))
    mock = MockModelServer(parse_scenario({"turns": [
        {"content": [{"type": "tool_use", "name": "Bash", "input": {"command": "echo hi | cat"}}]},
        {"content": [{"type": "text", "text": "done"}]}]}))
    url = mock.start()
    session = f"mc-hooks-{tmp_path.parent.name}-{tmp_path.name}"
    cmd = (f"cd {work} && ANTHROPIC_BASE_URL={url} ANTHROPIC_API_KEY=x HOME={home} "
           f"MINI_CLAUDE_STATE_DIR={tmp_path / 'state'} {PYTHON} -m mini_claude")
    subprocess.run([tmux, "new-session", "-d", "-s", session, "-x", "220", "-y", "50", cmd], check=True)
    try:
        yield Terminal(tmux, session), logs
    finally:
        subprocess.run([tmux, "kill-session", "-t", session], capture_output=True)
        mock.stop()


def test_hooks_listing_clear_notification_and_exit(terminal: tuple[Terminal, Path]) -> None:
    term, logs = terminal
    term.wait_for(lambda s: "Do you trust the files in this folder?" in s, "the trust question")
    assert ".claude/settings.json hooks" in term.screen()
    term.keys("n", "Enter")
    term.wait_for(lambda s: "/help for commands" in s, "the prompt")
    wait_until(lambda: len(payloads(logs / "start.log")) == 1, "SessionStart ran", within_s=10)
    assert payloads(logs / "start.log")[0]["source"] == "startup"

    term.keys("/hooks", "Enter")
    term.wait_for(lambda s: "this folder is not trusted" in s, "the /hooks listing")
    screen = term.screen()
    assert "PreToolUse 'Edit|Write': `true` (timeout 5s) — ~/.claude/settings.json hooks.PreToolUse[0].hooks[0]" \
        in screen, screen
    assert "SessionEnd: `" in screen and "echo repo-hook" not in screen  # the repository's waits for trust

    term.keys("/clear", "Enter")
    term.wait_for(lambda s: "conversation cleared" in s, "/clear")
    wait_until(lambda: len(payloads(logs / "start.log")) == 2, "SessionStart after /clear", within_s=10)
    ended, started = payloads(logs / "end.log")[0], payloads(logs / "start.log")[1]
    assert ended["reason"] == "clear" and started["source"] == "clear"
    assert ended["session_id"] != started["session_id"]  # /clear starts a new session

    term.keys("run it", "Enter")
    term.wait_for(lambda s: "Allow it?" in s, "the permission question")
    wait_until(lambda: len(payloads(logs / "notify.log")) == 1, "Notification ran", within_s=10)
    note = payloads(logs / "notify.log")[0]
    assert note["hook_event_name"] == "Notification" and note["notification_type"] == "permission_prompt"
    assert note["message"] == "Claude needs your permission to use Bash"
    term.keys("n", "Enter")
    term.wait_for(lambda s: "What should the model do instead?" in s, "the follow-up")
    term.keys("Enter")
    term.wait_for(lambda s: "done" in s, "the answer")
    term.keys("C-d")
    wait_until(lambda: len(payloads(logs / "end.log")) == 2, "SessionEnd at exit", within_s=15)
    assert payloads(logs / "end.log")[1]["reason"] == "prompt_input_exit"
