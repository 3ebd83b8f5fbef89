"""Choices that stick (issue 29), in a real terminal (tmux) against the scripted mock model: the `/model` picker
chosen with the arrow keys and remembered at the next start, `/vim` (Esc, then `0` goes to the line's start) and
its `editorMode` at the next start, a `statusLine` command's output under the prompt (refreshed when the model
changes and after a turn), and a repository's `statusLine` that never runs until its folder is trusted."""

from __future__ import annotations

import json
import re
import shlex
import sys
from pathlib import Path

import pytest
from cli_helpers import Terminal, start_repl

from mini_claude.models.mock_server import MockModelServer
from mini_claude.models.scenario import parse_scenario

pytestmark = pytest.mark.timeout(120)
READY = "/help for commands"
QUESTION = "Do you trust the files in this folder?"
# a status line command reading Claude Code's JSON input: model name, project folder, tokens so far
SHOW = ("import json, sys; d = json.load(sys.stdin); "
        "print('\\033[36mSL\\033[0m', d['model']['display_name'], '|', d['context_window']['total_input_tokens'], "
        "'|', d['workspace']['project_dir'])")


def _mock(answers: int) -> MockModelServer:
    return MockModelServer(parse_scenario({"turns": [{"content": [{"type": "text", "text": f"answer-{i}"}]}
                                                     for i in range(answers)]}, source="test"))


def _user_settings(home: Path, data: dict[str, object]) -> Path:
    path = home / ".claude" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


def _quit(term: Terminal) -> None:
    term.keys("C-d")
    term.wait_for(lambda s: "[exit 0]" in s, "the REPL to exit")


def test_the_model_picker_chooses_with_arrows_and_the_next_start_uses_it(tmp_path: Path) -> None:
    mock = _mock(4)
    url = mock.start()
    work = tmp_path / "work"
    work.mkdir()
    settings = _user_settings(tmp_path, {"theme": "dark"})
    term = start_repl(tmp_path, work, url, "model1")
    try:
        term.wait_for(lambda s: READY in s and "model claude-opus-5-5" in s, "the prompt")
        term.enter("/model")
        term.wait_for(lambda s: "Select model" in s and "❯ 1. Default" in s, "the picker, Default current")
        screen = term.screen()
        assert "sonnet    claude-sonnet-5-5 · Sonnet 5.5, 1000k context, 128k output · $2/$10 per Mtok" in screen
        term.keys("Down")
        term.wait_for(lambda s: "❯ 2. opus" in s, "the cursor on opus")
        term.keys("Down")
        term.wait_for(lambda s: "❯ 3. sonnet" in s, "the cursor on sonnet")
        term.keys("Enter")
        term.wait_for(lambda s: "model: claude-sonnet-5-5 (sonnet)" in s and "remembered as \"model\"" in s,
                      "the switch")
        assert json.loads(settings.read_text()) == {"theme": "dark", "model": "sonnet"}
        term.enter("hello")
        term.wait_for(lambda s: "answer-0" in s, "the answer")
        assert mock.requests[-1]["body"]["model"] == "claude-sonnet-5-5"
        _quit(term)
    finally:
        term.close()
    again = start_repl(tmp_path, work, url, "model2")
    try:
        again.wait_for(lambda s: READY in s and "model claude-sonnet-5-5" in s, "the remembered model at start")
        again.enter("hello again")
        again.wait_for(lambda s: "answer-1" in s, "the answer")
        assert mock.requests[-1]["body"]["model"] == "claude-sonnet-5-5"
        again.enter("/model")  # the saved choice is the current row; Esc keeps it
        again.wait_for(lambda s: "❯ 3. sonnet" in s, "the picker on sonnet")
        again.keys("Escape")
        again.wait_for(lambda s: "kept claude-sonnet-5-5" in s, "the model kept")
        _quit(again)
    finally:
        again.close()
        mock.stop()


def test_vim_keys_toggle_and_are_remembered(tmp_path: Path) -> None:
    mock = _mock(1)
    url = mock.start()
    work = tmp_path / "work"
    work.mkdir()
    term = start_repl(tmp_path, work, url, "vim1")
    try:
        term.wait_for(lambda s: READY in s, "the prompt")
        term.enter("/vim")
        term.wait_for(lambda s: "Editor mode: vim" in s and "-- INSERT --" in s, "vi keys on")
        term.enter("/vim")
        term.wait_for(lambda s: "Editor mode: normal" in s, "vi keys off")
        term.wait_for(lambda s: "-- INSERT --" not in s.rsplit("Editor mode: normal", 1)[-1],
                      "no mode shown without vi keys")
        term.enter("/vim")
        term.wait_for(lambda s: s.count("Editor mode: vim") == 2, "vi keys on again")
        _quit(term)
    finally:
        term.close()
    settings = json.loads((tmp_path / ".claude" / "settings.json").read_text())
    assert settings == {"editorMode": "vim"}  # where Claude Code 2.1.328's /config puts it
    again = start_repl(tmp_path, work, url, "vim2")
    try:
        again.wait_for(lambda s: READY in s and "-- INSERT --" in s, "vi keys at the next start")
        again.keys("-l", "abc def")
        again.wait_for(lambda s: "> abc def" in s, "the typed text")
        again.keys("Escape")
        again.wait_for(lambda s: "-- NORMAL --" in s, "normal mode")
        again.keys("0")
        again.keys("i")
        again.wait_for(lambda s: "-- INSERT --" in s, "insert mode")
        again.keys("-l", "X")
        again.wait_for(lambda s: "> Xabc def" in s, "X typed at the line's start")
        again.keys("Enter")
        again.wait_for(lambda s: "answer-0" in s, "the answer")
        assert mock.requests[-1]["body"]["messages"][-1]["content"][-1]["text"] == "Xabc def"
        _quit(again)
    finally:
        again.close()
        mock.stop()


def test_a_status_line_command_shows_its_line_and_follows_the_session(tmp_path: Path) -> None:
    mock = _mock(1)
    url = mock.start()
    work = tmp_path / "work"
    work.mkdir()
    command = f"{shlex.quote(sys.executable)} -c {shlex.quote(SHOW)}"
    _user_settings(tmp_path, {"statusLine": {"type": "command", "command": command, "padding": 0}})
    term = start_repl(tmp_path, work, url, "status")
    try:  # the user's own command runs in this folder: it waits for the folder's trust
        term.wait_for(lambda s: QUESTION in s and "your statusLine command" in s, "the trust question naming it")
        term.keys("y", "Enter")
        term.wait_for(lambda s: READY in s and f"SL Opus 5.5 | 0 | {work}" in s, "the status line")
        assert "\\x1b" not in term.screen() and "[36m" not in term.screen()  # the colour is drawn, not printed
        term.enter("/model haiku")
        term.wait_for(lambda s: f"SL Haiku 5.5 | 0 | {work}" in s, "the status line after /model")
        term.enter("hello")
        term.wait_for(lambda s: "answer-0" in s, "the answer")
        term.wait_for(lambda s: re.search(r"SL Haiku 5\.5 \| [1-9][0-9]* \|", s) is not None,
                      "the status line after the turn, with the tokens used")
        _quit(term)
    finally:
        term.close()
        mock.stop()


def test_an_untrusted_repositorys_status_line_never_runs(tmp_path: Path) -> None:
    mock = _mock(1)
    url = mock.start()
    work = tmp_path / "work"
    (work / ".claude").mkdir(parents=True)
    marker = tmp_path / "REPO-STATUS-RAN"
    (work / ".claude" / "settings.json").write_text(json.dumps(
        {"statusLine": {"type": "command", "command": f"touch {marker}; echo REPO-SL"}}))
    user_marker = tmp_path / "USER-STATUS-RAN"
    _user_settings(tmp_path, {"statusLine": {"type": "command", "command": f"touch {user_marker}; echo USER-SL"}})
    term = start_repl(tmp_path, work, url, "untrusted")
    try:
        term.wait_for(lambda s: QUESTION in s and "statusLine" in s, "the trust question naming statusLine")
        term.keys("n", "Enter")
        # neither runs: the user's own command would run git (and so the folder's .git/config) here too
        term.wait_for(lambda s: READY in s and "statusLine: not run in an untrusted folder" in s,
                      "the user's status line held back")
        term.enter("/status")
        term.wait_for(lambda s: "permission mode:" in s, "a slash command (which refreshes a status line)")
        assert "REPO-SL" not in term.screen() and "USER-SL" not in term.screen()
        assert not marker.exists() and not user_marker.exists()
        _quit(term)
    finally:
        term.close()
    assert not marker.exists()
    trusted = start_repl(tmp_path, work, url, "trusted")
    try:
        trusted.wait_for(lambda s: QUESTION in s, "the question again")
        trusted.keys("y", "Enter")
        trusted.wait_for(lambda s: READY in s and "REPO-SL" in s, "the repository's status line, once trusted")
        assert marker.exists()
        _quit(trusted)
    finally:
        trusted.close()
        mock.stop()
