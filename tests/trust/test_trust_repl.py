"""The REPL's trust question, in a real terminal (tmux): asked once in an untrusted folder whose files would widen
something; "y" is remembered, "n" runs with them ignored and asks again next time."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from mini_claude.models.mock_server import MockModelServer
from mini_claude.models.scenario import parse_scenario
from tests.helpers import PYTHON, require_program, wait_until

pytestmark = pytest.mark.timeout(90)
QUESTION = "Do you trust the files in this folder?"
TMUX_POLL_S = 0.1  # each poll runs tmux


class Terminal:
    def __init__(self, tmux: str, session: str) -> None:
        self.tmux, self.session = tmux, session

    def screen(self) -> str:
        return subprocess.run([self.tmux, "capture-pane", "-p", "-J", "-t", self.session], capture_output=True,
                              text=True).stdout

    def keys(self, *keys: str) -> None:
        subprocess.run([self.tmux, "send-keys", "-t", self.session, *keys], check=True)

    def wait_for(self, condition: Callable[[str], bool], what: str) -> None:
        try:
            wait_until(lambda: condition(self.screen()), what, within_s=20, poll_s=TMUX_POLL_S)
        except AssertionError as exc:
            raise AssertionError(f"{exc}\n--- screen ---\n{self.screen()}") from None


@pytest.fixture
def repl(tmp_path: Path) -> Iterator[Callable[[str], Terminal]]:
    tmux = require_program("tmux", "drives the REPL in a real terminal")
    work = tmp_path / "work"
    (work / ".claude").mkdir(parents=True)
    (work / ".claude" / "settings.json").write_text(json.dumps({"permissions": {"allow": ["Bash"]}}))
    mock = MockModelServer(parse_scenario({"turns": [{"content": [{"type": "text", "text": "ok"}]}] * 4}))
    url = mock.start()
    sessions: list[str] = []

    def start(name: str) -> Terminal:
        session = f"mc-trust-{tmp_path.parent.name}-{tmp_path.name}-{name}"
        cmd = (f"cd {work} && ANTHROPIC_BASE_URL={url} ANTHROPIC_API_KEY=x HOME={tmp_path} "
               f"MINI_CLAUDE_STATE_DIR={tmp_path / 'state'} {PYTHON} -m mini_claude")
        subprocess.run([tmux, "new-session", "-d", "-s", session, "-x", "200", "-y", "40", cmd], check=True)
        sessions.append(session)
        return Terminal(tmux, session)

    yield start
    for session in sessions:
        subprocess.run([tmux, "kill-session", "-t", session], capture_output=True)
    mock.stop()


def test_no_is_not_remembered_and_yes_is(repl: Callable[[str], Terminal], tmp_path: Path) -> None:
    store = tmp_path / "state" / "trusted-folders.json"
    term = repl("no")
    term.wait_for(lambda s: QUESTION in s, "the trust question")
    assert ".claude/settings.json permissions.allow" in term.screen()
    term.keys("n", "Enter")
    term.wait_for(lambda s: "is not trusted: ignored .claude/settings.json permissions.allow" in s, "the warning")
    term.wait_for(lambda s: "/help for commands" in s, "the prompt")
    assert not store.exists()
    term.keys("C-d")

    term = repl("yes")
    term.wait_for(lambda s: QUESTION in s, "the question again")
    term.keys("y", "Enter")
    term.wait_for(lambda s: "/help for commands" in s, "the prompt")
    assert "not trusted" not in term.screen()
    assert str((tmp_path / "work").resolve()) in json.loads(store.read_text())["folders"]
    term.keys("C-d")

    term = repl("again")
    term.wait_for(lambda s: "/help for commands" in s, "the prompt without a question")
    assert QUESTION not in term.screen()
